// Counts and logs every request turned away by a rate limit. The limiters are made by the feature
// plugins through app.createRateLimit(); wrapping that one factory sees every limit, whichever
// plugin made it, with the request and the counter's key at hand.
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The limiter a key belongs to, from its prefix (`p:<principal>`, `tok-ip:<ip>`, …). */
function scopeOf(key: string): string {
  const prefix = key.slice(0, Math.max(0, key.indexOf(':')));
  switch (prefix) {
    case 'p':
      return 'principal';
    case 'tok-ip':
      return 'token_ip';
    case 'tok-client':
      return 'token_client';
    default:
      return /^[a-z-]{1,32}$/.test(prefix) ? prefix.replace(/-/g, '_') : 'other';
  }
}

type Limiter = (
  request: FastifyRequest,
  options?: unknown,
) => Promise<{ isAllowed: boolean; isExceeded?: boolean; key?: string }>;

/** Call after registering @fastify/rate-limit and before the plugins that make limiters. */
export function meterRateLimits(app: FastifyInstance): void {
  const limited = app.metrics.counter('vouch_rate_limited_total', 'Requests refused by a rate limit, by limiter', [
    'scope',
  ]);
  const create = app.createRateLimit.bind(app) as unknown as (options?: unknown) => Limiter;
  (app as unknown as { createRateLimit: (options?: unknown) => Limiter }).createRateLimit = (options?: unknown) => {
    const limiter = create(options);
    return async (request, callOptions) => {
      const result = await limiter(request, callOptions);
      if (!result.isAllowed && result.isExceeded) {
        const scope = scopeOf(result.key ?? '');
        limited.inc({ scope });
        // Who was limited, never what they sent: the principal's id or the source address.
        const principal = (request as { principal?: { id?: string } | null }).principal;
        const who = scope === 'principal' && principal?.id ? { principal: principal.id } : { ip: request.ip };
        request.log.info({ scope, ...who }, 'rate limited');
      }
      return result;
    };
  };
}
