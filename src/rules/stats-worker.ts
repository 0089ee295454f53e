// The worker thread of rule statistics (stats-thread.ts): reading up to 200,000 decisions with a
// match and parsing their matched rules takes seconds, which on the event loop would hold every
// request. The worker reads over a connection of its own (store/readers.ts), kept for the next ask.
import { parentPort } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { openReader } from '../store/readers.ts';
import { ruleStats } from './stats.ts';
import type { StatsJob } from './stats-thread.ts';

const port = parentPort!;
const readers = new Map<string, Kysely<Database>>();

function readerFor(job: StatsJob): Kysely<Database> {
  const key = JSON.stringify(job.source);
  let db = readers.get(key);
  if (!db) readers.set(key, (db = openReader(job.source)));
  return db;
}

port.on('message', (job: StatsJob & { id: number }) => {
  ruleStats(readerFor(job), job.environment, job.days, job.now, job.owner).then(
    (value) => port.postMessage({ id: job.id, ok: true, value }),
    (err: unknown) =>
      port.postMessage({ id: job.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
