// The optional Redis connection shared by the score cache, the rate limits and revocation
// messages. Redis is an accelerator, never a source of truth: every user copes with it being
// down (commands fail fast instead of queueing) and the client reconnects by itself.
import { Redis } from 'ioredis';

export interface SharedRedis {
  client: Redis;
  /** a second connection: a subscribed connection cannot issue other commands */
  subscriber: Redis;
  ready(): boolean;
  close(): Promise<void>;
}

function connect(url: string): Redis {
  const redis = new Redis(url, {
    connectTimeout: 1000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => 500,
    lazyConnect: false,
  });
  // Connection errors are reported by ready() and /readyz, not as crashes.
  redis.on('error', () => {});
  return redis;
}

export function openRedis(url: string): SharedRedis {
  const client = connect(url);
  const subscriber = connect(url);
  return {
    client,
    subscriber,
    ready: () => client.status === 'ready',
    async close() {
      client.disconnect();
      subscriber.disconnect();
    },
  };
}
