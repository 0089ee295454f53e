// Peer-to-peer authentication (docs/network.md, "Signed requests"): every request a peer sends to /network/v1/* is
// signed with its Ed25519 key over the recipient's signing key, the method, path, timestamp, nonce and body digest (a
// request signed for one peer is refused by every other); every answer is signed by this deployment over the status,
// the request's nonce, a timestamp and the body digest, so a peer can trust what it pulled.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onResponseHookHandler, onSendHookHandler } from 'fastify';
import { Forbidden, Unauthenticated } from '../lib/domain-errors.ts';
import { ed25519PublicKey, signText, verifyText, type NetworkIdentity } from './identity.ts';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';
import { insertNonce, peerBySigningKey } from './peer-repository.ts';

export const HEADER = {
  key: 'vouch-peer-key',
  timestamp: 'vouch-timestamp',
  nonce: 'vouch-nonce',
  signature: 'vouch-signature',
} as const;

/** How far a signed timestamp may be from this clock; nonces are kept twice as long. */
const MAX_SKEW_SECONDS = 300;
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;
const TIMESTAMP = /^\d{1,12}$/;

const digest = (body: string | Buffer) => createHash('sha256').update(body).digest('base64url');

function requestSigningText(
  recipientKey: string,
  method: string,
  path: string,
  timestamp: string,
  nonce: string,
  body: string | Buffer,
): string {
  return ['vouch-network/v1 request', recipientKey, method.toUpperCase(), path, timestamp, nonce, digest(body)].join(
    '\n',
  );
}

function responseSigningText(status: number, requestNonce: string, timestamp: string, body: string | Buffer): string {
  return ['vouch-network/v1 response', String(status), requestNonce, timestamp, digest(body)].join('\n');
}

/** Headers of a signed request from this deployment to the peer whose pinned signing key is `recipientKey`. */
export function signRequest(
  identity: NetworkIdentity,
  recipientKey: string,
  method: string,
  path: string,
  body: string,
): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomBytes(18).toString('base64url');
  return {
    [HEADER.key]: identity.signingKey,
    [HEADER.timestamp]: timestamp,
    [HEADER.nonce]: nonce,
    [HEADER.signature]: signText(identity, requestSigningText(recipientKey, method, path, timestamp, nonce, body)),
  };
}

/** Whether an answer was signed by the pinned key, for this request's nonce, recently. */
export function verifyResponse(
  pinnedKey: string,
  status: number,
  requestNonce: string,
  headers: Record<string, unknown>,
  body: string,
): boolean {
  const key = ed25519PublicKey(pinnedKey);
  const timestamp = headers[HEADER.timestamp];
  const signature = headers[HEADER.signature];
  if (!key || typeof timestamp !== 'string' || typeof signature !== 'string' || !TIMESTAMP.test(timestamp))
    return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return false;
  return verifyText(key, responseSigningText(status, requestNonce, timestamp, body), signature);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** the authenticated peer of a /network/v1 request */
    peer?: NetworkPeersTable;
    /** the body exactly as received, for the signature */
    rawBody?: string;
  }
  interface FastifyContextConfig {
    /**
     * a peer-to-peer route (signed requests, peer-routes.ts): the JSON parser keeps its body as received, for the
     * signature
     */
    peer?: boolean;
  }
}

const refuse = (detail: string) => new Unauthenticated(detail, { challenge: 'Vouch-Signature realm="vouch-network"' });

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/** A check run in a route's hook (peer-routes.ts chains it with the request rate's). */
type PeerCheck = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** The hooks a peer-protocol route declares (peer-routes.ts): nothing else of the API runs them. */
export interface PeerHooks {
  /** a signed request from an active peer: the key, its peer and the timestamp (before the body is read) */
  verifyPeer: PeerCheck;
  /** the signature over the body exactly as received, and the nonce not seen before */
  verifySignature: PeerCheck;
  /** every answer of the peer protocol, errors included, is signed */
  signAnswer: onSendHookHandler;
  /** counts answered peer requests (metrics; never the request's content) */
  countServed: onResponseHookHandler;
}

/**
 * The checks of signed peer requests and the signature on their answers, as route hooks (the JSON
 * parser keeps a peer route's raw body: see app.ts). `onRefused` counts refusals.
 */
export function peerHooks(
  db: NetworkDb,
  identity: NetworkIdentity,
  onRefused: (reason: string) => void,
  onServed: (route: string, status: number) => void,
): PeerHooks {
  return {
    async verifyPeer(request) {
      const key = header(request, HEADER.key);
      const timestamp = header(request, HEADER.timestamp);
      const nonce = header(request, HEADER.nonce);
      const signature = header(request, HEADER.signature);
      if (!key || !timestamp || !nonce || !signature || !TIMESTAMP.test(timestamp) || !NONCE.test(nonce)) {
        onRefused('unsigned');
        throw refuse(
          'A signed peer request is required (Vouch-Peer-Key, Vouch-Timestamp, Vouch-Nonce, Vouch-Signature).',
        );
      }
      const peer = await peerBySigningKey(db, key);
      if (!peer) {
        onRefused('unknown_peer');
        throw refuse('This key is not a peer of this deployment.');
      }
      if (peer.status !== 'active') {
        onRefused('suspended');
        throw new Forbidden('This peer is suspended by this deployment.', 'insufficient_scope');
      }
      if (Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) {
        onRefused('stale');
        throw refuse(`The request timestamp is more than ${MAX_SKEW_SECONDS} s from this server's clock.`);
      }
      request.peer = peer;
    },

    async verifySignature(request) {
      const peer = request.peer!;
      const timestamp = header(request, HEADER.timestamp)!;
      const nonce = header(request, HEADER.nonce)!;
      const key = ed25519PublicKey(peer.signing_key);
      // Signed for this deployment's own key: a request a peer received can't be replayed at another one.
      const text = requestSigningText(
        identity.signingKey,
        request.method,
        request.url,
        timestamp,
        nonce,
        request.rawBody ?? '',
      );
      if (!key || !verifyText(key, text, header(request, HEADER.signature)!)) {
        onRefused('bad_signature');
        throw refuse(
          "The request signature does not verify under this peer's pinned key for this deployment (requests are signed for their recipient's key).",
        );
      }
      if (!(await insertNonce(db, peer.id, nonce, (Number(timestamp) + 2 * MAX_SKEW_SECONDS) * 1000))) {
        onRefused('replayed');
        throw refuse('This nonce was already used: the request is a replay.');
      }
    },

    async signAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
      const nonce = header(request, HEADER.nonce);
      const timestamp = String(Math.floor(Date.now() / 1000));
      reply.header(HEADER.timestamp, timestamp);
      reply.header(
        HEADER.signature,
        signText(
          identity,
          responseSigningText(reply.statusCode, nonce && NONCE.test(nonce) ? nonce : '', timestamp, payload),
        ),
      );
      return payload;
    },

    async countServed(request, reply) {
      onServed(request.routeOptions.url ?? '', reply.statusCode);
    },
  };
}
