// Claiming and releasing reviews (docs/api.md, "Reviews"). A claim is one conditional UPDATE whose
// WHERE holds the state it was taken from (open, a lapsed claim, or the caller's own claim),
// checked by the rows it changed, so of two principals claiming at once exactly one wins on either
// store, with no lock held between statements.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { ownerFilter } from '../http/route.ts';
import { CLAIM_LAPSE_MS, type ReviewJoined } from './schemas.ts';
import { claimable, findReview, visibleReviews, type Viewer } from './queue.ts';

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
): Promise<ClaimOutcome> {
  const { principal, now } = viewer;
  let update = db
    .updateTable('reviews')
    .set({ status: 'claimed', assignee: principal.id, claimed_at: now })
    .where('id', '=', id)
    .where('environment', '=', principal.environment)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'open'),
        eb.and([
          eb('status', '=', 'claimed'),
          eb.or([eb('claimed_at', '<=', now - CLAIM_LAPSE_MS), ...(renew ? [eb('assignee', '=', principal.id)] : [])]),
        ]),
      ]),
    );
  const owner = ownerFilter(principal);
  if (owner !== undefined) update = update.where('owner_client_id', '=', owner);
  const changed = Number((await update.executeTakeFirst()).numUpdatedRows ?? 0);
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
): Promise<ReviewJoined | undefined> {
  for (let pass = 0; pass < PASSES; pass++) {
    let q = claimable(visibleReviews(db, viewer), viewer.now);
    if (filter.outcome !== undefined) q = q.where('reviews.outcome', '=', filter.outcome);
    if (filter.entityId !== undefined) q = q.where('reviews.entity_id', '=', filter.entityId);
    const candidates = await q
      .orderBy('reviews.due_at', 'asc')
      .orderBy('reviews.id', 'asc')
      .limit(CANDIDATES)
      .execute();
    if (candidates.length === 0) return undefined;
    const start = pass === 0 ? 0 : Math.floor(Math.random() * candidates.length);
    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[(start + i) % candidates.length]!;
      // Only from a free state: a review this caller already holds (say, from another tab) is not "next".
      const outcome = await claimReview(db, viewer, candidate.id, false);
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
export async function releaseReview(db: Kysely<Database>, viewer: Viewer, id: string): Promise<ReleaseOutcome> {
  const { principal } = viewer;
  const owner = ownerFilter(principal);
  let update = db
    .updateTable('reviews')
    .set({ status: 'open', assignee: null, claimed_at: null })
    .where('id', '=', id)
    .where('environment', '=', principal.environment)
    .where('status', '=', 'claimed');
  // an admin (who sees every client's reviews) may free any claim; anyone else only its own
  if (owner !== undefined)
    update = update
      .where('owner_client_id', '=', owner)
      .where((eb) => eb.or([eb('assignee', '=', principal.id), eb('claimed_at', '<=', viewer.now - CLAIM_LAPSE_MS)]));
  await update.execute();
  const row = await findReview(db, viewer, id);
  if (!row) return { kind: 'not_found' };
  if (row.status === 'resolved') return { kind: 'resolved' };
  if (row.status === 'claimed') return { kind: 'held', by: row.assignee ?? '' };
  return { kind: 'released', row };
}
