// Test mode (docs/api.md, "Integration", issue 11): every data row belongs to an environment, `live` or `test`.
// A `vch_test_` key, or a token of a test client, reads and writes only test rows; everything else
// only live ones. The environment leads each primary key, so the same entity id, event id,
// identifier or policy version can exist once per environment and every lookup stays a key lookup.
// Rows stored before this migration are live.
//
// PostgreSQL changes a primary key in place; SQLite cannot, so there each table is rebuilt from its
// own column list (pragma table_info), which keeps the columns later migrations added.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

interface Repartition {
  table: string;
  /** the new primary key, environment first */
  key: string[];
  /** indexes to drop and create again with the environment leading */
  indexes?: Record<string, string[]>;
}

// identifiers_entity covers the columns the profile query reads: otherwise SQLite prefers the
// primary key, which also covers them but matches only the environment, and scans every
// identifier of the environment for each score.
const ENTITY_KEYED: Repartition[] = [
  {
    table: 'events',
    key: ['environment', 'client_id', 'event_id'],
    indexes: { events_entity: ['environment', 'entity_id', 'occurred_at'] },
  },
  { table: 'entities', key: ['environment', 'entity_id'] },
  { table: 'entity_currency', key: ['environment', 'entity_id', 'currency'] },
  { table: 'entity_hourly', key: ['environment', 'entity_id', 'bucket', 'currency'] },
  { table: 'entity_counterparties', key: ['environment', 'entity_id', 'counterparty_id'] },
  {
    table: 'identifiers',
    key: ['environment', 'id_type', 'hash', 'entity_id'],
    indexes: { identifiers_entity: ['environment', 'entity_id', 'id_type', 'hash'] },
  },
  { table: 'identifier_stats', key: ['environment', 'id_type', 'hash'] },
  { table: 'policies', key: ['environment', 'version'] },
  {
    table: 'idempotency_keys',
    key: ['environment', 'client_id', 'idem_key'],
    indexes: { idempotency_keys_expires: ['expires_at'] },
  },
];

/** Tables whose key stays; they gain the column (and their listing indexes lead with it). */
const TAGGED: Array<{ table: string; indexes?: Record<string, string[]> }> = [
  { table: 'clients' },
  {
    table: 'decisions',
    indexes: {
      decisions_subject_trade: ['environment', 'subject_id', 'trade_id'],
      decisions_created: ['environment', 'created_at', 'id'],
      decisions_owner_created: ['environment', 'owner_client_id', 'created_at', 'id'],
    },
  },
  { table: 'webhooks', indexes: { webhooks_owner_created: ['environment', 'owner_client_id', 'created_at'] } },
  { table: 'webhook_events' },
];

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function recreateIndexes(
  db: Kysely<unknown>,
  table: string,
  indexes: Record<string, string[]> = {},
): Promise<void> {
  for (const [name, columns] of Object.entries(indexes)) {
    await db.schema.dropIndex(name).ifExists().execute();
    await db.schema.createIndex(name).on(table).columns(columns).execute();
  }
}

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
}

async function rebuildSqlite(db: Kysely<unknown>, { table, key, indexes }: Repartition): Promise<void> {
  const columns = (
    await sql<ColumnInfo>`select name, type, "notnull", dflt_value from pragma_table_info(${table})`.execute(db)
  ).rows;
  const definitions = columns.map(
    (c) =>
      `${quote(c.name)} ${c.type}${c.notnull ? ' not null' : ''}${c.dflt_value !== null ? ` default ${c.dflt_value}` : ''}`,
  );
  const next = `${table}_by_environment`;
  await sql
    .raw(
      `create table ${quote(next)} (environment text not null default 'live', ${definitions.join(', ')}, primary key (${key.map(quote).join(', ')}))`,
    )
    .execute(db);
  const names = columns.map((c) => quote(c.name)).join(', ');
  await sql
    .raw(`insert into ${quote(next)} (environment, ${names}) select 'live', ${names} from ${quote(table)}`)
    .execute(db);
  await db.schema.dropTable(table).execute();
  await db.schema.alterTable(next).renameTo(table).execute();
  await recreateIndexes(db, table, indexes);
}

async function rekeyPostgres(db: Kysely<unknown>, { table, key, indexes }: Repartition): Promise<void> {
  await sql.raw(`alter table ${quote(table)} add column environment text not null default 'live'`).execute(db);
  const [pk] = (
    await sql<{ name: string }>`
    select conname as name from pg_constraint where conrelid = cast(${table} as regclass) and contype = 'p'`.execute(db)
  ).rows;
  if (pk) await sql.raw(`alter table ${quote(table)} drop constraint ${quote(pk.name)}`).execute(db);
  await sql.raw(`alter table ${quote(table)} add primary key (${key.map(quote).join(', ')})`).execute(db);
  await recreateIndexes(db, table, indexes);
}

export function environments(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const spec of ENTITY_KEYED) {
        if (dialect === 'postgres') await rekeyPostgres(db, spec);
        else await rebuildSqlite(db, spec);
      }
      for (const { table, indexes } of TAGGED) {
        await db.schema
          .alterTable(table)
          .addColumn('environment', 'text', (c) => c.notNull().defaultTo('live'))
          .execute();
        await recreateIndexes(db, table, indexes);
      }
      // One active and at most one shadow policy per environment (were: per store).
      await db.schema.dropIndex('policies_one_active').ifExists().execute();
      await db.schema.dropIndex('policies_one_shadow').ifExists().execute();
      await sql`create unique index policies_one_active on policies (environment, status) where status = 'active'`.execute(
        db,
      );
      await sql`create unique index policies_one_shadow on policies (environment, status) where status = 'shadow'`.execute(
        db,
      );
    },
  };
}
