// Policy jobs (issue 18): at most one fit or backtest per environment at a time, across every
// instance and worker process. The row is the lease: its environment is the key, so a second job
// cannot insert one; a live holder refreshes heartbeat_at, and a row whose heartbeat has gone
// stale (its instance died) is taken over (src/policies/jobs.ts).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function policyJobs(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('policy_jobs')
        .addColumn('environment', 'text', (c) => c.primaryKey())
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
