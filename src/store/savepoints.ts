// A savepoint inside a transaction (SQL-standard, the same on SQLite and PostgreSQL): a group of
// batches sharing one transaction runs each in its own (trust/ingest-queue.ts), so a batch that
// fails rolls back alone.
import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.ts';
import type { Outcome } from '../lib/group-commit.ts';

/**
 * Runs `work` in the savepoint `vouch_batch` of `trx`: released when it succeeds; rolled back to
 * and released when it (or the release) fails, the error given back as the outcome. A failure to
 * roll back rejects: the transaction is then past saving.
 */
export async function inSavepoint<R>(trx: Transaction<Database>, work: () => Promise<R>): Promise<Outcome<R>> {
  await sql`savepoint vouch_batch`.execute(trx);
  try {
    const result = await work();
    await sql`release savepoint vouch_batch`.execute(trx);
    return { ok: true, result };
  } catch (error) {
    await sql`rollback to savepoint vouch_batch`.execute(trx);
    await sql`release savepoint vouch_batch`.execute(trx);
    return { ok: false, error };
  }
}
