// SQLite's automatic checkpoint runs inside the commit that crosses its threshold: that commit
// copies the WAL into the database file and fsyncs it, on the event loop, while requests wait.
// Measured on 100-event batches: 131 µs of commit per event with it, 37 µs without. So the serving
// connection turns it off, and a worker thread with its own connection checkpoints instead, in
// PASSIVE mode: it never blocks the writer or a reader, copies only what no reader still needs,
// and lets SQLite reuse the WAL from its start once everything is copied.
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
function checkpoint() {
  if (!running) return;
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or gone: the next tick tries again */ }
  setTimeout(checkpoint, workerData.intervalMs).unref();
}
setTimeout(checkpoint, workerData.intervalMs).unref();
parentPort.on('message', () => {
  running = false;
  try { db.pragma('wal_checkpoint(PASSIVE)'); db.close(); } catch { /* closing anyway */ }
  parentPort.postMessage('closed');
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Starts checkpointing `path` (a WAL-mode database file) every `intervalMs`. Should the worker die,
 * `onFailure` runs so that the caller can hand checkpoints back to SQLite.
 */
export function startCheckpointer(path: string, onFailure: () => void, intervalMs = 250): Checkpointer {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { path, module, intervalMs } });
  let failed = false;
  worker.on('error', () => {
    failed = true;
    onFailure();
  });
  worker.unref();
  return {
    async stop() {
      if (failed) return;
      const closed = new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.once('exit', () => resolve());
      });
      worker.postMessage('stop');
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000))]);
      await worker.terminate();
    },
  };
}
