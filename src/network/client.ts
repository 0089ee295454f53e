// Calls to a peer's /network/v1 endpoints: the URL is checked as webhook URLs are (webhooks/ssrf.ts)
// and the connection goes to the address checked; the request is signed with this deployment's
// key and the answer must be signed by the peer's pinned key for this request's nonce.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkDestination, type UrlPolicy } from '../webhooks/ssrf.ts';
import type { NetworkIdentity } from './identity.ts';
import { HEADER, signRequest, verifyResponse } from './peer-auth.ts';

const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

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

/** One signed call; throws PeerCallError when the peer cannot be reached or its answer is not trustworthy. */
export async function callPeer(identity: NetworkIdentity, peer: PeerTarget, method: 'GET' | 'POST', path: string, payload: unknown, policy: UrlPolicy, timeoutMs: number): Promise<PeerAnswer> {
  const destination = await checkDestination(peer.url, policy);
  if (!destination.ok) throw new PeerCallError(`peer url ${destination.message}`);
  const base = destination.url.href.replace(/\/+$/, '');
  const url = new URL(`${base}${path}`);
  const body = payload === undefined ? '' : JSON.stringify(payload);
  const signedPath = `${url.pathname}${url.search}`;
  const headers = signRequest(identity, peer.signing_key, method, signedPath, body);
  const { address, family } = destination;
  const lookup: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  const { status, text, responseHeaders } = await new Promise<{ status: number; text: string; responseHeaders: http.IncomingHttpHeaders }>((resolve, reject) => {
    const request = client.request(url, {
      method,
      lookup,
      agent: false,
      headers: { ...headers, accept: 'application/json', 'user-agent': 'Vouch-Network/1', ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) },
    }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          request.destroy();
          reject(new PeerCallError('the answer is too large'));
        } else chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), responseHeaders: response.headers }));
      response.on('error', (err) => reject(new PeerCallError(err.message)));
    });
    request.setTimeout(timeoutMs, () => request.destroy(new PeerCallError(`no answer within ${timeoutMs} ms`)));
    request.on('error', (err) => reject(err instanceof PeerCallError ? err : new PeerCallError(err.message)));
    request.end(body);
  });
  if (!verifyResponse(peer.signing_key, status, headers[HEADER.nonce]!, responseHeaders, text)) {
    throw new PeerCallError(`the answer (HTTP ${status}) is not signed by the peer's pinned key`);
  }
  let parsed: unknown;
  try {
    parsed = text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    throw new PeerCallError(`the answer (HTTP ${status}) is not JSON`);
  }
  return { status, body: parsed, headers: responseHeaders };
}

/** The detail of a problem answer, cut short, for the sync report (peers' texts are data). */
export function problemDetail(answer: PeerAnswer): string {
  const detail = (answer.body as { detail?: unknown } | undefined)?.detail;
  const text = typeof detail === 'string' ? detail.replace(/[^\x20-\x7e]/g, ' ').slice(0, 200) : '';
  return `HTTP ${answer.status}${text ? `: ${text}` : ''}`;
}
