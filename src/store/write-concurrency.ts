// How the store takes writes from concurrent callers, for features that shape their transactions to
// it (src/trust/ingest.ts) without knowing which database runs.
import type { Transaction } from 'kysely';
import type { Database } from './schema.ts';
import type { Store } from './db.ts';

/**
 * True where one write transaction runs at a time for the whole database (SQLite): a process gains
 * by sharing one transaction and one commit among the writes that arrive together, and no writer
 * needs row locks. False where transactions run side by side (PostgreSQL): each takes the rows it
 * changes, in one order, and may still be rolled back for a deadlock (retriedTransaction).
 */
export const writesRunOneAtATime = (store: Store): boolean => store.dialect === 'sqlite';

/** PostgreSQL deadlock and serialization failure: the transaction was rolled back and may be re-run. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 5;

/**
 * Runs `work` in a transaction, and again after a short random pause (up to 5 attempts) when the
 * server rolled it back for a deadlock or a serialization failure. Only for work safe to run twice.
 */
export async function retriedTransaction<T>(
  store: Store,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await store.db.transaction().execute(work);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= ATTEMPTS || typeof code !== 'string' || !RETRYABLE.has(code)) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}
