// Group commit: work submitted within one turn of the event loop is handed to one `commit` call,
// so many requests share one transaction and one fsync. Each submitter waits for its own outcome,
// which the commit reports item by item (one item may fail alone) or for the whole group (a failed
// commit fails every item it held, and nothing else). Groups are bounded by a weight (rows,
// events), and a group is taken only after the one before it has committed, so no item is ever
// answered before the commit that holds it.

export type Outcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

interface Waiter<T, R> {
  item: T;
  weight: number;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions {
  /** the most weight one group holds; a single heavier item still forms a group of its own */
  maxWeight: number;
  /**
   * Runs after a group's submitters have their outcomes and before the next group is taken (a
   * SQLite checkpoint the writer runs between its commits); its failure is ignored.
   */
  between?: () => Promise<void>;
}

export class GroupCommit<T, R> {
  private queue: Array<Waiter<T, R>> = [];
  private flushing = false;
  private idle: Array<() => void> = [];

  constructor(
    /** commits one group; resolves with one outcome per item, in order, or rejects for all */
    private readonly commit: (items: readonly T[]) => Promise<ReadonlyArray<Outcome<R>>>,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Resolves with the item's own result once it is committed; rejects with its own error. */
  submit(item: T, weight = 1): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, weight, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // The items whose requests are parsed in this turn of the event loop join the group.
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Resolves once everything submitted so far is committed or failed (graceful shutdown, tests). */
  drain(): Promise<void> {
    if (!this.flushing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private take(): Array<Waiter<T, R>> {
    let weight = 0;
    let n = 0;
    while (n < this.queue.length && (n === 0 || weight + this.queue[n]!.weight <= this.options.maxWeight))
      weight += this.queue[n++]!.weight;
    return this.queue.splice(0, n);
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.take();
      try {
        const outcomes = await this.commit(group.map((w) => w.item));
        group.forEach((waiter, i) => {
          const outcome = outcomes[i];
          if (outcome?.ok) waiter.resolve(outcome.result);
          else waiter.reject(outcome ? outcome.error : new Error('group commit reported no outcome'));
        });
      } catch (err) {
        for (const waiter of group) waiter.reject(err);
      }
      if (this.options.between) await this.options.between().catch(() => {});
    }
    this.flushing = false;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
