// One delivery attempt on the wire: resolve and check the destination, POST, and judge the answer,
// all within one deadline (name resolution included: a resolver that never answers is a timeout
// like a receiver that never answers). What a failure records is a category only — timeout,
// refused, dns, tls, connection, http_<status>, blocked — never the error text: the delivery log is
// readable by the webhook's owner, and messages naming addresses, ports or TLS details would
// turn webhooks into a scanner of the network the service runs in.
import http from 'node:http';
import https from 'node:https';
import { pinnedLookup } from '../lib/pinned-lookup.ts';
import { checkDestination, type UrlPolicy } from './ssrf.ts';
import type { AttemptOutcome } from './claims.ts';

type FailureCategory = 'timeout' | 'refused' | 'dns' | 'tls' | 'connection' | 'blocked' | `http_${number}`;

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_|EPROTO$)/;

/** The category of a socket or request error (by its code; the message is never kept). */
function categorize(err: unknown): FailureCategory {
  const code = String((err as { code?: unknown }).code ?? '');
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'EAI_FAIL' ||
    code === 'EAI_NODATA' ||
    code === 'EAI_NONAME'
  )
    return 'dns';
  if (TLS_CODE.test(code)) return 'tls';
  return 'connection';
}

const failure = (error: FailureCategory, statusCode: number | null = null): AttemptOutcome => ({
  statusCode,
  error,
  durationMs: 0,
  success: false,
});

export interface PostResult {
  outcome: AttemptOutcome;
  /** the error code behind a failure, for the server's own log only */
  code?: string;
}

/** One POST to the checked address; redirects are not followed (a 3xx is a failure). */
export async function postOnce(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  policy: UrlPolicy,
  timeoutMs: number,
): Promise<PostResult> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<PostResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ outcome: failure('timeout') });
    }, timeoutMs);
  });
  try {
    return await Promise.race([attempt(rawUrl, headers, body, policy, controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function attempt(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  policy: UrlPolicy,
  signal: AbortSignal,
): Promise<PostResult> {
  const destination = await checkDestination(rawUrl, policy);
  if (!destination.ok)
    return { outcome: failure(destination.reason === 'unresolved' ? 'dns' : 'blocked'), code: destination.message };
  if (signal.aborted) return { outcome: failure('timeout') };
  const { url, address, family } = destination;
  // The connection goes to the address just checked, never to a second DNS answer.
  const lookup = pinnedLookup(address, family);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve) => {
    const request = client.request(
      url,
      {
        method: 'POST',
        lookup,
        agent: false,
        signal,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Vouch-Webhooks/1',
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        response.resume();
        response.on('end', () =>
          resolve({ outcome: { statusCode: status, error: ok ? null : `http_${status}`, durationMs: 0, success: ok } }),
        );
        response.on('error', (err) =>
          resolve({ outcome: failure('connection', status), code: String((err as { code?: unknown }).code ?? '') }),
        );
      },
    );
    request.on('error', (err) =>
      resolve({
        outcome: failure(signal.aborted ? 'timeout' : categorize(err)),
        code: String((err as { code?: unknown }).code ?? ''),
      }),
    );
    request.end(body);
  });
}
