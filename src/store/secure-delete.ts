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

/** SQLite: the WAL folded into the database file and truncated, so deleted rows' bytes leave it too. */
export function foldWriteAheadLog(store: Store): void {
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
  foldWriteAheadLog(store);
}
