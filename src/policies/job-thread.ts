// One fit or backtest in a worker thread (issue 18): replaying or fitting 150k decisions took a
// second of CPU, which on the event loop stalled every request (health checks included). The
// worker reads the store a page at a time over a connection of its own (runJobReading); when the
// store cannot be opened twice (in-memory SQLite), the main thread reads the pages and hands them
// over (runJob), one at a time, each acknowledged, so at most two are ever in flight.
import type { Worker } from 'node:worker_threads';
import { spawnWorker } from '../lib/worker-thread.ts';
import type { Environment } from '../lib/principal.ts';
import { fromWireError, type JobTask, type WireDecision, type WireError } from './job-tasks.ts';
import type { StoreSource } from '../store/readers.ts';
import type { Window } from './stored.ts';
import type { JobProgress } from './jobs.ts';

export type ToWorker =
  /** `total`: the decisions the main thread will feed, when it counted them */
  | { type: 'start'; task: JobTask; hold?: Int32Array; total?: number | null }
  | { type: 'page'; rows: WireDecision[] }
  | { type: 'end' }
  | { type: 'read'; source: StoreSource; environment: Environment; window: Window };
export type FromWorker =
  | { type: 'ack' }
  | { type: 'held' }
  | { type: 'progress'; progress: WorkerProgress }
  | { type: 'result'; value: unknown }
  | { type: 'error'; error: WireError };

/** A job's progress as its worker reports it, with the worker's peak used heap so far (bytes). */
export type WorkerProgress = JobProgress & { heapUsed: number };
/** Hears every report; the job waits for nothing it returns, except a test's hold (holdNextJob). */
export type ProgressListener = (progress: WorkerProgress) => Promise<void> | void;

interface Hold {
  flag: Int32Array;
  reached: () => void;
}
let nextHold: Hold | undefined;

/**
 * Tests only: the next job's worker stops after folding in its first page, synchronously (as a
 * long computation would), and says so; `release` lets it go on. A test can thus look at the
 * server while a job is provably mid-run, without timing anything.
 */
export function holdNextJob(): { reached: Promise<void>; release(): void } {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  let reached!: () => void;
  const promise = new Promise<void>((resolve) => (reached = resolve));
  nextHold = { flag, reached };
  return {
    reached: promise,
    release() {
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    },
  };
}

function spawn(): Worker {
  const worker = spawnWorker(import.meta.url, 'job-worker');
  // A running job reports its worker's errors; an idle worker that fails or ends is only dropped.
  worker.on('error', () => {});
  worker.on('exit', () => {
    const at = idle.findIndex((kept) => kept.worker === worker);
    if (at !== -1) clearTimeout(idle.splice(at, 1)[0]!.timer);
  });
  return worker;
}

// A worker takes a while to start (it loads the policy schema library: most of a second on a busy
// machine), so one that finished a job waits a minute for the next before it ends. Two at most:
// one job per environment, and there are two environments.
const IDLE_MS = 60_000;
const MAX_IDLE = 2;
const idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];

function takeWorker(): Worker {
  const kept = idle.pop();
  if (!kept) return spawn();
  clearTimeout(kept.timer);
  kept.worker.ref();
  return kept.worker;
}

function keepWorker(worker: Worker): void {
  if (idle.length >= MAX_IDLE) {
    void worker.terminate();
    return;
  }
  // An idle worker never keeps the process alive.
  worker.unref();
  // Its exit handler (spawn) takes it out of the idle list.
  idle.push({ worker, timer: setTimeout(() => void worker.terminate(), IDLE_MS).unref() });
}

class JobThread<T> {
  private readonly worker = takeWorker();
  private waiting: { resolve: (m: FromWorker) => void; reject: (err: Error) => void } | undefined;
  private failure: Error | undefined;
  /** the worker is healthy and between jobs: it may be kept for the next one */
  private reusable = false;
  private readonly onMessage: (message: FromWorker) => void;
  private readonly onError: (err: Error) => void;
  private readonly onExit: (code: number) => void;

  /** the last progress report's handling (its write to the lease row) */
  private reported: Promise<void> = Promise.resolve();

