// Knows, without a query, whether the store may have changed since an instant: a counter bumped
// by this process's own entity writes and by commits of any other connection to the same SQLite
// file that changed what cached reads depend on. PRAGMA data_version (a few microseconds) says that
// another connection committed; the store_changes counter (024_change_counter: triggers on the
// entities, identifier stats, network state and the change feed, change-feed.ts) says whether that
// commit was one of those, so commits that only stored decisions — the host writer's, nearly every
// turn — leave the caches alone. PostgreSQL has no such signal, so there `supported` is false and callers ask
// the store.
import type BetterSqlite3 from 'better-sqlite3';

export class ChangeWatcher {
  private generationValue = 0;
  private lastVersion = -1;
  private lastCount: number | bigint | undefined;
  private readonly dataVersion: (() => number) | undefined;
  /** store_changes.n; undefined until the table exists (a store opened before its migrations) */
  private changeCount: (() => number | bigint | undefined) | undefined;
  /** data_version was read in this turn of the event loop */
  private polledThisTurn = false;
  private readonly endTurn = () => {
    this.polledThisTurn = false;
  };

  constructor(private readonly handle: BetterSqlite3.Database | undefined) {
    if (handle) {
      const stmt = handle.prepare('PRAGMA data_version').pluck();
      this.dataVersion = () => stmt.get() as number;
    }
  }

  private readCount(): number | bigint | undefined {
    if (!this.changeCount && this.handle) {
      try {
        const stmt = this.handle.prepare('select n from store_changes where id = 1').pluck();
        this.changeCount = () => stmt.get() as number | bigint | undefined;
      } catch {
        return undefined; // not migrated yet: every commit counts
      }
    }
    return this.changeCount?.();
  }

  get supported(): boolean {
    return this.dataVersion !== undefined;
  }

  /** Changes whenever the store may hold new data. */
  get generation(): number {
    return this.generationValue;
  }

  /**
   * True when another connection has committed since the last check. Read once per turn of the
   * event loop (≈ 2 µs: it opens a read transaction), by the first caller; the requests served in
   * that turn were all reported readable before it began, so each sees every commit that finished
   * before it arrived — a commit by another worker is seen by the very next request. (Callers poll
   * while serving requests, in the turn's I/O callbacks; a poll from a timer would be reused by the
   * requests of the same turn, which were not yet read when it ran.)
   */
  poll(): boolean {
    if (!this.dataVersion || this.polledThisTurn) return false;
    this.polledThisTurn = true;
    // The check phase follows the I/O callbacks of this turn: the next turn reads afresh.
    setImmediate(this.endTurn);
    const version = this.dataVersion();
    if (version === this.lastVersion) return false;
    this.lastVersion = version;
    const count = this.readCount();
    if (count !== undefined && count === this.lastCount) return false;
    this.lastCount = count;
    this.generationValue += 1;
    return true;
  }

  /** This process committed a change that cached reads depend on. */
  localWrite(): void {
    this.generationValue += 1;
    // Our own commit moved the counter but not data_version (that counts other connections' commits
    // only): take the count now, or the next commit of another connection, a decision say, would
    // look like a change. A change another connection committed before this read is older than
    // the generation just taken, so nothing cached under it can have missed it.
    if (this.dataVersion) this.lastCount = this.readCount();
  }
}
