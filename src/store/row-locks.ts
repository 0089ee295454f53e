// Row locks for features that order their writers, without knowing which database runs.
import type { Store } from './db.ts';

/**
 * `query`, locking the rows it reads until its transaction ends (`for update`) where transactions
 * run side by side (PostgreSQL). SQLite has no row locks and needs none: a write transaction holds
 * the database's one write lock, so no two of them interleave; there `query` runs as it is.
 */
export function lockingRows<Q extends { forUpdate(): Q }>(store: Store, query: Q): Q {
  return store.dialect === 'postgres' ? query.forUpdate() : query;
}
