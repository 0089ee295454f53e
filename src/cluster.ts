// `vouch serve --workers N`: one primary that prepares the store once, then N workers sharing the
// listening socket (node:cluster). Workers keep their caches coherent through the store (entity
// versions, SQLite data_version / PostgreSQL NOTIFY) and, when configured, Redis.
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config/env.ts';
import { HOST_WRITER_ENV, prepareStore, SHUTDOWN_MESSAGE, STARTUP_FAILED_MESSAGE, STOP_SIGNALS } from './server.ts';
import { DecisionWriter } from './audit/decisions.ts';
import { answerCall, decisionHandler } from './audit/host-writer.ts';
import { EVENTS_KIND, ingestionHandler } from './trust/ingest-host.ts';
import { decisionWebhooks } from './webhooks/events.ts';
import { serveClusterMetrics } from './http/cluster-metrics.ts';
import { serveClusterRateLimits } from './http/cluster-rate-limit.ts';

/** How long the workers get to finish their in-flight requests (theirs is 10 s) before the primary gives up. */
const STOP_DEADLINE_MS = 15_000;

export async function servePrimary(config: Config, workers: number): Promise<void> {
  // Migrations and the bootstrap admin run once, before any worker starts.
  const store = await prepareStore(config);
  // On SQLite the primary is the host's one writer (audit/host-writer.ts): the workers send it
  // their decision rows and event batches, and it commits every worker's of one turn in one
  // transaction, checkpointing between commits.
  let writer: DecisionWriter | undefined;
  if (store.dialect === 'sqlite') {
    const decisions = new DecisionWriter(store.db, decisionWebhooks, {
      between: async () => {
        await store.checkpointIfDue!();
      },
    });
    writer = decisions;
    const handlers = { decisions: decisionHandler(decisions), [EVENTS_KIND]: ingestionHandler(store) };
    cluster.on('message', (worker, message: unknown) => {
      void answerCall(handlers, message, (answer) => {
        if (worker.isConnected())
          worker.send(answer, (err: Error | null) => {
            void err; /* the worker is gone: so is its request */
          });
      }).catch(() => {
        /* the answer could not be sent: the worker is gone */
      });
    });
  } else await store.close();
  /** Exits once what the workers handed to the writer is committed and the store closed. */
  const exit = (code: number) => {
    const closing = writer ? writer.drain().then(() => store.close()) : Promise.resolve();
    void closing.catch(() => {}).then(() => process.exit(code));
  };

  // A /metrics scrape reaches one worker, which asks the primary for every worker's metrics.
  serveClusterMetrics();
  // Without Redis the workers count their rate limits here, so the limits hold for the whole host.
  serveClusterRateLimits();

  let stopping = false;
  let failed = false;
  // Until one worker has served, a worker that exits is a start-up failure (a bad setting, a taken
  // port) that every replacement would repeat: stop with its reason instead of restarting forever.
  let served = false;
  let fatal: string | undefined;
  cluster.on('listening', () => {
    served = true;
  });
  cluster.on('message', (_worker, message: unknown) => {
    const m = message as { type?: unknown; message?: unknown } | null;
    if (typeof m !== 'object' || m === null || m.type !== STARTUP_FAILED_MESSAGE || fatal !== undefined) return;
    fatal = typeof m.message === 'string' ? m.message : 'a worker could not start';
    giveUp(fatal);
  });
  const giveUp = (reason: string) => {
    if (stopping) return;
    process.stderr.write(`vouch: ${reason}\n`);
    stopping = true;
    failed = true;
    for (const worker of alive) worker.process.kill('SIGKILL');
    if (alive.size === 0) process.exit(1);
  };
  // Counted by our own 'exit' listeners: cluster.workers drops a worker only once it has both
  // exited and disconnected, in either order, so it cannot tell reliably when the last one is gone.
  const alive = new Set<Worker>();
  const fork = () => {
    const worker = cluster.fork({ VOUCH_CLUSTER_WORKER: '1', ...(writer ? { [HOST_WRITER_ENV]: '1' } : {}) });
    alive.add(worker);
    worker.once('exit', (code, signal) => {
      alive.delete(worker);
      if (stopping) {
        if (code !== 0) failed = true;
        if (alive.size === 0) exit(failed ? 1 : 0);
        return;
      }
      if (!served) {
        // Its last message (the reason) may still be on its way: read it first.
        setTimeout(
          () => giveUp(`worker ${worker.process.pid} exited (${signal ?? code}) before it could serve; stopping`),
          200,
        );
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
    if (alive.size === 0) exit(0);
    // Each worker drains its in-flight requests, then exits. A message rather than a signal: the
    // workers may get the signal itself too (a process-group signal), and must see one stop only.
    for (const worker of alive) {
      if (worker.isConnected())
        worker.send(SHUTDOWN_MESSAGE, (err: Error | null) => {
          if (err) worker.process.kill('SIGTERM');
        });
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
