// A key's owner may be a person (docs/api.md, "People"): an admin signed in to the console creates
// API keys too, and the key's decisions belong to whoever created it, as a client's do. The owner
// column referenced `clients` only, so a person's key failed on the foreign key. The reference goes:
// the owner is whoever the key route authenticated, a `clients` or a `users` row, written once.
//
// SQLite cannot drop a column's reference in place: the table is rebuilt from its own stored text
// with the reference removed, the rows copied, the old table dropped and the new one renamed, and
// its indexes created again from their stored text, in one transaction (Kysely runs SQLite's
// migrations outside one). PostgreSQL drops the constraint.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

const REFERENCE = /\s+references\s+"clients"\s*\("id"\)/i;

async function rebuildWithoutReference(db: Kysely<unknown>): Promise<void> {
  const [table] = (
    await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'api_keys'`.execute(db)
  ).rows;
  if (!table || !REFERENCE.test(table.sql)) return;
  const indexes = (
    await sql<{ sql: string }>`
      select sql from sqlite_master where tbl_name = 'api_keys' and type = 'index' and sql is not null
      order by name`.execute(db)
  ).rows;
  const created = table.sql.replace(REFERENCE, '').replace(/^CREATE TABLE "api_keys"/i, 'CREATE TABLE "api_keys_next"');
  await sql.raw(created).execute(db);
  await sql.raw('insert into "api_keys_next" select * from "api_keys"').execute(db);
  await sql.raw('drop table "api_keys"').execute(db);
  await sql.raw('alter table "api_keys_next" rename to "api_keys"').execute(db);
  for (const index of indexes) await sql.raw(index.sql).execute(db);
}

export function keyOwners(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === 'postgres') {
        await sql`alter table api_keys drop constraint if exists api_keys_owner_client_id_fkey`.execute(db);
        return;
      }
      await db.transaction().execute(rebuildWithoutReference);
    },
  };
}
