// Webhook isolation (issue 18): a circuit breaker per endpoint (consecutive failures, and the time
// its deliveries are paused until), and the fan-out outbox: one compact row per ingest request
// that flags entities, committed with the request and expanded into events and deliveries by the
// delivery worker afterwards, so a large fraud batch never writes thousands of outbox rows while
// it holds the write lock.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function webhookIsolation(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('webhooks')
        .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('webhooks')
        .addColumn('paused_until', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('webhook_fanouts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('owner_client_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('facts', 'text', (c) => c.notNull())
        // the expanded events (JSON), written once; then `progress` of them are in the outbox
        .addColumn('plan', 'text')
        .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_fanouts_created').on('webhook_fanouts').columns(['created_at']).execute();
    },
  };
}
