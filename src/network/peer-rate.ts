// The request rate of each peer on /network/v1 (docs/network.md, "A peer's request rate"): its
// signed requests spend units from a per-peer allowance of PEER_UNITS_PER_WINDOW a minute, counted
// by the app's rate-limit store (shared by every instance with Redis, by the workers of one host
// without it). A flags page costs one unit per 1,000 entries asked, an evaluate batch one (its
// elements are paid from the budget). Beyond: 429 with Retry-After.
import type { FastifyRequest } from 'fastify';
import { Limited } from '../lib/domain-errors.ts';

/** A sync is at most 100 pages of 1,000 entries and a few evaluate batches: one fits in a minute's allowance. */
export const PEER_UNITS_PER_WINDOW = 120;
const WINDOW_MS = 60_000;
/** Entries a unit of a flags page pays for. */
const ENTRIES_PER_UNIT = 1000;

type Limiter = ReturnType<FastifyRequest['server']['createRateLimit']>;

export interface PeerRate {
  /**
   * before the body is read: a peer already past its allowance is refused without costing anything more (nothing is
   * counted)
   */
  refuseExhausted: (request: FastifyRequest) => Promise<void>;
  /**
   * once the signature and nonce are verified, so no one but the peer spends its allowance: counts this request's units
   */
  spend: (request: FastifyRequest) => Promise<void>;
}

/** What a request costs: a flags page by the entries it may return, anything else one unit. */
function requestUnits(request: FastifyRequest): number {
  const limit = (request.query as { limit?: unknown } | undefined)?.limit;
  return request.method === 'GET' && typeof limit === 'number' ? Math.max(1, Math.ceil(limit / ENTRIES_PER_UNIT)) : 1;
}

export function peerRate(onRefused: (reason: string) => void): PeerRate {
  // Made on first use from the app the routes are registered on (the rate-limit plugin is registered before them).
  let limiter: Limiter | undefined;
  const limiterOf = (request: FastifyRequest) =>
    (limiter ??= request.server.createRateLimit({
      max: PEER_UNITS_PER_WINDOW,
      timeWindow: WINDOW_MS,
      keyGenerator: (r) => `peer:${r.peer?.id ?? ''}`,
    }));
  const refuse = (request: FastifyRequest, retryAfterSeconds: number) => {
    onRefused('rate');
    request.log.warn(
      { event: 'network_peer_rate_exceeded', peer_id: request.peer?.id },
      'peer request refused: request rate',
    );
    return new Limited(
      `This peer's request rate of ${PEER_UNITS_PER_WINDOW} units a minute (a flags page costs one per ${ENTRIES_PER_UNIT} entries asked) is used up.`,
      Math.max(1, retryAfterSeconds),
    );
  };
  return {
    async refuseExhausted(request) {
      if (!request.peer) return;
      const state = await limiterOf(request)(request, { increment: false });
      if (!state.isAllowed && state.isExceeded) throw refuse(request, state.ttlInSeconds);
    },
    async spend(request) {
      const limit = limiterOf(request);
      for (let unit = requestUnits(request); unit > 0; unit--) {
        const state = await limit(request);
        if (!state.isAllowed && state.isExceeded) throw refuse(request, state.ttlInSeconds);
      }
    },
  };
}
