// `vouch serve --workers N`: one primary that prepares the store once, then N workers sharing the
// listening socket (node:cluster). Workers keep their caches coherent through the store (entity
// versions, SQLite data_version / PostgreSQL NOTIFY) and, when configured, Redis.
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config/env.ts';
import { prepareStore, SHUTDOWN_MESSAGE, STOP_SIGNALS } from './server.ts';
import { serveClusterMetrics } from './http/cluster-metrics.ts';

/** How long the workers get to finish their in-flight requests (theirs is 10 s) before the primary gives up. */
const STOP_DEADLINE_MS = 15_000;

export async function servePrimary(config: Config, workers: number): Promise<void> {
  // Migrations and the bootstrap admin run once, before any worker starts.
  const store = await prepareStore(config);
  await store.close();

  // A /metrics scrape reaches one worker, which asks the primary for every worker's metrics.
  serveClusterMetrics();

  let stopping = false;
  let failed = false;
  // Counted by our own 'exit' listeners: cluster.workers drops a worker only once it has both
  // exited and disconnected, in either order, so it cannot tell reliably when the last one is gone.
  const alive = new Set<Worker>();
  const fork = () => {
    const worker = cluster.fork({ VOUCH_CLUSTER_WORKER: '1' });
    alive.add(worker);
    worker.once('exit', (code, signal) => {
      alive.delete(worker);
      if (stopping) {
        if (code !== 0) failed = true;
        if (alive.size === 0) process.exit(failed ? 1 : 0);
        return;
      }
      process.stderr.write(`vouch: worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
      setTimeout(() => {
        if (!stopping) fork();
      }, 500);
    });
  };
  for (let i = 0; i < workers; i++) fork();

  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (alive.size === 0) process.exit(0);
    // Each worker drains its in-flight requests, then exits. A message rather than a signal: the
    // workers may get the signal itself too (a process-group signal), and must see one stop only.
    for (const worker of alive) {
      if (worker.isConnected()) worker.send(SHUTDOWN_MESSAGE, (err: Error | null) => { if (err) worker.process.kill('SIGTERM'); });
      else worker.process.kill('SIGTERM');
    }
    const deadline = setTimeout(() => {
      for (const worker of alive) worker.process.kill('SIGKILL');
      process.exit(1);
    }, STOP_DEADLINE_MS);
    deadline.unref();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
}
