// The network, incremental (docs/network.md, "Publishing" and "Using it"): the publisher keeps a
// watermark of the history it has published through and finds what changed after it by index
// (flag events by ingestion time, identifier links by creation time) instead of recomputing its
// whole set; the published rows say their identifier type (never the hash), so entries of the
// `entity` type can be withdrawn when the common entity hashing is switched off; a peer's pull
// keeps its cursor, so a large first pull spreads over several syncs and resumes after a failure;
// and identifiers named only in score requests are tied to the entity they were scored for, so
// its erasure removes them.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

/** The event types that change what an entity publishes (their partial index must name the same list). */
export const PUBLISH_EVENT_TYPES = [
  'fraud.reported',
  'chargeback',
  'entity.blocklisted',
  'entity.unblocklisted',
  'dispute.resolved',
] as const;

export function networkIncremental(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('network_identity')
        .addColumn('published_through', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('network_published').addColumn('id_type', 'text').execute();
      await db.schema
        .alterTable('network_peers')
        .addColumn('flags_cursor', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      // Only the few event types that flag or unflag pay for this index; ingestion of trades does not.
      await db.schema
        .createIndex('events_publish')
        .on('events')
        .columns(['environment', 'ingested_at'])
        .where(sql.ref('type'), 'in', [...PUBLISH_EVENT_TYPES])
        .execute();
      await db.schema
        .createIndex('identifiers_created')
        .on('identifiers')
        .columns(['environment', 'created_at'])
        .execute();

      // network_pending gains the entity in its key: the queue is recreated, its rows kept (entity '').
      await db.schema.alterTable('network_pending').renameTo('network_pending_018').execute();
      await db.schema.dropIndex('network_pending_seen').execute();
      await db.schema
        .createTable('network_pending')
        .addColumn('id_type', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('entity_id', 'text', (c) => c.notNull())
        .addColumn('seen_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('network_pending_key', ['id_type', 'hash', 'entity_id'])
        .execute();
      await db.schema.createIndex('network_pending_seen').on('network_pending').column('seen_at').execute();
      await db.schema.createIndex('network_pending_entity').on('network_pending').column('entity_id').execute();
      await sql`insert into network_pending (id_type, hash, entity_id, seen_at) select id_type, hash, '', seen_at from network_pending_018`.execute(
        db,
      );
      await db.schema.dropTable('network_pending_018').execute();
    },
  };
}
