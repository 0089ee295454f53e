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
  /** Reports every command's duration on `client` (for the latency histogram); undefined stops it. */
  observeCommands?(observer: CommandObserver | undefined): void;
}

/** A command's name, its duration (to its answer or failure), and whether it failed. */
type CommandObserver = (command: string, seconds: number, failed: boolean) => void;

/** Times the client's commands: sendCommand is the one path every command takes in ioredis. */
function timeCommands(redis: Redis): (observer: CommandObserver | undefined) => void {
  let current: CommandObserver | undefined;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    const observe = current;
    const result = send(...args) as Promise<unknown>;
    if (!observe) return result;
    const start = performance.now();
    const name = args[0].name;
    result.then(
      () => observe(name, (performance.now() - start) / 1000, false),
      () => observe(name, (performance.now() - start) / 1000, true),
    );
    return result;
  }) as Redis['sendCommand'];
  return (observer) => {
    current = observer;
  };
}

/** A command gets this long; a Redis that hangs (stopped, partitioned) must not hang requests. */
const COMMAND_TIMEOUT_MS = 500;
/** How often a quiet connection is checked; one that does not answer is dropped and re-made. */
const HEALTH_CHECK_MS = 1000;

function connect(url: string): Redis {
  const redis = new Redis(url, {
    connectTimeout: 1000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => 500,
    lazyConnect: false,
  });
  // Connection errors are reported by ready() and /readyz, not as crashes.
  redis.on('error', () => {});
  return redis;
}

/**
 * A connection whose server stops answering stays "ready" as far as the socket goes; two PINGs
 * in a row that time out drop it, so it reports not-ready (/readyz degraded, everything on its
 * local fallback) until a reconnect gets an answer again. Two, not one: a single late answer may
 * be this process's own event loop stalling, not Redis.
 */
function watch(redis: Redis): NodeJS.Timeout {
  let checking = false;
  let failures = 0;
  const timer = setInterval(() => {
    if (checking) return;
    if (redis.status !== 'ready') {
      failures = 0;
      return;
    }
    checking = true;
    redis
      .ping()
      .then(
        () => {
          failures = 0;
        },
        () => {
          failures += 1;
          if (failures >= 2 && redis.status === 'ready') {
            failures = 0;
            redis.disconnect(true);
          }
        },
      )
      .finally(() => {
        checking = false;
      });
  }, HEALTH_CHECK_MS);
  timer.unref();
  return timer;
}

export function openRedis(url: string): SharedRedis {
  const client = connect(url);
  const subscriber = connect(url);
  const timers = [watch(client), watch(subscriber)];
  const observeCommands = timeCommands(client);
  return {
    client,
    subscriber,
    observeCommands,
    ready: () => client.status === 'ready',
    async close() {
      for (const timer of timers) clearInterval(timer);
      client.disconnect();
      subscriber.disconnect();
    },
  };
}
