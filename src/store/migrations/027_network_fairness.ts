// Fair resolution of identifiers named only in score requests (docs/network.md, "Using it"): each
// queued row names the client whose request named it, so every client gets its turn and a quota of
// rows still waiting for a peer (`queued`: 1 until every active peer resolved it, recomputed at each
// sync). And the descriptor's name the serving deployment runs with, so `vouch network status` in
// another process shows the name peers see.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function networkFairness(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('network_pending')
        .addColumn('client_id', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema
        .alterTable('network_pending')
        .addColumn('queued', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .createIndex('network_pending_client')
        .on('network_pending')
        .columns(['client_id', 'queued'])
        .execute();
      await db.schema
        .alterTable('network_identity')
        .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
    },
  };
}
