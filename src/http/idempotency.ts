// Idempotency-Key on every authenticated POST (docs/api.md, "Integration", IETF httpapi-idempotency-key-header).
// A preHandler (after authentication and body validation) claims the key with an insert, so two
// instances or two concurrent requests can never both run the operation; an onSend hook stores
// the response, sealed, for 24 h. The claim lives in the store, shared by every instance.
// Keys are partitioned by environment, client and principal (the credential): the same key sent by
// a live and a test credential, or by two keys of one client, names different requests, neither
// replayed nor refused because of the other. The hook runs after authentication has checked the
// route's scope and role, so a response replays only to a principal that may run the operation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import type { Environment } from '../lib/principal.ts';
import { ApiError } from './problem.ts';
import { fingerprint, idempotencyKey } from './idempotency-key.ts';
import { openResponse, sealResponse, type ClaimId } from './idempotency-seal.ts';
import {
  claimRow,
  deleteClaimIfExpired,
  deleteExpiredClaims,
  deletePendingClaim,
  insertPendingClaim,
  settlePendingClaim,
  storeClaimResponse,
  takeOverPendingClaim,
} from './idempotency-repository.ts';
import { sha256Hex } from '../lib/digest.ts';

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim?: Claim;
  }
}

interface Claim extends ClaimId {
  settled: boolean;
  /** what a decision made under this claim stores (claimDigest) */
  digest: string;
}

/** The digest a decision stores of the claim it answered (032_decision_claims): never the key itself. */
function claimDigest(id: ClaimId): string {
  return sha256Hex(JSON.stringify([id.environment, id.clientId, id.principalId, id.key]));
}

/** The request's claim, as its decision stores it; undefined without an Idempotency-Key. */
export function claimOf(request: FastifyRequest): string | undefined {
  return request.idempotencyClaim?.digest;
}

/** A response rebuilt from what the operation stored (a decision), when the stored response was lost. */
type RecoverAnswer = (environment: Environment, claim: string) => Promise<{ status: number; body: string } | undefined>;

interface IdempotencyOptions {
  db: Kysely<Database>;
  /** the key-encryption keys: stored responses can hold secrets (a new API key), so they are sealed */
  encryption: KeyEncryption;
  /** how long a key is remembered; 24 h */
  ttlMs?: number;
  /** a claim older than this whose request never finished (a crashed instance) may be taken over */
  staleAfterMs?: number;
  /**
   * A pending claim whose operation committed but whose response was never stored (a crash or a
   * dropped connection in between) is answered from what the operation stored, not run again.
   */
  recover?: RecoverAnswer;
}

/**
 * Headers a replay repeats; the rest (rate limits) belongs to the new request. X-Request-Id is the
 * original one: the replayed body is the original response, and a problem's request_id must match it.
 */
const REPLAYED_HEADERS = ['content-type', 'location', 'cache-control', 'x-request-id'];
const PURGE_EVERY_MS = 60_000;

export default fp(async function idempotency(app: FastifyInstance, options: IdempotencyOptions) {
  const { db, encryption } = options;
  const ttlMs = options.ttlMs ?? 24 * 3600 * 1000;
  const staleAfterMs = options.staleAfterMs ?? 60_000;
  let lastPurge = 0;

  app.decorateRequest('idempotencyClaim', undefined);

  function purgeExpired(now: number): void {
    if (now - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = now;
    deleteExpiredClaims(db, now).catch((err: unknown) => app.log.warn({ err }, 'idempotency purge failed'));
  }

  const tryClaim = (id: ClaimId, print: string, now: number) => insertPendingClaim(db, id, print, now, now + ttlMs);
  const release = (claim: Claim) => deletePendingClaim(db, claim);

  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const { config } = request.routeOptions;
    if (request.method !== 'POST' || !config.scope || config.oauth) return;
    const raw = idempotencyKey(request);
    if (raw === undefined) return;
    const { clientId, environment, id: principalId } = request.principal;
    const id: ClaimId = { environment, clientId, principalId, key: raw };
    const print = fingerprint(request);
    const now = Date.now();
    purgeExpired(now);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await tryClaim(id, print, now)) {
        request.idempotencyClaim = { ...id, settled: false, digest: claimDigest(id) };
        return;
      }
      const row = await claimRow(db, id);
      if (!row) continue;
      if (row.expires_at <= now) {
        await deleteClaimIfExpired(db, id, now);
        continue;
      }
      if (row.fingerprint !== print) {
        throw new ApiError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used with another request; use a new key for a new request.',
        );
      }
      if (row.state === 'pending') {
        const answered = await options.recover?.(environment, claimDigest(id));
        if (answered) {
          const response = { ...answered, headers: { 'content-type': 'application/json; charset=utf-8' } };
          await settlePendingClaim(db, id, sealResponse(response, id, encryption.current));
          reply.code(response.status).header('content-type', response.headers['content-type']);
          reply.header('idempotent-replayed', 'true');
          return reply.send(response.body);
        }
        // A claim whose request died with its instance would block the key for 24 h: take it over.
        if (row.created_at < now - staleAfterMs) {
          if (await takeOverPendingClaim(db, id, row.created_at, now)) {
            request.idempotencyClaim = { ...id, settled: false, digest: claimDigest(id) };
            return;
          }
          continue;
        }
        throw new ApiError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
          headers: { 'retry-after': '1' },
        });
      }
      const stored = row.response === null ? undefined : openResponse(row.response, id, encryption);
      if (!stored) {
        // Sealed under a key-encryption key this instance no longer has: the response cannot be
        // repeated, and running the operation again could duplicate it.
        throw new ApiError(
          'conflict',
          'The response stored for this Idempotency-Key cannot be replayed here; use a new key.',
        );
      }
      reply.code(stored.status);
      for (const [name, value] of Object.entries(stored.headers)) reply.header(name, value);
      reply.header('idempotent-replayed', 'true');
      return reply.send(stored.body);
    }
    throw new ApiError('conflict', 'This Idempotency-Key is contended; retry shortly.', {
      headers: { 'retry-after': '1' },
    });
  });

  // Every result but a server failure or a rate limit is kept (as Stripe does): a 4xx is what the
  // same request would get again, while a 5xx may succeed on retry, so its claim is released.
  app.addHook('onSend', (request, reply, payload, done) => {
    const claim = request.idempotencyClaim;
    // A callback hook: almost every request has no claim, and an async hook costs a promise each.
    if (!claim || claim.settled) return done(null, payload);
    settle(request, reply, payload, claim).then(
      () => done(null, payload),
      (err: Error) => done(err),
    );
  });

  const settle = async (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    claim: Claim,
  ): Promise<void> => {
    claim.settled = true;
    const status = reply.statusCode;
    try {
      if (status >= 500 || status === 429 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) {
        await release(claim);
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      const body = typeof payload === 'string' ? payload : payload.toString('utf8');
      await storeClaimResponse(db, claim, sealResponse({ status, headers, body }, claim, encryption.current));
    } catch (err) {
      // The operation ran: releasing the claim would let a retry run it again. The claim stays
      // pending (409 for a retry) until it is stale and taken over.
      request.log.warn({ err }, 'idempotency response not stored');
    }
  };

  /** A claim its response never settled (an abort, an error before onSend) is released. */
  const abandon = (request: FastifyRequest, done: () => void) => {
    const claim = request.idempotencyClaim;
    if (!claim || claim.settled) return done();
    claim.settled = true;
    release(claim).then(done, () => done());
  };
  app.addHook('onResponse', (request, _reply, done) => abandon(request, done));
  app.addHook('onRequestAbort', (request, done) => abandon(request, done));
});
