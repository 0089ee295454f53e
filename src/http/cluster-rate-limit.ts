// Rate-limit counters shared by the workers of one host (`serve --workers N`, no Redis): the
// primary keeps the counters and each worker asks it over the cluster IPC channel. Without this
// every worker would count alone and a host of N workers would allow N times the contract's limit.
// A worker batches the increments of one event-loop turn into one message, and counts locally
// for a while when the primary does not answer in time, so a limit still holds (per worker).
import cluster from 'node:cluster';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';

const MESSAGE = 'vouch:rate-limit';
/** The primary answers in well under a millisecond; this long without an answer means it is stuck. */
const ANSWER_TIMEOUT_MS = 250;
/** After a missed answer, count locally this long before asking the primary again. */
const LOCAL_PERIOD_MS = 1000;
/** Counters the primary keeps at most; the oldest go first (as in the LRU of the local store). */
const MAX_COUNTERS = 100_000;

type Callback = (err: Error | null, result?: { current: number; ttl: number }) => void;
interface CounterStore {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read?(key: string, cb: Callback, timeWindow: number, max: number): void;
  child(options: unknown): CounterStore;
}

/** One operation: [key, timeWindow, read-only (1) or increment (0)]. */
type Op = [string, number, 0 | 1];
interface Request {
  type: typeof MESSAGE;
  id: number;
  ops: Op[];
}
interface Answer {
  type: typeof MESSAGE;
  id: number;
  /** [current, ttl] per operation, in order */
  results: [number, number][];
}

const isMessage = (m: unknown): m is Request & Answer =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === MESSAGE;

// ---------------------------------------------------------------------------------------------
// Primary

interface Counter {
  current: number;
  start: number;
  window: number;
}

/** The primary's counters: fixed windows, as @fastify/rate-limit's LocalStore counts them. */
export class HostCounters {
  private readonly counters = new Map<string, Counter>();

  apply([key, window, readOnly]: Op, now = Date.now()): [number, number] {
    let counter = this.counters.get(key);
    if (counter && counter.start + counter.window <= now) {
      this.counters.delete(key);
      counter = undefined;
    }
    if (readOnly) return counter ? [counter.current, counter.start + counter.window - now] : [0, 0];
    if (!counter) {
      if (this.counters.size >= MAX_COUNTERS) this.evict(now);
      counter = { current: 0, start: now, window };
      this.counters.set(key, counter);
    }
    counter.current += 1;
    return [counter.current, counter.start + counter.window - now];
  }

  get size(): number {
    return this.counters.size;
  }

  /** Drops expired counters, then (still full) the oldest tenth. */
  evict(now = Date.now()): void {
    for (const [key, c] of this.counters) if (c.start + c.window <= now) this.counters.delete(key);
    if (this.counters.size < MAX_COUNTERS) return;
    let drop = Math.ceil(MAX_COUNTERS / 10);
    for (const key of this.counters.keys()) {
      if (drop-- <= 0) break;
      this.counters.delete(key);
    }
  }
}

/** Primary: keeps the host's counters and answers the workers' batches. */
export function serveClusterRateLimits(): HostCounters {
  const counters = new HostCounters();
  const sweep = setInterval(() => counters.evict(), 30_000);
  sweep.unref();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage(message) || !Array.isArray(message.ops)) return;
    const now = Date.now();
    const results = message.ops.map((op) => counters.apply(op, now));
    if (worker.isConnected())
      worker.send({ type: MESSAGE, id: message.id, results } satisfies Answer, (err: Error | null) => void err);
  });
  return counters;
}

// ---------------------------------------------------------------------------------------------
// Worker

interface Pending {
  op: Op;
  cb: Callback;
  /** where to count when the primary does not answer */
  local: CounterStore;
  max: number;
}

/** The worker's side of the channel: one batch per event-loop turn, one answer per batch. */
class PrimaryChannel {
  private queue: Pending[] = [];
  private scheduled = false;
  private nextId = 0;
  private readonly inFlight = new Map<number, { batch: Pending[]; timer: NodeJS.Timeout }>();
  private localUntil = 0;
  private listening = false;
  /** the primary's last count per key, so counting locally goes on from it rather than from zero */
  private readonly lastKnown = new Map<string, { current: number; until: number }>();

  constructor(private readonly send: (message: Request, cb: (err: Error | null) => void) => boolean) {}

