// One in-memory value kept equal to what the store holds, across every instance: loaded whole on
// start, then reloaded when the change feed reports one of its kinds (store/change-feed.ts, which
// the feature wires to `changed`). Changes that arrive during a reload are coalesced into one more
// reload; requests wait for a reload in progress (`waitForReload`), so none is answered from a
// value older than a change the feed reported before it (docs/api.md, "Policies", "Rules and lists").
import type { BackgroundService } from './background.ts';

export interface ReloaderOptions<Key> {
  readonly name: string;
  /**
   * Reads the keys given (every key when undefined) and swaps the new value in only once it is
   * read whole, so a failed load keeps the last good value.
   */
  load(keys: readonly Key[] | undefined): Promise<void>;
  /** told of a failed reload; the next change tries again, and the requests waiting on it see the error */
  failed(name: string, err: unknown): void;
}

export class Reloader<Key = never> implements BackgroundService {
  readonly name: string;
  private pending: Promise<void> | undefined;
  /** keys changed since the running reload began */
  private readonly dirty = new Set<Key>();
  /** a change of everything arrived since the running reload began */
  private everything = false;
  private stopped = false;

  constructor(private readonly options: ReloaderOptions<Key>) {
    this.name = options.name;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.options.load(undefined);
  }

  /** A change arrived: reload `key` (everything when none), now or right after the reload under way. */
  changed(key?: Key): void {
    if (this.stopped) return;
    if (key === undefined) this.everything = true;
    else this.dirty.add(key);
    if (this.pending) return;
    this.pending = this.reloadWhileChanged();
    this.pending.catch((err: unknown) => this.options.failed(this.name, err));
  }

  private async reloadWhileChanged(): Promise<void> {
    try {
      while (this.everything || this.dirty.size > 0) {
        const keys = this.everything ? undefined : [...this.dirty];
        this.everything = false;
        this.dirty.clear();
        await this.options.load(keys);
      }
    } catch (err) {
      // retried by the next change
      this.everything = false;
      this.dirty.clear();
      throw err;
    } finally {
      this.pending = undefined;
    }
  }

  /** The reload in progress, if any. */
  ready(): Promise<void> | undefined {
    return this.pending;
  }

  /**
   * A preHandler hook (after authentication, which polls the feed; before any handler). A
   * callback, not async: it runs on every request, and nothing is pending almost always.
   */
  readonly waitForReload = (_request: unknown, _reply: unknown, done: (err?: Error) => void): void => {
    const pending = this.pending;
    if (pending) pending.then(() => done(), done);
    else done();
  };

  async stop(): Promise<void> {
    this.stopped = true;
    await this.pending?.catch(() => {});
  }
}
