// The Idempotency-Key header as a request sends it (IETF httpapi-idempotency-key-header), and the
// fingerprint of the request the key is bound to.
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './problem.ts';

const HEADER = 'idempotency-key';
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

function headerCount(request: FastifyRequest): number {
  let n = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === HEADER) n++;
  return n;
}

/** The key the request sends, if any; a 400 when it is sent twice or is not 1-255 printable ASCII characters. */
export function idempotencyKey(request: FastifyRequest): string | undefined {
  const raw = request.headers[HEADER];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || headerCount(request) > 1 || !VALID_KEY.test(raw)) {
    throw new ApiError('invalid_request', 'Idempotency-Key must be sent once, as 1-255 printable ASCII characters.');
  }
  return raw;
}

/** Method, path and body: the same key with anything else is a reuse (422). */
export function fingerprint(request: FastifyRequest): string {
  let body: string;
  try {
    body = JSON.stringify(request.body ?? null);
  } catch {
    // A body nested deeper than the stack allows (a route without a body schema accepts any JSON).
    throw new ApiError('invalid_request', 'The request body nests too deeply.');
  }
  return createHash('sha256')
    .update(request.method)
    .update('\0')
    .update(request.url)
    .update('\0')
    .update(body)
    .digest('hex');
}
