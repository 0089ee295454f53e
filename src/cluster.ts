// `vouch serve --workers N`: one primary that prepares the store once, then N workers sharing the
// listening socket (node:cluster). Workers keep their caches coherent through the store (entity
// versions, SQLite data_version / PostgreSQL NOTIFY) and, when configured, Redis.
import cluster from 'node:cluster';
import type { Config } from './config/env.ts';
import { prepareStore } from './server.ts';

export async function servePrimary(config: Config, workers: number): Promise<void> {
  // Migrations and the bootstrap admin run once, before any worker starts.
  const store = await prepareStore(config);
  await store.close();

  let stopping = false;
  const fork = () => cluster.fork({ VOUCH_CLUSTER_WORKER: '1' });
  for (let i = 0; i < workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    process.stderr.write(`vouch: worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    setTimeout(fork, 500);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    // Each worker drains its in-flight requests on SIGTERM before it exits.
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
    const deadline = setTimeout(() => process.exit(1), 15_000);
    deadline.unref();
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
