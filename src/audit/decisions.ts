// Durable audit of every score and dispute analysis. A decision is committed before its response
// leaves; concurrent requests share one transaction (group commit) so durability does not cost a
// commit per request.
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, DecisionsTable, ReviewsTable } from '../store/schema.ts';
import { insertRows, insertRowsAtomically } from '../store/row-inserts.ts';
import { insertRowsInOneStatement } from '../store/statement-inserts.ts';
import { GroupCommit, type Outcome } from '../lib/group-commit.ts';
import { decisionByClaim, decisionRows, insertDecisions } from './decision-repository.ts';

/**
 * The review a score's outcome opens (docs/api.md, "Reviews"): written in the same transaction as
 * its decision, so neither is ever stored without the other.
 */
export interface ReviewOpening {
  id: string;
  /** the decision's outcome: review or hold, or approve for a sampled one */
  outcome: string;
  /** 'outcome': opened by the outcome; 'sample': one of the policy's review_sample_rate of approvals */
  reason: 'outcome' | 'sample';
  /** the sampling rate it was drawn at (reason 'sample'), for the fit's inverse-probability weight */
  sample_rate: number | null;
  due_at: number;
}

/** A decision to store; only scores carry the cache columns (see trust/scoring.ts) and may open a review. */
export type DecisionRow = Omit<DecisionsTable, 'cache_key' | 'cache_state'> &
  Partial<Pick<DecisionsTable, 'cache_key' | 'cache_state'>> & { review?: ReviewOpening | null };

/** The reviews row a decision's opening makes: open, unassigned, owned by the decision's client. */
function reviewRow(row: DecisionRow): Insertable<ReviewsTable> {
  const review = row.review!;
  return {
    id: review.id,
    environment: row.environment,
    owner_client_id: row.owner_client_id,
    decision_id: row.id,
    entity_id: row.subject_id,
    outcome: review.outcome,
    reason: review.reason,
    sample_rate: review.sample_rate,
    status: 'open',
    opened_at: row.created_at,
    due_at: review.due_at,
    assignee: null,
    claimed_at: null,
    resolution: null,
    resolution_label: null,
    note: null,
    added_to_list: null,
    resolved_at: null,
    resolved_by: null,
  };
}

const REVIEW_COLUMNS = [
  'id',
  'environment',
  'owner_client_id',
  'decision_id',
  'entity_id',
  'outcome',
  'reason',
  'sample_rate',
  'status',
  'opened_at',
  'due_at',
  'assignee',
  'claimed_at',
  'resolution',
  'resolution_label',
  'note',
  'added_to_list',
  'resolved_at',
  'resolved_by',
] as const satisfies ReadonlyArray<keyof Insertable<ReviewsTable>>;

const MAX_BATCH = 500;

/** Work that must commit with some decisions (webhook events: src/webhooks/events.ts decisionWebhooks). */
export interface DecisionHooks {
  relevant(row: DecisionRow): boolean;
  /** whether anything would be written for these rows (checked once per batch) */
  anySubscriber(db: Kysely<Database>, rows: readonly DecisionRow[]): Promise<boolean>;
  write(trx: Transaction<Database>, rows: readonly DecisionRow[]): Promise<void>;
}

/** Commits one group of rows somewhere else (the host's writer, audit/host-writer.ts): an outcome per row. */
export type DecisionCommit = (rows: readonly DecisionRow[]) => Promise<ReadonlyArray<Outcome<undefined>>>;

export interface DecisionWriterOptions {
  /** where groups commit; by default here, on `db` */
  commit?: DecisionCommit;
  /** run between two commits of this process (store/db.ts checkpointIfDue) */
  between?: () => Promise<void>;
}

export class DecisionWriter {
  private readonly group: GroupCommit<DecisionRow, undefined>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly hooks?: DecisionHooks,
    options: DecisionWriterOptions = {},
  ) {
    this.group = new GroupCommit<DecisionRow, undefined>(options.commit ?? ((rows) => this.commit(rows)), {
      maxWeight: MAX_BATCH,
      ...(options.between ? { between: options.between } : {}),
    });
  }

  /** Resolves once the row is committed. */
  async write(row: DecisionRow): Promise<void> {
    await this.group.submit(row);
  }

  /** One group of rows in one commit: all stored, or none (and every request of the group fails). */
  private async commit(rows: readonly DecisionRow[]): Promise<Array<{ ok: true; result: undefined }>> {
    const hooks = this.hooks;
    const announcing = hooks ? rows.filter((r) => hooks.relevant(r)) : [];
    const announce = hooks !== undefined && announcing.length > 0 && (await hooks.anySubscriber(this.db, announcing));
    const reviews = rows.filter((r) => r.review).map(reviewRow);
    const groups = [decisionRows(rows), { table: 'reviews', columns: REVIEW_COLUMNS, rows: reviews } as const];
    if (!announce) {
      // Nothing to announce, on SQLite with the connection free: the group in one synchronous transaction.
      if (insertRowsAtomically(this.db, groups)) return rows.map(() => ({ ok: true, result: undefined }));
      // On PostgreSQL: the decisions and their reviews in one statement, its own transaction (one round trip).
      const statement = insertRowsInOneStatement(this.db, groups);
      if (statement) {
        await statement;
        return rows.map(() => ({ ok: true, result: undefined }));
      }
    }
    // The decisions, the reviews they open and their outbox rows commit together (or not at all):
    // no decision is ever stored without its review, nor a review without its decision. The inserts
    // are compiled once per chunk size (store/row-inserts.ts), not built per group; on PostgreSQL the
    // decisions and reviews are one statement of the transaction.
    await this.db.transaction().execute(async (trx) => {
      const statement = insertRowsInOneStatement(this.db, groups, trx);
      if (statement) await statement;
      else {
        await insertDecisions(this.db, trx, rows);
        if (reviews.length > 0) await insertRows(this.db, trx, 'reviews', REVIEW_COLUMNS, reviews);
      }
      if (announce) await hooks.write(trx, rows);
    });
    return rows.map(() => ({ ok: true, result: undefined }));
  }

  /** Waits for queued rows (graceful shutdown). */
  drain(): Promise<void> {
    return this.group.drain();
  }
}

/**
 * What the decision made under an Idempotency-Key claim answered (032_decision_claims), or
 * undefined: its kind and stored result, the response's text (a score's without `cached`).
 */
export async function answeredClaim(
  db: Kysely<Database>,
  environment: string,
  claim: string,
): Promise<{ kind: string; result: string } | undefined> {
  return decisionByClaim(db, environment, claim);
}
