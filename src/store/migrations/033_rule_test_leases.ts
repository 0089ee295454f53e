// One rule test per environment across every process (docs/rules.md, "Testing a rule"): the row is
// the claim. A test cannot run past its time limit, so the lease needs no heartbeat: it expires at
// the limit (and a margin), which is also how long a crashed holder blocks its environment.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function ruleTestLeases(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('rule_test_leases')
        .addColumn('environment', 'text', (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
