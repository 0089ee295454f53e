// Calls to a peer's /network/v1 endpoints: the URL is checked as webhook URLs are (webhooks/ssrf.ts)
// and the connection goes to the address checked; the request is signed with this deployment's
// key and the answer must be signed by the peer's pinned key for this request's nonce.
import http from 'node:http';
import https from 'node:https';
import { pinnedLookup } from '../lib/pinned-lookup.ts';
import { checkDestination, type UrlPolicy } from '../webhooks/ssrf.ts';
import type { NetworkIdentity } from './identity.ts';
import { parseOff } from './json-thread.ts';
import { MAX_JSON_DEPTH, SMALL_ANSWER_BYTES } from './limits.ts';
import { HEADER, signRequest, verifyResponse } from './peer-auth.ts';

export class PeerCallError extends Error {}

export interface PeerTarget {
  url: string;
  signing_key: string;
}

export interface PeerAnswer {
  status: number;
  body: unknown;
  headers: http.IncomingHttpHeaders;
}

/** What one call may cost (docs/network.md, "A peer's limits"). */
export interface CallLimits {
  /** the answer's bytes at most (default: a descriptor's or a problem's) */
  maxBytes?: number;
  /** epoch ms by which the call must be over whatever `timeoutMs` says: the deadline of the sync with this peer */
  deadlineAt?: number;
}

/**
 * One signed call; throws PeerCallError when the peer cannot be reached or its answer is not
 * trustworthy. `timeoutMs` bounds the whole call — connecting, sending, and every byte of the
 * answer — not the silence between two bytes, so a peer dripping its answer cannot hold it longer.
 * The answer is parsed off the main thread, its nesting bounded.
 */
export async function callPeer(
  identity: NetworkIdentity,
  peer: PeerTarget,
  method: 'GET' | 'POST',
  path: string,
  payload: unknown,
  policy: UrlPolicy,
  timeoutMs: number,
  limits: CallLimits = {},
): Promise<PeerAnswer> {
  const maxBytes = limits.maxBytes ?? SMALL_ANSWER_BYTES;
  const started = Date.now();
  const bySync = limits.deadlineAt !== undefined && limits.deadlineAt - started < timeoutMs;
  const allowedMs = bySync ? limits.deadlineAt! - started : timeoutMs;
  if (allowedMs <= 0) throw new PeerCallError('the deadline of the sync with this peer has passed');
  const destination = await checkDestination(peer.url, policy);
  if (!destination.ok) throw new PeerCallError(`peer url ${destination.message}`);
  const base = destination.url.href.replace(/\/+$/, '');
  const url = new URL(`${base}${path}`);
  const body = payload === undefined ? '' : JSON.stringify(payload);
  const signedPath = `${url.pathname}${url.search}`;
  const headers = signRequest(identity, peer.signing_key, method, signedPath, body);
  const { address, family } = destination;
  const lookup = pinnedLookup(address, family);
  const client = url.protocol === 'https:' ? https : http;
  const { status, text, responseHeaders } = await new Promise<{
    status: number;
    text: string;
    responseHeaders: http.IncomingHttpHeaders;
  }>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method,
        lookup,
        agent: false,
        headers: {
          ...headers,
          accept: 'application/json',
          'user-agent': 'Vouch-Network/1',
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const tooLarge = () => {
          clearTimeout(deadline);
          reject(new PeerCallError(`the answer is larger than the ${maxBytes} bytes this call allows`));
          request.destroy();
        };
        if (Number(response.headers['content-length'] ?? 0) > maxBytes) return tooLarge();
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) tooLarge();
          else chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(deadline);
          resolve({
            status: response.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            responseHeaders: response.headers,
          });
        });
        response.on('error', (err) => {
          clearTimeout(deadline);
          reject(new PeerCallError(err.message));
        });
      },
    );
    // The whole call, not an idle timeout: settled first, then the socket goes.
    const deadline = setTimeout(
      () => {
        reject(
          new PeerCallError(
            bySync
              ? `the deadline of the sync with this peer passed during the call (${allowedMs} ms left for it)`
              : `no complete answer within ${timeoutMs} ms`,
          ),
        );
        request.destroy();
      },
      Math.max(1, allowedMs - (Date.now() - started)),
    );
    request.on('error', (err) => {
      clearTimeout(deadline);
      reject(err instanceof PeerCallError ? err : new PeerCallError(err.message));
    });
    request.end(body);
  });
  if (!verifyResponse(peer.signing_key, status, headers[HEADER.nonce]!, responseHeaders, text)) {
    throw new PeerCallError(`the answer (HTTP ${status}) is not signed by the peer's pinned key`);
  }
  let parsed: unknown;
  try {
    parsed = text ? await parseOff(text, MAX_JSON_DEPTH) : undefined;
  } catch (err) {
    throw new PeerCallError(
      `the answer (HTTP ${status}) is not JSON of the protocol (${err instanceof Error ? err.message.slice(0, 80) : 'unreadable'})`,
    );
  }
  return { status, body: parsed, headers: responseHeaders };
}

/** The detail of a problem answer, cut short, for the sync report (peers' texts are data). */
export function problemDetail(answer: PeerAnswer): string {
  const detail = (answer.body as { detail?: unknown } | undefined)?.detail;
  const text = typeof detail === 'string' ? detail.replace(/[^\x20-\x7e]/g, ' ').slice(0, 200) : '';
  return `HTTP ${answer.status}${text ? `: ${text}` : ''}`;
}
