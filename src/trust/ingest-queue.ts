// Group commit for event batches on SQLite. SQLite has one writer, so concurrent batches wait for
// the write lock anyway, and each batch's commit writes every page it touched to the WAL: the
// entity, aggregate and index pages of a 100-event batch cost more to commit than to change.
// Batches that arrive together therefore share one transaction and one commit. Each runs in its
// own savepoint, after the ones before it, so it sees their rows exactly as if they had committed
// first, and a batch that fails (a reused event_id, say) rolls back alone and fails only its own
// request. No batch is answered before the commit that holds it.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import { inSavepoint } from '../store/savepoints.ts';
import { GroupCommit, type Outcome } from '../lib/group-commit.ts';

export interface GroupCommitOptions<B, R> {
  /**
   * Events per shared transaction. Scores wait for the write lock while a group runs, so a group
   * holds it no longer than the largest single request (1,000 events) did on its own.
   */
  maxEvents?: number;
  /** run between two commits (store/db.ts checkpointIfDue) */
  between?: () => Promise<void>;
  /**
   * Stores and commits a group synchronously (SQLite's direct path, ingest-direct.ts) with the same
   * savepoints; undefined when it cannot, and the group then runs in a Kysely transaction.
   */
  direct?: (batches: readonly B[]) => Array<Outcome<R>> | undefined;
}

export class GroupCommitQueue<B, R> {
  private readonly group: GroupCommit<B, R>;
  private readonly direct: ((batches: readonly B[]) => Array<Outcome<R>> | undefined) | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    /** stores one batch inside the shared transaction */
    private readonly run: (trx: Transaction<Database>, batch: B) => Promise<R>,
    /** called once per commit with the results it made durable */
    private readonly committed: (results: readonly R[]) => void,
    { maxEvents = 1000, between, direct }: GroupCommitOptions<B, R> = {},
  ) {
    this.direct = direct;
    this.group = new GroupCommit((batches) => this.commit(batches), {
      maxWeight: maxEvents,
      ...(between ? { between } : {}),
    });
  }

  /** Resolves with the batch's own result once it is committed; rejects with its own error. */
  submit(batch: B, size: number): Promise<R> {
    return this.group.submit(batch, size);
  }

  /** Waits for queued batches (graceful shutdown, tests). */
  drain(): Promise<void> {
    return this.group.drain();
  }

  private async commit(batches: readonly B[]): Promise<Array<Outcome<R>>> {
    // The commit itself failing rejects here: nothing of the group is stored, and every request hears so.
    const outcomes =
      this.direct?.(batches) ?? (await this.db.transaction().execute((trx) => this.runGroup(trx, batches)));
    this.committed(outcomes.flatMap((o) => (o.ok ? [o.result] : [])));
    return outcomes;
  }

  private async runGroup(trx: Transaction<Database>, batches: readonly B[]): Promise<Array<Outcome<R>>> {
    // A group of one needs no savepoint: its failure rolls the transaction back.
    if (batches.length === 1) return [{ ok: true, result: await this.run(trx, batches[0]!) }];
    const outcomes: Array<Outcome<R>> = [];
    for (const batch of batches) outcomes.push(await inSavepoint(trx, () => this.run(trx, batch)));
    return outcomes;
  }
}