  submit(item: Pending): void {
    if (Date.now() < this.localUntil) return this.countLocally([item]);
    this.queue.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** An answer from the primary (every message of this process passes through here). */
  receive(message: unknown): void {
    if (!isMessage(message) || !Array.isArray(message.results)) return;
    const entry = this.inFlight.get(message.id);
    if (!entry) return;
    this.inFlight.delete(message.id);
    clearTimeout(entry.timer);
    if (this.lastKnown.size > 10_000) this.lastKnown.clear();
    entry.batch.forEach((item, i) => {
      const [current, ttl] = message.results[i] ?? [0, 0];
      this.lastKnown.set(item.op[0], { current, until: Date.now() + ttl });
      item.cb(null, { current, ttl });
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    if (!this.listening) {
      this.listening = true;
      process.on('message', (m: unknown) => this.receive(m));
    }
    const id = ++this.nextId;
    // After an event-loop stall this timer fires in the same turn as the answer arrives; timers
    // run before I/O, so the give-up waits one more turn to let an answer already read win.
    const timer = setTimeout(() => setImmediate(() => this.giveUp(id)), ANSWER_TIMEOUT_MS);
    this.inFlight.set(id, { batch, timer });
    try {
      this.send({ type: MESSAGE, id, ops: batch.map((b) => b.op) }, (err) => {
        if (err) this.giveUp(id);
      });
    } catch {
      this.giveUp(id);
    }
  }

  private giveUp(id: number): void {
    const entry = this.inFlight.get(id);
    if (!entry) return;
    this.inFlight.delete(id);
    clearTimeout(entry.timer);
    this.localUntil = Date.now() + LOCAL_PERIOD_MS;
    this.countLocally(entry.batch);
  }

  private countLocally(batch: Pending[]): void {
    for (const {
      op: [key, window, readOnly],
      cb,
      local,
      max,
    } of batch) {
      const known = this.lastKnown.get(key);
      const base = known && known.until > Date.now() ? known.current : 0;
      const onTop: Callback = (err, result) => cb(err, result && { ...result, current: result.current + base });
      if (readOnly && local.read) local.read(key, onTop, window, max);
      else if (readOnly) cb(null, { current: base, ttl: 0 });
      else local.incr(key, onTop, window, max);
    }
  }
}

let channel: PrimaryChannel | undefined;
function primaryChannel(): PrimaryChannel {
  channel ??= new PrimaryChannel((message, cb) => process.send!(message, undefined, undefined, cb));
  return channel;
}

const newLocal = () => new (LocalStore as never as new (...a: unknown[]) => CounterStore)(false, false);

/**
 * A @fastify/rate-limit store for a cluster worker: counts in the primary (fixed windows, as the
 * local store does). continueExceeding and exponentialBackoff are not supported (Vouch uses neither).
 */
export class ClusterRateLimitStore implements CounterStore {
  private readonly local: CounterStore;

  constructor(
    _params?: unknown,
    private readonly prefix = '',
    private readonly channel: PrimaryChannel = primaryChannel(),
  ) {
    this.local = newLocal();
  }

  incr(key: string, cb: Callback, timeWindow: number, max: number): void {
    this.channel.submit({ op: [this.prefix + key, timeWindow, 0], cb, local: this.local, max });
  }

  read(key: string, cb: Callback, timeWindow: number, max: number): void {
    this.channel.submit({ op: [this.prefix + key, timeWindow, 1], cb, local: this.local, max });
  }

  child(options: unknown): CounterStore {
    // Route limits get the route in their keys (as the Redis store does); createRateLimit() limiters
    // have none and tell themselves apart by their key generators.
    const { routeInfo } = options as { routeInfo?: { method?: string; url?: string } };
    const prefix = routeInfo?.method || routeInfo?.url ? `${routeInfo.method ?? ''}${routeInfo.url ?? ''}-` : '';
    return new ClusterRateLimitStore(undefined, prefix, this.channel);
  }
}

/** For tests: a store over a given channel function (a fake primary). */
export function clusterStoreOver(send: (message: Request, cb: (err: Error | null) => void) => boolean): {
  store: ClusterRateLimitStore;
  receive(message: unknown): void;
} {
  const ch = new PrimaryChannel(send);
  return { store: new ClusterRateLimitStore(undefined, '', ch), receive: (m) => ch.receive(m) };
}
