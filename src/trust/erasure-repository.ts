// The `erasures` table's owner (docs/architecture.md, "Where things go", a table): the record of
// each erasure (docs/api.md, "Erasure": who, when, how many events; the digest, never the id),
// written in the erasure's transaction (erasure.ts). Takes the executor: a Kysely instance or the
// caller's transaction.
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';

export async function insertErasure(
  trx: Kysely<Database> | Transaction<Database>,
  row: Insertable<Database['erasures']>,
): Promise<void> {
  await trx.insertInto('erasures').values(row).execute();
}
