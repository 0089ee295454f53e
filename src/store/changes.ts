// Knows, without a query, whether the store may have changed since an instant: a counter bumped
// by this process's own entity writes and by commits of any other connection to the same SQLite
// file (PRAGMA data_version, a few microseconds). PostgreSQL has no such signal,
// so there `supported` is false and callers ask the store.
import type BetterSqlite3 from 'better-sqlite3';

export class ChangeWatcher {
  private generationValue = 0;
  private lastVersion = -1;
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
   * True when another connection has committed since the last check. Checked on every call, so a
   * commit by another worker is seen by the very next request.
   */
  poll(): boolean {
    if (!this.dataVersion) return false;
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
