// A @fastify/rate-limit store that counts in Redis, shared by every instance, and falls back to
// this process's own counters while Redis is unreachable, so limits hold in both states.
import type { Redis } from 'ioredis';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';

type Callback = (err: Error | null, result?: { current: number; ttl: number }) => void;
interface CounterStore {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read?(key: string, cb: Callback, timeWindow: number, max: number): void;
  child(options: unknown): CounterStore;
}
interface StoreParams {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
}

/**
 * `fallback` counts while Redis is unreachable: this process's own counters by default, or (in a
 * cluster worker) a store that counts for the whole host.
 */
export function sharedRateLimitStore(
  redis: Redis,
  namespace = 'vouch-rl:',
  fallback?: new (params: StoreParams) => CounterStore,
) {
  return class SharedRateLimitStore implements CounterStore {
    private readonly local: CounterStore;
    private readonly remote: CounterStore;

    constructor(params: StoreParams, stores?: { local: CounterStore; remote: CounterStore }) {
      this.local =
        stores?.local ??
        (fallback
          ? new fallback(params)
          : new (LocalStore as never as new (...a: unknown[]) => CounterStore)(
              params.continueExceeding,
              params.exponentialBackoff,
            ));
      this.remote =
        stores?.remote ??
        new (RedisStore as never as new (...a: unknown[]) => CounterStore)(
          params.continueExceeding,
          params.exponentialBackoff,
          redis,
          namespace,
        );
    }

    incr(key: string, cb: Callback, timeWindow: number, max: number): void {
      if (redis.status !== 'ready') return this.local.incr(key, cb, timeWindow, max);
      this.remote.incr(
        key,
        (err, result) => (err ? this.local.incr(key, cb, timeWindow, max) : cb(null, result)),
        timeWindow,
        max,
      );
    }

    read(key: string, cb: Callback, timeWindow: number, max: number): void {
      const target = redis.status === 'ready' ? this.remote : this.local;
      if (target.read) target.read(key, cb, timeWindow, max);
      else cb(null, { current: 0, ttl: 0 });
    }

    child(options: unknown): CounterStore {
      // createRateLimit() passes an empty routeInfo, which RedisStore would turn into the key
      // prefix "undefinedundefined-".
      const { routeInfo, ...rest } = options as { routeInfo?: { method?: string; url?: string } };
      const named = { ...rest, routeInfo: { method: routeInfo?.method ?? '', url: routeInfo?.url ?? '' } };
      return new SharedRateLimitStore({}, { local: this.local.child(named), remote: this.remote.child(named) });
    }
  };
}
