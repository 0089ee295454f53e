// The review queue in the store (docs/api.md, "Reviews"): listing and reading one (claims.ts
// claims and releases). Every read is scoped to the caller's environment and, unless it is an
// admin, to its client: another client's review does not exist for it.
import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { Database, ReviewsTable } from '../store/schema.ts';
import type { Principal } from '../lib/principal.ts';
import { ownerFilter } from '../http/route.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import { CLAIM_LAPSE_MS, type ReviewJoined, type ReviewStatus } from './schemas.ts';

type Db = Kysely<Database> | Transaction<Database>;
type Query = SelectQueryBuilder<Database, 'reviews' | 'decisions', ReviewJoined>;

/** Who is asking, and when: the scope of every query here. */
export interface Viewer {
  principal: Principal;
  now: number;
}

/** Reviews joined with the decision columns a record shows, as `viewer` may see them. */
export function visibleReviews(db: Db, { principal }: Viewer): Query {
  let q = db
    .selectFrom('reviews')
    .innerJoin('decisions', 'decisions.id', 'reviews.decision_id')
    .selectAll('reviews')
    .select(['decisions.result', 'decisions.risk_level', 'decisions.request', 'decisions.rules'])
    .where('reviews.environment', '=', principal.environment) as unknown as Query;
  const owner = ownerFilter(principal);
  if (owner !== undefined) q = q.where('reviews.owner_client_id', '=', owner);
  return q;
}

/** Unresolved and free to claim at `now`: open, or claimed with the claim lapsed. */
export function claimable(q: Query, now: number): Query {
  return q.where((eb) =>
    eb.or([
      eb('reviews.status', '=', 'open'),
      eb.and([eb('reviews.status', '=', 'claimed'), eb('reviews.claimed_at', '<=', now - CLAIM_LAPSE_MS)]),
    ]),
  );
}

function withStatus(q: Query, status: ReviewStatus, now: number): Query {
  if (status === 'open') return claimable(q, now);
  if (status === 'claimed')
    return q.where('reviews.status', '=', 'claimed').where('reviews.claimed_at', '>', now - CLAIM_LAPSE_MS);
  return q.where('reviews.status', '=', 'resolved');
}

export interface ListFilter {
  status?: ReviewStatus;
  outcome?: string;
  /** a principal id: the reviews it holds (unlapsed) or resolved */
  assignee?: string;
  entityId?: string;
  limit: number;
  cursor?: string;
}

/**
 * Where a page starts. The listing is unresolved reviews by due_at (due first), then resolved ones
 * by resolved_at, newest first: `u.<due_at>.<id>` or `r.<resolved_at>.<id>`.
 */
interface Position {
  phase: 'u' | 'r';
  at: number;
  id: string;
}

export function decodeCursor(cursor: string): Position | undefined {
  const match = /^([ur])\.([0-9]{1,16})\.([A-Za-z0-9_]{1,64})$/.exec(cursor);
  return match ? { phase: match[1] as 'u' | 'r', at: Number(match[2]), id: match[3]! } : undefined;
}

export function cursorOf(row: ReviewsTable): string {
  return row.status === 'resolved' ? `r.${Number(row.resolved_at)}.${row.id}` : `u.${Number(row.due_at)}.${row.id}`;
}

/** One page of the queue; `after` must come from decodeCursor. */
export async function listReviews(
  db: Db,
  viewer: Viewer,
  filter: ListFilter,
  after: Position | undefined,
): Promise<Page<ReviewJoined>> {
  const { now } = viewer;
  let base = visibleReviews(db, viewer);
  if (filter.outcome !== undefined) base = base.where('reviews.outcome', '=', filter.outcome);
  if (filter.entityId !== undefined) base = base.where('reviews.entity_id', '=', filter.entityId);
  if (filter.assignee !== undefined) {
    base = base
      .where('reviews.assignee', '=', filter.assignee)
      .where((eb) =>
        eb.or([
          eb('reviews.status', '=', 'resolved'),
          eb.and([eb('reviews.status', '=', 'claimed'), eb('reviews.claimed_at', '>', now - CLAIM_LAPSE_MS)]),
        ]),
      );
  }
  if (filter.status !== undefined) base = withStatus(base, filter.status, now);
  const phases: Array<'u' | 'r'> =
    filter.status === 'resolved' ? ['r'] : filter.status !== undefined ? ['u'] : ['u', 'r'];
  const rows: ReviewJoined[] = [];
  for (const phase of phases) {
    if (after && phase === 'u' && after.phase === 'r') continue;
    const want = filter.limit + 1 - rows.length;
    if (want <= 0) break;
    const from = after && after.phase === phase ? after : undefined;
    let q =
      phase === 'u' ? base.where('reviews.status', '<>', 'resolved') : base.where('reviews.status', '=', 'resolved');
    if (phase === 'u') {
      if (from)
        q = q.where((eb) =>
          eb.or([
            eb('reviews.due_at', '>', from.at),
            eb.and([eb('reviews.due_at', '=', from.at), eb('reviews.id', '>', from.id)]),
          ]),
        );
      q = q.orderBy('reviews.due_at', 'asc').orderBy('reviews.id', 'asc');
    } else {
      if (from)
        q = q.where((eb) =>
          eb.or([
            eb('reviews.resolved_at', '<', from.at),
            eb.and([eb('reviews.resolved_at', '=', from.at), eb('reviews.id', '<', from.id)]),
          ]),
        );
      q = q.orderBy('reviews.resolved_at', 'desc').orderBy('reviews.id', 'desc');
    }
    rows.push(...(await q.limit(want).execute()));
  }
  return pageOf(rows, filter.limit);
}

export function findReview(db: Db, viewer: Viewer, id: string): Promise<ReviewJoined | undefined> {
  return visibleReviews(db, viewer).where('reviews.id', '=', id).executeTakeFirst();
}
