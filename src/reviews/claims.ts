// Claiming and releasing reviews (docs/api.md, "Reviews"). A claim is one conditional UPDATE whose
// WHERE holds the state it was taken from (open, a lapsed claim, or the caller's own claim),
// checked by the rows it changed, so of two principals claiming at once exactly one wins on either
// store, with no lock held between statements. A claim or release that changed the review is an
// audit-log entry (`review.claimed`, `review.released`) in the same transaction as the change.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Auditor } from '../audit-log/auditor.ts';
import type { ReviewJoined } from './schemas.ts';
import { findReview } from './queue.ts';
import { claimCandidates, claimRow, releaseRow, type Viewer } from './repository.ts';

export type ClaimOutcome =
  { kind: 'claimed'; row: ReviewJoined } | { kind: 'not_found' } | { kind: 'held'; by: string } | { kind: 'resolved' };

/**
 * Claims review `id` for the viewer: it must be open, its claim lapsed, or already the viewer's
 * (claiming again renews it). The UPDATE names the owner and environment too, so a review the
 * viewer cannot see is never touched.
 */
export async function claimReview(
  db: Kysely<Database>,
  viewer: Viewer,
  id: string,
  renew = true,
  audit?: Auditor,
): Promise<ClaimOutcome> {
  const changed = await audited(db, audit, 'review.claimed', id, (trx) => claimRow(trx, viewer, id, renew));
  const row = await findReview(db, viewer, id);
  if (!row) return { kind: 'not_found' };
  if (changed > 0) return { kind: 'claimed', row };
  if (row.status === 'resolved') return { kind: 'resolved' };
  return { kind: 'held', by: row.assignee ?? '' };
}

/**
 * Candidates read per pass, and passes. A lost race moves on to the next candidate, and a pass
 * that lost them all reads again: every loss is another caller's claim, so the queue empties
 * and the loop ends; the bound only turns a pathological run into a 503 instead of a 204.
 */
const CANDIDATES = 20;
const PASSES = 50;

/** Every candidate of PASSES passes went to other callers: 503 with Retry-After, never "none left". */
export class QueueContendedError extends Error {
  constructor() {
    super('Every review this call tried was claimed by another reviewer first; ask again.');
    this.name = 'QueueContendedError';
  }
}

/** The queue's filters that `next` takes (GET /api/v1/reviews takes them too). */
export interface NextFilter {
  outcome?: string;
  entityId?: string;
}

/**
 * Claims the claimable review due first for the viewer (of those the filter keeps), or undefined
 * when none is left. Each candidate is claimed conditionally; losing it to another caller moves
 * on to the next. After a pass lost to others, the next starts at a random candidate, so
 * concurrent callers spread over the head of the queue instead of all racing for its first.
 */
export async function claimNext(
  db: Kysely<Database>,
  viewer: Viewer,
  filter: NextFilter = {},
  audit?: Auditor,
): Promise<ReviewJoined | undefined> {
  for (let pass = 0; pass < PASSES; pass++) {
    const candidates = await claimCandidates(db, viewer, filter, CANDIDATES);
    if (candidates.length === 0) return undefined;
    const start = pass === 0 ? 0 : Math.floor(Math.random() * candidates.length);
    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[(start + i) % candidates.length]!;
      // Only from a free state: a review this caller already holds (say, from another tab) is not "next".
      const outcome = await claimReview(db, viewer, candidate.id, false, audit);
      if (outcome.kind === 'claimed') return outcome.row;
    }
  }
  throw new QueueContendedError();
}

export type ReleaseOutcome =
  { kind: 'released'; row: ReviewJoined } | { kind: 'not_found' } | { kind: 'held'; by: string } | { kind: 'resolved' };

/**
 * Gives the viewer's claim back: the review is open again, for anyone's `next`. Only the holder
 * releases its claim (an admin any); a review already open (or whose claim lapsed) stays open.
 */
export async function releaseReview(
  db: Kysely<Database>,
  viewer: Viewer,
  id: string,
  audit?: Auditor,
): Promise<ReleaseOutcome> {
  await audited(db, audit, 'review.released', id, (trx) => releaseRow(trx, viewer, id));
  const row = await findReview(db, viewer, id);
  if (!row) return { kind: 'not_found' };
  if (row.status === 'resolved') return { kind: 'resolved' };
  if (row.status === 'claimed') return { kind: 'held', by: row.assignee ?? '' };
  return { kind: 'released', row };
}

/**
 * Runs `change` (an UPDATE answering the rows it changed) and, when it changed the review, writes
 * `action`'s entry in the same transaction; without an auditor, the UPDATE alone as before.
 */
async function audited(
  db: Kysely<Database>,
  audit: Auditor | undefined,
  action: 'review.claimed' | 'review.released',
  id: string,
  change: (db: Kysely<Database>) => Promise<number>,
): Promise<number> {
  if (!audit) return change(db);
  return db.transaction().execute(async (trx) => {
    const changed = await change(trx);
    if (changed > 0) await audit(trx, { action, target: `review:${id}` });
    return changed;
  });
}
