// Idempotency records bound to the principal (docs/api.md, "Idempotency"): a stored response
// replays only to the credential that made the request, never to another key or token of the same
// client, which may hold other rights. The key of the table changes, so it is created anew; the
// records of the last 24 h are not carried over (their principal is unknown), so a retry of such a
// request runs it again rather than replaying another credential's response.
// Also the erasure log: who erased, when and how much, never the raw id.
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function principalBound(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropTable('idempotency_keys').execute();
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('principal_id', 'text', (c) => c.notNull())
        .addColumn('idem_key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('response', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['environment', 'client_id', 'principal_id', 'idem_key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at').execute();

      await db.schema
        .createTable('erasures')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('entity_digest', 'text', (c) => c.notNull())
        .addColumn('principal_id', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('events_deleted', 'bigint', (c) => c.notNull())
        .addColumn('erased_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('erasures_erased').on('erasures').columns(['environment', 'erased_at']).execute();
    },
  };
}
