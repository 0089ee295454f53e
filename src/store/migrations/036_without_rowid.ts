// The aggregate tables as WITHOUT ROWID tables on SQLite (issue 42, docs/benchmarks.md): each is
// read and written only by its primary key, which in a rowid table is a second b-tree (the key's
// index) pointing into the first (the rows), so every read and every upsert walks two trees and
// writes two. Without a rowid the row lives in the key's own b-tree. PostgreSQL has no rowid: unchanged.
//
// SQLite cannot change this in place, so each table is rebuilt: a new table of the same columns and
// key (from pragma table_info, as 009_environments did, so columns later migrations added stay),
// the rows copied in key order, the old table dropped and the new one renamed, then the old table's
// indexes and triggers (024_change_counter's) created again from their own stored text. Kysely runs
// SQLite's migrations outside a transaction, so the rebuild opens its own: a failure leaves the
// tables as they were, and a table already without a rowid is left alone, so running it again is safe.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

const AGGREGATES = ['entities', 'identifiers', 'entity_currency', 'entity_hourly', 'entity_counterparties'];

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

async function rebuild(db: Kysely<unknown>, table: string): Promise<void> {
  const [current] = (
    await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db)
  ).rows;
  if (!current || /without\s+rowid\s*$/i.test(current.sql)) return;
  const columns = (
    await sql<ColumnInfo>`select name, type, "notnull", dflt_value, pk from pragma_table_info(${table})`.execute(db)
  ).rows;
  const key = columns
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => quote(c.name));
  if (key.length === 0) throw new Error(`${table} has no primary key to keep its rows by`);
  // Created again after the rename: dropping the table drops them (autoindexes have no text and come with the key).
  const dependents = (
    await sql<{ sql: string }>`
      select sql from sqlite_master where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null
      order by type, name`.execute(db)
  ).rows;
  const definitions = columns.map(
    (c) =>
      `${quote(c.name)} ${c.type}${c.notnull ? ' not null' : ''}${c.dflt_value !== null ? ` default ${c.dflt_value}` : ''}`,
  );
  const next = `${table}_without_rowid`;
  await sql
    .raw(`create table ${quote(next)} (${definitions.join(', ')}, primary key (${key.join(', ')})) without rowid`)
    .execute(db);
  const names = columns.map((c) => quote(c.name)).join(', ');
  // In key order, each row lands at the end of the new b-tree: no page splits in the middle.
  await sql
    .raw(`insert into ${quote(next)} (${names}) select ${names} from ${quote(table)} order by ${key.join(', ')}`)
    .execute(db);
  await sql.raw(`drop table ${quote(table)}`).execute(db);
  await sql.raw(`alter table ${quote(next)} rename to ${quote(table)}`).execute(db);
  for (const d of dependents) await sql.raw(d.sql).execute(db);
}

export function withoutRowid(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'sqlite') return;
      await db.transaction().execute(async (trx) => {
        for (const table of AGGREGATES) await rebuild(trx, table);
      });
    },
  };
}
