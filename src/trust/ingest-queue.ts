// Group commit for event batches on SQLite. SQLite has one writer, so concurrent batches wait for
// the write lock anyway, and each batch's commit writes every page it touched to the WAL: the
// entity, aggregate and index pages of a 100-event batch cost more to commit than to change.
// Batches that arrive together therefore share one transaction and one commit. Each runs in its
// own savepoint, after the ones before it, so it sees their rows exactly as if they had committed
// first, and a batch that fails (a reused event_id, say) rolls back alone and fails only its own
// request. No batch is answered before the commit that holds it.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';

interface Job<B, R> {
  batch: B;
  size: number;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

type Outcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

export interface GroupCommitOptions {
  /**
   * Events per shared transaction. Scores wait for the write lock while a group runs, so a group
   * holds it no longer than the largest single request (1,000 events) did on its own.
   */
  maxEvents?: number;
}

export class GroupCommitQueue<B, R> {
  private queue: Array<Job<B, R>> = [];
  private flushing = false;
  private readonly maxEvents: number;

  constructor(
    private readonly db: Kysely<Database>,
    /** stores one batch inside the shared transaction */
    private readonly run: (trx: Transaction<Database>, batch: B) => Promise<R>,
    /** called once per commit with the results it made durable */
    private readonly committed: (results: readonly R[]) => void,
    { maxEvents = 1000 }: GroupCommitOptions = {},
  ) {
    this.maxEvents = maxEvents;
  }

  /** Resolves with the batch's own result once it is committed; rejects with its own error. */
  submit(batch: B, size: number): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ batch, size, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // The batches whose requests are parsed in this turn of the event loop join the group.
        setImmediate(() => void this.flush());
      }
    });
  }

  private take(): Array<Job<B, R>> {
    let events = 0;
    let n = 0;
    while (n < this.queue.length && (n === 0 || events + this.queue[n]!.size <= this.maxEvents)) events += this.queue[n++]!.size;
    return this.queue.splice(0, n);
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.take();
      try {
        const outcomes = await this.db.transaction().execute((trx) => this.runGroup(trx, group));
        this.committed(outcomes.flatMap((o) => (o.ok ? [o.result] : [])));
        group.forEach((job, i) => {
          const o = outcomes[i]!;
          if (o.ok) job.resolve(o.result);
          else job.reject(o.error);
        });
      } catch (err) {
        // The commit itself failed: nothing of the group is stored, and every request hears so.
        for (const job of group) job.reject(err);
      }
    }
    this.flushing = false;
  }

  private async runGroup(trx: Transaction<Database>, group: Array<Job<B, R>>): Promise<Array<Outcome<R>>> {
    // A group of one needs no savepoint: its failure rolls the transaction back.
    if (group.length === 1) return [{ ok: true, result: await this.run(trx, group[0]!.batch) }];
    const outcomes: Array<Outcome<R>> = [];
    for (const job of group) {
      await sql`savepoint vouch_batch`.execute(trx);
      try {
        const result = await this.run(trx, job.batch);
        await sql`release savepoint vouch_batch`.execute(trx);
        outcomes.push({ ok: true, result });
      } catch (error) {
        await sql`rollback to savepoint vouch_batch`.execute(trx);
        await sql`release savepoint vouch_batch`.execute(trx);
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  /** Waits for queued batches (graceful shutdown, tests). */
  async drain(): Promise<void> {
    while (this.flushing || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
  }
}
