// The Idempotency-Key claim a decision answered (docs/api.md, "Integration"), as a digest, written in
// the decision's own commit: a retry whose claim is still pending (its response was never stored:
// a crash or a dropped connection after the commit) finds the decision and repeats it instead of
// deciding twice. Partial index: only decisions made under a key pay for it.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function decisionClaims(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('decisions').addColumn('claim', 'text').execute();
      await sql`create index decisions_claim on decisions (claim) where claim is not null`.execute(db);
    },
  };
}
