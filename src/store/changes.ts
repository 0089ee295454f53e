// Knows, without a query, whether the store may have changed since an instant: a counter bumped
// by this process's own entity writes and by commits of any other connection to the same SQLite
// file (PRAGMA data_version, checked at most once a millisecond). PostgreSQL has no such signal,
// so there `supported` is false and callers ask the store.
import type BetterSqlite3 from 'better-sqlite3';

const POLL_INTERVAL_MS = 1;

export class ChangeWatcher {
  private generationValue = 0;
  private lastVersion = -1;
  private lastPoll = -Infinity;
  private readonly dataVersion: (() => number) | undefined;

  constructor(handle: BetterSqlite3.Database | undefined) {
    if (handle) {
      const stmt = handle.prepare('PRAGMA data_version').pluck();
      this.dataVersion = () => stmt.get() as number;
    }
  }

  get supported(): boolean {
    return this.dataVersion !== undefined;
  }

  /** Changes whenever the store may hold new data. */
  get generation(): number {
    return this.generationValue;
  }

  /**
   * True when another connection has committed since the last check. Checked at most once a
   * millisecond: a commit in another process precedes by far more than that any request that
   * could depend on it.
   */
  poll(): boolean {
    if (!this.dataVersion) return false;
    const now = performance.now();
    if (now - this.lastPoll < POLL_INTERVAL_MS) return false;
    this.lastPoll = now;
    const version = this.dataVersion();
    if (version === this.lastVersion) return false;
    this.lastVersion = version;
    this.generationValue += 1;
    return true;
  }

  /** This process committed a change that cached reads depend on. */
  localWrite(): void {
    this.generationValue += 1;
  }
}
