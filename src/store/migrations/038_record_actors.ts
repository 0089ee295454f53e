// Who changed the records that kept no actor (docs/api.md, "Audit log", "Who"): who activated a
// policy, who created an API key, who last put the environment's settings and when. Each column
// keeps the acting principal's id only (a user's, a client's, an API key's, or `cli`); the read
// names it as the person or client is called then (src/audit-log/actors.ts). Nullable: what was
// done before this migration was not recorded, and answers null.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function recordActors(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('policies').addColumn('activated_by', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
      await db.schema.alterTable('settings').addColumn('updated_by', 'text').execute();
      await db.schema.alterTable('settings').addColumn('updated_at', 'bigint').execute();
    },
  };
}
