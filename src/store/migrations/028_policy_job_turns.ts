// Whose turn the environment's one fit-or-backtest slot is next (issue 29 item 11;
// docs/decisions.md, 2026-11-27): the client refused while the slot was busy, its role (an
// admin's turn outranks another's) and when it last asked. One row per environment at most,
// written by src/policies/job-turns.ts; the lease itself stays on policy_jobs (011).
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function policyJobTurns(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('policy_job_turns')
        .addColumn('environment', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('reserved_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
