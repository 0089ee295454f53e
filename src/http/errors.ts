// Turns every failure — schema, parser, router, auth, store outage, bug — into problem+json.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { asProblem, problemBody, type FieldError, type ProblemCode } from './problem.ts';
import { toFieldErrors, type AjvLikeError } from './field-errors.ts';
import { schemaMismatch, type DomainError } from '../lib/domain-errors.ts';

const STORE_DOWN_CODES = new Set([
  // the network: refused, reset, timed out, unresolvable (EAI_AGAIN: a container's name while its DNS entry is away),
  // unroutable
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // PostgreSQL: shutting down / restarting / starting up, connection exceptions, too many clients (53300)
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  'SQLITE_BUSY',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
]);

/** The store cannot write for want of space: SQLite's SQLITE_FULL, the OS's ENOSPC, PostgreSQL's disk_full. */
const STORE_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', '53100']);
/** How long a process reads as not ready after its store refused a write for want of space. */
const STORE_FULL_UNREADY_MS = 30_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** when a write last failed for want of space (ms), for GET /readyz */
    storeFull: { at: number };
  }
}

function isStoreFull(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && STORE_FULL_CODES.has(code);
}

/** Whether a write failed for want of space within the last 30 s (GET /readyz then answers 503). */
export function storeRecentlyFull(app: FastifyInstance, now = Date.now()): boolean {
  return now - app.storeFull.at < STORE_FULL_UNREADY_MS;
}

/** A lost or refused store connection: answer 503 and let the caller retry, never a wrong answer. */
export function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && STORE_DOWN_CODES.has(code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)|terminating connection/i.test(
    err.message,
  );
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: ProblemCode,
  detail: string,
  errors?: FieldError[],
  oauthError?: string,
  extensions?: Record<string, unknown>,
): FastifyReply {
  const body = problemBody(status, code, detail, String(request.id), errors);
  if (extensions) for (const [k, v] of Object.entries(extensions)) if (!(k in body)) Object.assign(body, { [k]: v });
  const oauth = request.routeOptions?.config as { oauth?: boolean } | undefined;
  let type = 'application/problem+json';
  if (oauth?.oauth) {
    Object.assign(body, { error: oauthErrorFor(status, code, oauthError), error_description: detail });
    // RFC 6749 §5.2 says application/json, and OAuth client libraries insist on it: a caller that
    // asks for JSON but not for problem+json gets the same document labelled application/json.
    const accept = request.headers.accept ?? '';
    if (/\bapplication\/json\b/i.test(accept) && !/application\/problem\+json/i.test(accept)) type = 'application/json';
  }
  return reply.code(status).type(type).send(body);
}

/** RFC 6749 §5.2 has a small fixed set of error codes; every problem maps onto one of them. */
function oauthErrorFor(status: number, code: ProblemCode, override: string | undefined): string {
  if (override) return override;
  if (code === 'invalid_client' || code === 'invalid_scope') return code;
  if (status === 503) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/**
 * For Fastify's `frameworkErrors` option: a URL that cannot be decoded or a path parameter over
 * the router's length limit is answered before any hook runs, so the request id header is set
 * here. Anything the router cannot match is, to the caller, an unknown resource.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', String(request.id));
  if (error.code === 'FST_ERR_BAD_URL') {
    sendProblem(request, reply, 400, 'invalid_request', 'The URL is not validly percent-encoded.');
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendProblem(request, reply, 404, 'not_found', 'No such resource.');
  } else {
    const { status, code, detail } = classify(error, request);
    sendProblem(request, reply, status, code, detail);
  }
}

/**
 * For Fastify's `clientErrorHandler` option: errors Node raises before a request reaches Fastify
 * (headers too large, a bad Content-Length, a request not received in time). There is no request
 * object, so the problem is written to the socket by hand, when nothing else has been written yet.
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  // A reset connection: nobody is left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let code: ProblemCode = 'invalid_request';
  let detail = 'The request is malformed.';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    [status, code, detail] = [
      408,
      'request_timeout',
      'The request was not received in time; the connection is closed.',
    ];
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    [status, code, detail] = [431, 'headers_too_large', 'The request headers are too large.'];
  } else if (err.code === 'HPE_INVALID_CONTENT_LENGTH' || err.code === 'HPE_UNEXPECTED_CONTENT_LENGTH') {
    detail = 'The Content-Length header is invalid, repeated, or sent with Transfer-Encoding.';
  }
  this.log.debug({ code: err.code, status }, 'client error');
  // A response already under way (its headers sent) must not be corrupted by a second one.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const id = randomUUID();
    const body = JSON.stringify(problemBody(status, code, detail, id));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * The caller went away while its body was being read (reset, closed early): not a store outage
 * and not our error. Node reports it as ECONNRESET "aborted", the same code as a lost store.
 */
function isClientAbort(error: FastifyError, request: FastifyRequest): boolean {
  if (error.code === 'ERR_STREAM_PREMATURE_CLOSE') return true;
  if (request.raw.aborted || request.raw.socket?.destroyed)
    return error.code === 'ECONNRESET' || /aborted|premature close/i.test(error.message);
  return error.code === 'ECONNRESET' && error.message === 'aborted';
}

/** PostgreSQL refusing text it cannot store (NUL, invalid UTF-8): the input's fault, not ours. */
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/** 65536 → "64 KiB", 1048576 → "1 MiB": the limits as docs/operations.md ("Problem types") states them. */
function byteSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function tooLarge(request: FastifyRequest | undefined): string {
  const limit = request?.routeOptions?.bodyLimit;
  return limit
    ? `The request body is larger than this endpoint accepts (${byteSize(limit)}, ${limit} bytes).`
    : 'The request body is larger than this endpoint accepts.';
}

function classify(
  error: FastifyError,
  request?: FastifyRequest,
): { status: number; code: ProblemCode; detail: string } {
  const status = error.statusCode ?? 500;
  if (UNSTORABLE_TEXT.has(error.code))
    return {
      status: 400,
      code: 'invalid_request',
      detail: 'The request contains characters that cannot be stored (such as NUL).',
    };
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, code: 'payload_too_large', detail: tooLarge(request) };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: 'unsupported_media_type', detail: 'Send the body as application/json.' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, code: 'invalid_request', detail: 'The body is empty but the content type says JSON.' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, code: 'invalid_request', detail: 'The body is not as long as its Content-Length says.' };
  }
  if (status === 413) return { status, code: 'payload_too_large', detail: tooLarge(request) };
  if (status === 415) return { status, code: 'unsupported_media_type', detail: 'Unsupported content type.' };
  if (status === 429)
    return { status, code: 'rate_limited', detail: 'Rate limit exceeded; retry after the time in Retry-After.' };
  if (status === 400)
    return {
      status,
      code: 'invalid_request',
      detail:
        error.code?.startsWith('FST_ERR_CTP') || error instanceof SyntaxError
          ? 'The body is not valid JSON.'
          : 'The request is malformed.',
    };
  if (status === 404) return { status, code: 'not_found', detail: 'No such resource.' };
  if (status === 503) return { status, code: 'unavailable', detail: 'The service is temporarily unavailable.' };
  return {
    status: 500,
    code: 'internal',
    detail: 'An unexpected error occurred; it has been logged with the request id.',
  };
}

