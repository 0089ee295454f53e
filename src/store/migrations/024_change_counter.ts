// A counter of the commits that change what cached reads depend on (store/changes.ts): an entity's
// aggregates, an identifier's holders, the network's state and the revocation feed. On SQLite,
// PRAGMA data_version moves with every commit of another connection, and on a host whose one writer
// commits decisions all the time it moves nearly every turn; the counter moves only when one of
// these tables changes, so a worker's caches outlive commits that stored decisions only. Kept by
// triggers, so every writer (any process, any feature) moves it without knowing about it.
// SQLite only: on PostgreSQL a single row updated by every ingesting transaction would serialise
// them, and nothing there reads it (its caches ask the store instead).
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

/** The tables whose changes move the counter, and the operations that do. */
const WATCHED: ReadonlyArray<[table: string, operations: readonly string[]]> = [
  ['entities', ['insert', 'update', 'delete']],
  ['identifier_stats', ['insert', 'update', 'delete']],
  ['network_identity', ['insert', 'update', 'delete']],
  ['revocations', ['insert']],
];

export function changeCounter(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'sqlite') return;
      await db.schema
        .createTable('store_changes')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('n', 'bigint', (c) => c.notNull())
        .execute();
      await sql`insert into store_changes (id, n) values (1, 0)`.execute(db);
      for (const [table, operations] of WATCHED) {
        for (const operation of operations) {
          await sql
            .raw(
              `create trigger store_changes_${table}_${operation} after ${operation} on ${table}
            begin update store_changes set n = n + 1 where id = 1; end`,
            )
            .execute(db);
        }
      }
    },
  };
}
