// Rule tests off the event loop (docs/rules.md, "Testing a rule"): each runs in worker threads
// (replay-worker.ts), one per core up to REPLAY_WORKERS, that take the window's slices in turn,
// each read a page at a time over a connection of the worker's own; the slices' tallies are merged
// in the window's order (replay-merge.ts), so the result is the one a single pass gives. When the
// store cannot be opened twice (in-memory SQLite), this thread reads the pages and hands them to
// one worker one at a time, each acknowledged, so at most two are in flight. One rule test per
// environment at a time in this process (and across processes: test-lease.ts): a second is refused
// (RuleTestBusyError, 409 with Retry-After) rather than queued, so a desk clicking "test" twice
// never doubles the work. A test is stopped (its worker ended) at its time limit, when its caller
// goes away, or when its worker fails (out of its own bounded heap): RuleTestStoppedError.
import type { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { spawnWorker } from '../lib/worker-thread.ts';
import type { Environment } from '../lib/principal.ts';
import type { StoreSource } from '../store/readers.ts';
import type { RuleBody } from './compile.ts';
import type { ReplayRow, ReplaySettings } from './replay.ts';
import { mergeParts, type RuleTestResult, type TallyPart } from './replay-merge.ts';
import type { ListEntryRow } from './replay-lists.ts';
import type { ReplayWindow } from './replay-store.ts';

/** The rule and what its replay needs: plain data, so it crosses to the thread. */
export interface ReplayTask {
  rule: { id: string; version: number; body: RuleBody };
  settings: ReplaySettings;
}

export type ToReplayWorker =
  | { type: 'start'; task: ReplayTask }
  | { type: 'lists'; entries: ListEntryRow[] }
  | { type: 'page'; rows: ReplayRow[] }
  | { type: 'end' }
  | { type: 'read'; source: StoreSource; environment: Environment; window: ReplayWindow };
export type FromReplayWorker =
  { type: 'ack' } | { type: 'result'; value: unknown } | { type: 'error'; message: string };

/** Another rule test of the environment is running. */
export class RuleTestBusyError extends Error {
  /** a test of a million decisions takes well under a minute; most take a second or two */
  readonly retryAfterSeconds = 5;
  constructor() {
    super('A rule test is already running in this environment; try again when it has finished.');
    this.name = 'RuleTestBusyError';
  }
}

/** A rule test was stopped: past its time limit, cancelled by its caller, or its worker failed. */
export class RuleTestStoppedError extends Error {
  constructor(
    readonly reason: 'time' | 'cancelled' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'RuleTestStoppedError';
  }
}

/** What bounds one rule test (docs/rules.md, "Testing a rule"). */
export const RULE_TEST_LIMITS = {
  /** wall time; a year of a busy desk's decisions replays in well under a minute */
  timeMs: 120_000,
  /** the worker's own heap: a test that needs more fails alone, never the process */
  heapMb: 512,
};

/**
 * Workers of one test: two halve a million decisions' wall time on a machine of two cores (and
 * win twice the share of a busy one); more would contend with the serving threads for the cores.
 */
export const REPLAY_WORKERS = Math.max(1, Math.min(2, availableParallelism()));
/** Slices per worker: enough that a worker finishing early takes another instead of waiting. */
const SLICES_PER_WORKER = 8;

const running = new Set<Environment>();

// A worker takes most of a second to start (it loads the CEL library), so one that finished a
// test waits a minute for the next before it ends. It never keeps the process alive while idle.
const IDLE_MS = 60_000;
const idle: Array<{ worker: Worker; timer: NodeJS.Timeout }> = [];

function takeWorker(): Worker {
  const kept = idle.pop();
  if (kept) {
    const { worker, timer } = kept;
    clearTimeout(timer);
    worker.ref();
    return worker;
  }
  const worker = spawnWorker(import.meta.url, 'replay-worker', {
    resourceLimits: { maxOldGenerationSizeMb: RULE_TEST_LIMITS.heapMb },
  });
  worker.on('error', () => {});
  worker.on('exit', () => {
    const at = idle.findIndex((kept) => kept.worker === worker);
    if (at >= 0) clearTimeout(idle.splice(at, 1)[0]!.timer);
  });
  return worker;
}

function keepWorker(worker: Worker): void {
  if (idle.length >= REPLAY_WORKERS) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idle.push({ worker, timer: setTimeout(() => void worker.terminate(), IDLE_MS).unref() });
}

/** One conversation with a worker: each message answered by the next reply, or by its failure. */
class ReplayThread {
  private readonly worker = takeWorker();
  private waiting: { resolve: (m: FromReplayWorker) => void; reject: (err: Error) => void } | undefined;
  private failure: Error | undefined;
  private clean = false;
  private readonly onMessage = (message: FromReplayWorker) => {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (message.type === 'error') waiting?.reject(new Error(`rule test: ${message.message}`));
    else waiting?.resolve(message);
  };
  private readonly onError = (err: Error) =>
    this.fail(new RuleTestStoppedError('failed', `The rule test failed in its worker (${err.message}).`));
  private readonly onExit = (code: number) =>
    this.fail(new RuleTestStoppedError('failed', `The rule test's worker stopped (exit code ${code}).`));

  constructor(task: ReplayTask) {
    this.worker.on('message', this.onMessage).on('error', this.onError).on('exit', this.onExit);
    this.worker.postMessage({ type: 'start', task } satisfies ToReplayWorker);
  }

  /** Ends the test: what it waits for rejects with `err`, and its worker is ended at close. */
  fail(err: Error): void {
    this.failure ??= err;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(this.failure);
  }

  async request(message: ToReplayWorker): Promise<FromReplayWorker> {
    if (this.failure) throw this.failure;
    // Until it answers, the worker is busy: a test that ends meanwhile (another worker failed) ends it.
    this.clean = false;
    const reply = await new Promise<FromReplayWorker>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.postMessage(message);
    });
    this.clean = message.type === 'end' || message.type === 'read';
    return reply;
  }

  async close(): Promise<void> {
    this.worker.off('message', this.onMessage).off('error', this.onError).off('exit', this.onExit);
    // A worker that answered its last request is fit for the next test; any other is ended.
    if (this.clean && !this.failure) keepWorker(this.worker);
    else await this.worker.terminate();
  }
}