export default fp(async function errorHandling(app: FastifyInstance) {
  // one object for the app and every plugin context under it
  app.decorate('storeFull', { at: -Infinity });
  const methodsByPattern = new Map<string, { regex: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    if (!url) return;
    let entry = methodsByPattern.get(url);
    if (!entry) {
      const pattern = url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+');
      entry = { regex: new RegExp(`^${pattern}/?$`), methods: new Set() };
      methodsByPattern.set(url, entry);
    }
    for (const m of [route.method].flat()) entry.methods.add(m);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    for (const { regex, methods } of methodsByPattern.values()) {
      // A path some route matches, asked with a method that route lacks. (When the method is
      // there, the router declined for another reason, e.g. a trailing slash: that is a 404.)
      if (regex.test(path) && !methods.has(request.method)) {
        reply.header('allow', [...methods].join(', '));
        return sendProblem(
          request,
          reply,
          405,
          'method_not_allowed',
          `${request.method} is not allowed here; use ${[...methods].join(', ')}.`,
        );
      }
    }
    return sendProblem(request, reply, 404, 'not_found', 'No such resource.');
  });

  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    // docs/api.md, "Errors": a body that breaks the schema is validation_failed; a bad query
    // parameter, path parameter or header is invalid_request. Both list the offending fields.
    const { validation, validationContext: context } = error as FastifyError;
    const fields = validation && toFieldErrors(context, validation as AjvLikeError[]);
    const problem = asProblem(fields ? schemaMismatch(fields, context ?? 'request') : error);
    if (problem) {
      for (const [name, value] of Object.entries(problem.options.headers ?? {})) reply.header(name, value);
      return sendProblem(
        request,
        reply,
        problem.status,
        problem.code,
        problem.detail,
        problem.options.errors,
        problem.options.oauthError,
        problem.options.extensions,
      );
    }
    if (isClientAbort(error as FastifyError, request)) {
      request.log.info({ code: (error as FastifyError).code }, 'client aborted the request');
      return sendProblem(request, reply, 400, 'invalid_request', 'The request was aborted by the client.');
    }
    if (isStoreFull(error)) {
      request.server.storeFull.at = Date.now();
      request.log.error({ err: { message: error.message, code: (error as FastifyError).code } }, 'store full');
      reply.header('retry-after', '30');
      return sendProblem(request, reply, 503, 'unavailable', 'The store has no space left to write; retry later.');
    }
    if (isStoreUnavailable(error)) {
      request.log.warn({ err: { message: error.message, code: (error as FastifyError).code } }, 'store unavailable');
      reply.header('retry-after', '1');
      return sendProblem(request, reply, 503, 'unavailable', 'The store is temporarily unreachable; retry shortly.');
    }
    const { status, code, detail } = classify(error, request);
    if (status >= 500) request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, status, code, detail);
  });
});
