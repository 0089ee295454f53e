// SQLite's direct path for the compiled hot shapes (prepared.ts, row-inserts.ts). better-sqlite3 is
// synchronous, so Kysely's layers around it (the connection mutex, the driver, the result
// transformation, four or five promises a query) cost more than a primary-key read. When the one
// connection has no transaction open, a statement run here, synchronously, cannot interleave with
// anybody's: it is what Kysely would run, without the wait. When a transaction is open (Kysely's
// transactions await between their statements), the caller goes through Kysely and waits its turn,
// so it never reads another request's uncommitted writes nor writes into its transaction.

/** Runs one statement inside a direct transaction: the rows of `text` (none for a statement that returns none). */
export type DirectRun = (text: string, parameters: readonly unknown[]) => unknown[];

export interface DirectSqlite {
  /** the rows of `text` (none for a statement that returns none); undefined when a transaction is open */
  run(text: string, parameters: readonly unknown[]): unknown[] | undefined;
  /**
   * Runs `work` in one transaction, synchronously, with `run` for its statements: all committed, or
   * none (a throw rolls back and is rethrown). False, and nothing run, when a transaction is open.
   */
  atomically(work: (run: DirectRun) => void): boolean;
}

const direct = new WeakMap<object, DirectSqlite>();

/** Set by the SQLite store (db.ts) for its Kysely instance. */
export function registerDirect(db: object, path: DirectSqlite): void {
  direct.set(db, path);
}

/** The direct path of the store `db` belongs to, if it has one (SQLite). A transaction's executor has none. */
export function directOf(db: object): DirectSqlite | undefined {
  return direct.get(db);
}
