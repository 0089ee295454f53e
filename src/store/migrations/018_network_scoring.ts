// The network in scoring (docs/network.md, "The signal network_flags"): which peers contributed to
// a score decision; a version of what the network says, bumped at every sync and peer change, so
// that a cached score read before it is stale; and the identifiers seen only in score requests'
// context, queued for the next sync to resolve.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function networkScoring(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('decisions').addColumn('network_peers', 'text').execute();
      await db.schema
        .alterTable('network_identity')
        .addColumn('state_version', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('network_pending')
        .addColumn('id_type', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('seen_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('network_pending_pk', ['id_type', 'hash'])
        .execute();
      await db.schema.createIndex('network_pending_seen').on('network_pending').column('seen_at').execute();
    },
  };
}