  constructor(
    task: JobTask,
    private readonly signal?: AbortSignal,
    onProgress?: ProgressListener,
    total?: number | null,
  ) {
    const hold = nextHold;
    nextHold = undefined;
    this.onMessage = (message) => {
      if (message.type === 'progress') {
        this.reported = Promise.resolve(onProgress?.(message.progress)).catch(() => {});
        return;
      }
      // A held job's progress so far is written before the test looks at it.
      if (message.type === 'held') return void this.reported.then(() => hold?.reached());
      const waiting = this.waiting;
      this.waiting = undefined;
      if (message.type === 'error') waiting?.reject(fromWireError(message.error));
      else waiting?.resolve(message);
    };
    this.onError = (err) => this.fail(err);
    this.onExit = (code) => this.fail(new Error(`policy job: the worker thread stopped (exit code ${code})`));
    this.worker.on('message', this.onMessage).on('error', this.onError).on('exit', this.onExit);
    signal?.addEventListener('abort', this.abort, { once: true });
    this.worker.postMessage({ type: 'start', task, hold: hold?.flag, total } satisfies ToWorker);
  }

  private readonly abort = () => {
    this.fail(this.signal?.reason instanceof Error ? this.signal.reason : new Error('policy job: aborted'));
    void this.worker.terminate();
  };

  private fail(err: Error): void {
    this.failure ??= err;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(this.failure);
  }

  private async request(message: ToWorker): Promise<FromWorker> {
    if (this.failure) throw this.failure;
    const reply = await new Promise<FromWorker>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.postMessage(message);
    }).catch((err: unknown) => {
      // A job's own error (e.g. too few labels) leaves the worker fit for the next job.
      this.reusable = !this.failure && message.type !== 'page';
      throw err;
    });
    if (message.type !== 'page') this.reusable = true;
    return reply;
  }

  /** Resolves once the worker has folded the page in. */
  async page(rows: WireDecision[]): Promise<void> {
    await this.request({ type: 'page', rows });
  }

  async finish(): Promise<T> {
    const reply = await this.request({ type: 'end' });
    return (reply as Extract<FromWorker, { type: 'result' }>).value as T;
  }

  /** The worker reads the store itself and returns the result. */
  async read(source: StoreSource, environment: Environment, window: Window): Promise<T> {
    const reply = await this.request({ type: 'read', source, environment, window });
    return (reply as Extract<FromWorker, { type: 'result' }>).value as T;
  }

  /** Ends the job: the worker is kept for the next one if it finished cleanly, else ended. */
  async close(): Promise<void> {
    this.signal?.removeEventListener('abort', this.abort);
    this.worker.off('message', this.onMessage).off('error', this.onError).off('exit', this.onExit);
    if (this.reusable && !this.failure) keepWorker(this.worker);
    else await this.worker.terminate();
  }
}

/** Runs the job in a worker that reads the store over its own connection. */
export async function runJobReading<T>(
  task: JobTask,
  source: StoreSource,
  environment: Environment,
  window: Window,
  signal?: AbortSignal,
  onProgress?: ProgressListener,
): Promise<T> {
  const thread = new JobThread<T>(task, signal, onProgress);
  try {
    return await thread.read(source, environment, window);
  } finally {
    await thread.close();
  }
}

/**
 * Feeds every page to the thread and returns its result; the next page is read while the worker
 * folds in the current one. The thread is closed however the run ends.
 */
export async function runJob<T>(
  task: JobTask,
  pages: AsyncIterable<WireDecision[]>,
  signal?: AbortSignal,
  onProgress?: ProgressListener,
  total?: number | null,
): Promise<T> {
  const thread = new JobThread<T>(task, signal, onProgress, total);
  const reader = pages[Symbol.asyncIterator]();
  try {
    let next = reader.next();
    for (;;) {
      const { value, done } = await next;
      if (done) break;
      const folded = thread.page(value);
      next = reader.next();
      // The read started above must not reject unobserved if the worker fails first.
      next.catch(() => {});
      await folded;
    }
    return await thread.finish();
  } finally {
    await reader.return?.();
    await thread.close();
  }
}
