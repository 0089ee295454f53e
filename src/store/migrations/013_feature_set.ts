// Which definition of the signal values a stored feature vector follows (docs/decisions.md,
// "dispute_rate centred on its prior"). Rows stored before this migration, or by a process still
// running older code, keep null: the first definition, which a replay translates
// (src/model/feature-vector.ts, replayableFeatures). Stored vectors themselves are never rewritten:
// they are the audit record of what a score saw.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function featureSet(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('decisions').addColumn('feature_set', 'integer').execute();
    },
  };
}