/** Where the decisions come from: the worker reads them itself, or this thread feeds them. */
type ReplayInput =
  | { source: StoreSource; environment: Environment; window: ReplayWindow }
  | { entries: () => Promise<ListEntryRow[]>; pages: AsyncIterable<ReplayRow[]> };

interface RunOptions {
  /** aborted when the caller went away */
  signal?: AbortSignal;
  /** RULE_TEST_LIMITS.timeMs unless told (tests) */
  timeMs?: number;
  /** REPLAY_WORKERS unless told (tests, benchmarks) */
  workers?: number;
}

/**
 * Runs one rule test in worker threads; RuleTestBusyError at once when another test of
 * `environment` runs in this process, RuleTestStoppedError when it was stopped.
 */
export async function runRuleTest(
  environment: Environment,
  task: ReplayTask,
  input: ReplayInput,
  { signal, timeMs = RULE_TEST_LIMITS.timeMs, workers = REPLAY_WORKERS }: RunOptions = {},
): Promise<RuleTestResult> {
  if (running.has(environment)) throw new RuleTestBusyError();
  running.add(environment);
  const threads: ReplayThread[] = [];
  let timer: NodeJS.Timeout | undefined;
  // A stop ends the test whatever it waits for: the workers, or a page of the store that never comes.
  let stop: (err: RuleTestStoppedError) => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    stop = (err) => {
      for (const thread of threads) thread.fail(err);
      reject(err);
    };
  });
  stopped.catch(() => {});
  const cancel = () => stop(new RuleTestStoppedError('cancelled', 'The caller went away; the rule test was stopped.'));
  try {
    const slices = 'source' in input ? slicesOf(input.window, Math.max(1, workers) * SLICES_PER_WORKER) : [];
    const count = 'source' in input ? Math.max(1, Math.min(workers, slices.length)) : 1;
    for (let i = 0; i < count; i++) threads.push(new ReplayThread(task));
    const seconds = Math.round(timeMs / 1000);
    timer = setTimeout(
      () =>
        stop(
          new RuleTestStoppedError(
            'time',
            `The rule test ran past its limit of ${seconds} s and was stopped; test a shorter window (since, until).`,
          ),
        ),
      timeMs,
    );
    if (signal?.aborted) cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    const work = 'source' in input ? readSlices(threads, input, slices) : feed(threads[0]!, input);
    return await Promise.race([work, stopped]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', cancel);
    await Promise.all(threads.map((thread) => thread.close()));
    running.delete(environment);
  }
}

/** [since, until) cut into `n` consecutive slices of equal time (fewer when the window is shorter than n ms). */
export function slicesOf(window: ReplayWindow, n: number): ReplayWindow[] {
  const span = window.until - window.since;
  const count = Math.max(1, Math.min(n, span));
  const out: ReplayWindow[] = [];
  for (let i = 0; i < count; i++) {
    const since = i === 0 ? window.since : window.since + Math.floor((span * i) / count);
    const until = i === count - 1 ? window.until : window.since + Math.floor((span * (i + 1)) / count);
    out.push({ ...window, since, until });
  }
  return out;
}

/** Each worker takes the next slice as soon as it is free; the parts are merged in the window's order. */
async function readSlices(
  threads: readonly ReplayThread[],
  input: Extract<ReplayInput, { source: StoreSource }>,
  slices: readonly ReplayWindow[],
): Promise<RuleTestResult> {
  const parts: TallyPart[] = new Array<TallyPart>(slices.length);
  let next = 0;
  const drain = async (thread: ReplayThread) => {
    while (next < slices.length) {
      const at = next++;
      const reply = await thread.request({
        type: 'read',
        source: input.source,
        environment: input.environment,
        window: slices[at]!,
      });
      parts[at] = (reply as Extract<FromReplayWorker, { type: 'result' }>).value as TallyPart;
    }
  };
  await Promise.all(threads.map(drain));
  return mergeParts(parts, parts[0]?.lists ?? []);
}

async function feed(
  thread: ReplayThread,
  input: Extract<ReplayInput, { pages: AsyncIterable<ReplayRow[]> }>,
): Promise<RuleTestResult> {
  await thread.request({ type: 'lists', entries: await input.entries() });
  const reader = input.pages[Symbol.asyncIterator]();
  try {
    // The next page is read while the worker folds in the current one.
    let next = reader.next();
    for (;;) {
      const { value, done } = await next;
      if (done) break;
      const folded = thread.request({ type: 'page', rows: value });
      next = reader.next();
      next.catch(() => {});
      await folded;
    }
  } finally {
    await reader.return?.();
  }
  const reply = await thread.request({ type: 'end' });
  return (reply as Extract<FromReplayWorker, { type: 'result' }>).value as RuleTestResult;
}
