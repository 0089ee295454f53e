// Event ids are unique per client, not globally (issue 8, item 7): one client can no longer
// shadow another's events by reusing their ids. The primary key becomes (client_id, event_id);
// SQLite cannot change a primary key in place, so the table is rebuilt on both dialects alike.
// Events stored before this migration have no known owner: they get client_id '' (the CLI
// import's owner too), so no API client's new events ever collide with them.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function eventScope(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('events_scoped')
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('entity_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('occurred_at', 'bigint', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('ingested_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('events_client_event_pk', ['client_id', 'event_id'])
        .execute();
      await sql`
        insert into events_scoped (client_id, event_id, entity_id, type, occurred_at, payload, ingested_at)
        select '', event_id, entity_id, type, occurred_at, payload, ingested_at from events`.execute(db);
      await db.schema.dropTable('events').execute();
      await db.schema.alterTable('events_scoped').renameTo('events').execute();
      await db.schema.createIndex('events_entity').on('events').columns(['entity_id', 'occurred_at']).execute();
    },
  };
}
