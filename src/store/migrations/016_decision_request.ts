// What a decision was asked (docs/api.md, "Decisions"): a score's amount, currency and trade
// context, a dispute's trade, reason, opener and evidence, so an operator reading a decision sees
// what was decided without the caller's logs. No entity ids: those are the decision's subject and
// result, which erasure rewrites.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function decisionRequest(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('decisions').addColumn('request', 'text').execute();
    },
  };
}
