// Reads of the `policies` table (owned by the policies feature: docs/architecture.md, "Where things
// go", a table) that a job's worker thread makes (stored.ts, under job-worker.ts), and the latest
// fit's time the review queue's figures read (reviews/stats.ts). They are kept apart from
// repository.ts, whose writers' imports the worker does not need to load. Each takes the executor:
// a Kysely instance or a transaction.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

/** Every policy of the environment: its version and document, unordered. */
export function policyDocumentsOf(db: Kysely<Database> | Transaction<Database>, environment: Environment) {
  return db.selectFrom('policies').select(['version', 'document']).where('environment', '=', environment).execute();
}

/** When the environment's latest fitted policy was made (source 'fit'): `at` null when none was. */
export function latestFitAt(db: Kysely<Database> | Transaction<Database>, environment: Environment) {
  return db
    .selectFrom('policies')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('environment', '=', environment)
    .where('source', '=', 'fit')
    .executeTakeFirst();
}
