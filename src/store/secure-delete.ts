// What the store keeps of deleted rows' bytes, for an erasure (docs/api.md, "Erasure") that must
// not leave them behind, without knowing which database runs.
import type { Store } from './db.ts';

/**
 * From now on (the setting stays on for this connection) deleted rows' bytes are zeroed as their
 * pages are freed: SQLite otherwise keeps them in free pages and in the WAL. Nothing to do elsewhere.
 */
export function zeroDeletedBytes(store: Store): void {
  store.sqlite?.pragma('secure_delete = ON');
}

/**
 * SQLite: the WAL folded into the database file and truncated, so deleted rows' bytes leave it too.
 * A reader on another connection (a rule test's worker, another process) that still holds an older
 * snapshot keeps the checkpoint from finishing (it answers busy, and the WAL keeps its frames): it
 * is tried again until those readers move on, a bounded number of times. False when it never finished
 * (the next checkpoint folds the frames in).
 */
export async function foldWriteAheadLog(store: Store, attempts = 100): Promise<boolean> {
  const db = store.sqlite;
  if (!db) return true;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (!result || result.busy === 0) return true;
    } catch {
      // another process is checkpointing or writing: try again below
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** The one-shot fold for a store being rewritten before it serves (no reader to wait for). */
function foldNow(store: Store): void {
  try {
    store.sqlite?.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // Another process reading: its next checkpoint folds the frames in.
  }
}

/**
 * The whole file rewritten without the bytes of rows already deleted (SQLite: secure_delete, VACUUM,
 * the WAL folded in), for clear text found after the fact. Nothing to do elsewhere.
 */
export function rewriteWithoutDeletedBytes(store: Store): void {
  if (!store.sqlite) return;
  zeroDeletedBytes(store);
  store.sqlite.exec('VACUUM');
  foldNow(store);
}
