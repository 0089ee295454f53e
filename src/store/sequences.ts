// Reading a table in the order of its generated sequence (the change feed, change-feed.ts):
// a reader remembers the highest value it has read and next reads above it.

import type { Store } from './db.ts';

/**
 * How far below the highest sequence value a reader has seen a row may still appear later, so the
 * reader must look again that far down (and skip the rows it has already applied). PostgreSQL takes
 * a bigserial value at insert, not at commit: a transaction that inserted seq 10 can commit after
 * one that inserted seq 11 has been read, and looking again this far down means a late commit is
 * never missed. SQLite has one writer at a time, so its values commit in order: 0.
 */
export function lateCommitWindow(store: Pick<Store, 'dialect'>): number {
  return store.dialect === 'postgres' ? 200 : 0;
}
