// Reads of the `policies` table (owned by the policies feature: docs/architecture.md, "Where things
// go", a table) that a job's worker thread makes (stored.ts, under job-worker.ts). They are kept
// apart from repository.ts, whose writers' imports the worker does not need to load. Each takes
// the executor: a Kysely instance or a transaction.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

/** Every policy of the environment: its version and document, unordered. */
export function policyDocumentsOf(db: Kysely<Database> | Transaction<Database>, environment: Environment) {
  return db.selectFrom('policies').select(['version', 'document']).where('environment', '=', environment).execute();
}
