// The network (docs/network.md): this deployment's identity, its peers, what it publishes to them,
// what it pulled from them, and what matched. Only the identity's private keys are secrets; they
// are sealed under the key-encryption key like the signing keys.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function network(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('network_identity')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('signing_private', 'text', (c) => c.notNull())
        .addColumn('signing_public', 'text', (c) => c.notNull())
        .addColumn('oprf_secret', 'text', (c) => c.notNull())
        .addColumn('oprf_public', 'text', (c) => c.notNull())
        .addColumn('sync_lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('network_peers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('signing_key', 'text', (c) => c.notNull().unique())
        .addColumn('oprf_public', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('weight', 'double precision', (c) => c.notNull())
        .addColumn('publish', 'text', (c) => c.notNull())
        .addColumn('publish_epoch', 'bigint', (c) => c.notNull())
        .addColumn('budget_per_day', 'bigint', (c) => c.notNull())
        .addColumn('flags_since', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('flags_epoch', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('last_sync_at', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('network_nonces')
        .addColumn('peer_id', 'text', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('network_nonces_pk', ['peer_id', 'nonce'])
        .execute();
      await db.schema.createIndex('network_nonces_expires').on('network_nonces').column('expires_at').execute();

      await db.schema
        .createTable('network_budget')
        .addColumn('peer_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('used', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('network_budget_pk', ['peer_id', 'day'])
        .execute();

      // What this deployment publishes: one row per flagged identifier (source), or a tombstone
      // (source and label gone) once it is no longer flagged or was erased.
      await db.schema
        .createTable('network_published')
        .addColumn('tag', 'text', (c) => c.primaryKey())
        .addColumn('source', 'text', (c) => c.unique())
        .addColumn('label', 'text')
        .addColumn('label_key', 'text')
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('network_published_seq').on('network_published').columns(['seq', 'tag']).execute();

      // A peer's published entries as pulled: opaque until a local identifier's tag meets one.
      await db.schema
        .createTable('network_peer_flags')
        .addColumn('peer_id', 'text', (c) => c.notNull())
        .addColumn('tag', 'text', (c) => c.notNull())
        .addColumn('sealed', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('network_peer_flags_pk', ['peer_id', 'tag'])
        .execute();

      // The peer's PRF of each local identifier (as a tag and a label key), so each identifier is
      // evaluated once per peer key rather than at every sync.
      await db.schema
        .createTable('network_resolved')
        .addColumn('peer_id', 'text', (c) => c.notNull())
        .addColumn('id_type', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('oprf_public', 'text', (c) => c.notNull())
        .addColumn('tag', 'text', (c) => c.notNull())
        .addColumn('label_key', 'text', (c) => c.notNull())
        .addColumn('resolved_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('network_resolved_pk', ['peer_id', 'id_type', 'hash'])
        .execute();

      await db.schema
        .createTable('network_matches')
        .addColumn('peer_id', 'text', (c) => c.notNull())
        .addColumn('id_type', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('matched_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('network_matches_pk', ['peer_id', 'id_type', 'hash'])
        .execute();
      await db.schema
        .createIndex('network_matches_identifier')
        .on('network_matches')
        .columns(['id_type', 'hash'])
        .execute();
    },
  };
}
