// The learning loop (docs/api.md, "Outcomes and labels", §9): score decisions keep their feature vector, trade id,
// label and the shadow policy's score; policies live in the store as versions.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function learning(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // SQLite takes one column per ALTER TABLE statement.
      for (const [name, type] of [
        ['features', 'text'],
        ['trade_id', 'text'],
        ['risk_level', 'text'],
        ['shadow_version', 'text'],
        ['shadow_score', 'integer'],
        ['label', 'text'],
        ['label_source', 'text'],
        ['label_note', 'text'],
        ['labelled_at', 'bigint'],
        ['labelled_by', 'text'],
      ] as const) {
        await db.schema.alterTable('decisions').addColumn(name, type).execute();
      }
      // Event labels find the decisions of one entity's trade; the list pages newest first.
      await db.schema
        .createIndex('decisions_subject_trade')
        .on('decisions')
        .columns(['subject_id', 'trade_id'])
        .execute();
      await db.schema.createIndex('decisions_created').on('decisions').columns(['created_at', 'id']).execute();
      await db.schema
        .createIndex('decisions_owner_created')
        .on('decisions')
        .columns(['owner_client_id', 'created_at', 'id'])
        .execute();

      await db.schema
        .createTable('policies')
        .addColumn('version', 'text', (c) => c.primaryKey())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('parent_version', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('created_by', 'text')
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('report', 'text')
        .execute();
      // Exactly one active and at most one shadow policy, held by the store itself.
      await sql`create unique index policies_one_active on policies (status) where status = 'active'`.execute(db);
      await sql`create unique index policies_one_shadow on policies (status) where status = 'shadow'`.execute(db);
    },
  };
}
