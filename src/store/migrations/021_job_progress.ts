// Progress of a running fit or backtest (issue 20 item 5), on its lease row so that any instance
// can show it: the phase, the decisions read and kept as labelled so far, the number of decisions
// the job will read (counted when it starts; null until then) and when the job last reported.
// The holder writes them with its heartbeat, not per row (src/policies/jobs.ts).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function jobProgress(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('policy_jobs')
        .addColumn('phase', 'text', (c) => c.notNull().defaultTo('reading'))
        .execute();
      await db.schema
        .alterTable('policy_jobs')
        .addColumn('decisions_read', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('policy_jobs')
        .addColumn('labelled', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('policy_jobs').addColumn('total', 'bigint').execute();
      await db.schema.alterTable('policy_jobs').addColumn('updated_at', 'bigint').execute();
    },
  };
}
