// SQLite's automatic checkpoint runs inside the commit that crosses its threshold: that commit
// copies the WAL into the database file and fsyncs it, on the event loop, while requests wait.
// Measured on 100-event batches: 131 µs of commit per event with it, 37 µs without. So the serving
// connection turns it off, and a worker thread with its own connection checkpoints instead, in
// PASSIVE mode: it never blocks the writer or a reader, copies only what no reader still needs,
// and lets SQLite reuse the WAL from its start once everything is copied.
//
// PASSIVE alone does not bound the WAL: under sustained writes the checkpoint never catches up
// with the writer, SQLite never gets to restart the WAL from its start, and the file grows (1.45 GB
// was seen). So once the frames written since the WAL last started over pass a bound
// (VOUCH_SQLITE_WAL_LIMIT_MB, docs/operations.md; the file's size is no measure: SQLite reuses a
// WAL file from its start without shrinking it), a process whose writer checkpoints between its
// commits (`delegateMs`, store/db.ts checkpointIfDue) is told so: there, with no commit beside it,
// a PASSIVE checkpoint copies everything and the next commit starts the WAL over, and nobody waits
// for a lock. Without such a writer, or when it has not managed within `delegateMs`, the worker runs
// a TRUNCATE checkpoint: it waits briefly for the writer and readers to finish,
// copies the rest, and truncates the WAL to zero bytes. New writers wait while it runs (at most
// TRUNCATE_WAIT_MS plus the copy of what PASSIVE left), which is why it is kept for that case and
// why the wait is short: the checkpoint holds the write lock while it waits for readers, and a
// 250 ms wait showed as a 30–70 ms p99 for scores (every write behind it waited). A tick that
// finds readers busy gives up and the next one, 250 ms later, tries again; readers' transactions
// last microseconds, so one of them soon finds a gap.
//
// Durability is unchanged: a commit is in the WAL before it is acknowledged (synchronous = NORMAL
// survives a process crash; FULL, see docs/operations.md, a power loss too); the checkpoint only
// moves committed pages into the main file.
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

/** Plain CommonJS, evaluated in the worker: the same code whether Vouch runs from .ts or .js. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
let running = true;
const pageBytes = db.pragma('page_size', { simple: true }) + 24;
function truncate() {
  db.pragma('busy_timeout = ' + workerData.truncateWaitMs);
  try { db.pragma('wal_checkpoint(TRUNCATE)'); } finally { db.pragma('busy_timeout = 0'); }
}
let overSince;
function checkpoint() {
  if (!running) return;
  try {
    // log: the frames written since the WAL last started over. SQLite starts it over by itself once
    // a checkpoint has copied everything, so only a WAL that never catches up passes the bound.
    const [status] = db.pragma('wal_checkpoint(PASSIVE)');
    if (!status || status.log * pageBytes <= workerData.walLimitBytes) overSince = undefined;
    else {
      overSince ??= Date.now();
      // A writer that takes the finish between its own commits is asked first; without one (or
      // while it does not get to it) the TRUNCATE bounds the WAL.
      if (workerData.delegateMs > 0 && Date.now() - overSince < workerData.delegateMs) parentPort.postMessage('over');
      else truncate();
    }
  } catch { /* busy or gone: the next tick tries again */ }
  setTimeout(checkpoint, workerData.intervalMs).unref();
}
setTimeout(checkpoint, workerData.intervalMs).unref();
parentPort.on('message', () => {
  running = false;
  try { db.pragma('wal_checkpoint(PASSIVE)'); db.close(); } catch { /* closing anyway */ }
  parentPort.postMessage('closed');
});
`;

/** How long a TRUNCATE checkpoint waits for the writer and readers before the next tick retries. */
const TRUNCATE_WAIT_MS = 5;
/** How long stop() waits for the thread's last checkpoint and close before it terminates the thread. */
const STOP_WAIT_MS = 2000;
/** VOUCH_SQLITE_WAL_LIMIT_MB's default. */
export const DEFAULT_WAL_LIMIT_BYTES = 1024 * 1024 * 1024;

export interface CheckpointerOptions {
  /** how often to checkpoint */
  intervalMs?: number;
  /** a WAL larger than this is checkpointed in TRUNCATE mode */
  walLimitBytes?: number;
  /**
   * A writer of this process finishes the checkpoint between its commits (`finishBetweenCommits`):
   * the thread asks it for this long before it truncates the WAL itself.
   */
  delegateMs?: number;
}

export interface Checkpointer {
  /** The WAL is over its bound: the next pause between this process's commits should finish a checkpoint. */
  readonly due: boolean;
  /** the writer's checkpoint copied everything: the WAL starts over at the next commit */
  caughtUp(): void;
  stop(): Promise<void>;
}

/**
 * Starts checkpointing `path` (a WAL-mode database file) every `intervalMs`. Should the worker die,
 * `onFailure` runs so that the caller can hand checkpoints back to SQLite.
 */
export function startCheckpointer(
  path: string,
  onFailure: () => void,
  { intervalMs = 250, walLimitBytes = DEFAULT_WAL_LIMIT_BYTES, delegateMs = 0 }: CheckpointerOptions = {},
): Checkpointer {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { path, module, intervalMs, walLimitBytes, truncateWaitMs: TRUNCATE_WAIT_MS, delegateMs },
  });
  let failed = false;
  let due = false;
  worker.on('message', (message) => {
    if (message === 'over') due = true;
  });
  worker.on('error', () => {
    failed = true;
    onFailure();
  });
  worker.unref();
  return {
    get due() {
      return due;
    },
    caughtUp() {
      due = false;
    },
    async stop() {
      if (failed) return;
      const closed = new Promise<void>((resolve) => {
        worker.on('message', (message) => {
          if (message === 'closed') resolve();
        });
        worker.once('exit', () => resolve());
      });
      worker.postMessage('stop');
      // The bound on a worker that never answers; cleared, or it would keep the process alive for
      // its full 2 s after every stop (a server's exit, every test that stops one).
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_WAIT_MS);
      });
      try {
        await Promise.race([closed, bound]);
      } finally {
        clearTimeout(timer);
      }
      await worker.terminate();
    },
  };
}
