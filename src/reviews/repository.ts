// The reviews table's one owner (docs/api.md, "Reviews"; issue 41 item 1): the queue's reads, and
// the conditional UPDATEs that claim, release and resolve a review. Every statement is scoped to
// the caller's environment and, unless it is an admin, to its client: another client's review
// does not exist for it. The page's read joins decisions, users and clients for what a record
// shows and names, so it stays one query.
import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment, Principal } from '../lib/principal.ts';
import { ownerFilter } from '../http/route.ts';
import { replaceToken } from '../trust/erasure-text.ts';
import { CLAIM_LAPSE_MS, type ReviewJoined, type ReviewStatus } from './schemas.ts';
import { containsPattern, likeEscaped } from '../store/like.ts';

type Db = Kysely<Database> | Transaction<Database>;
type Query = SelectQueryBuilder<Database, 'reviews' | 'decisions', ReviewJoined>;

/** Who is asking, and when: the scope of every query here. */
export interface Viewer {
  principal: Principal;
  now: number;
}

/**
 * Reviews joined with the decision columns a record shows, as `viewer` may see them, and the name of
 * the principal a record names as its assignee (who resolved it, else who holds it): a person's, else
 * a machine client's (docs/api.md, "Reviews").
 */
function visibleReviews(db: Db, { principal }: Viewer): Query {
  let q = db
    .selectFrom('reviews')
    .innerJoin('decisions', 'decisions.id', 'reviews.decision_id')
    .selectAll('reviews')
    .select(['decisions.result', 'decisions.risk_level', 'decisions.request', 'decisions.rules'])
    .select((eb) => {
      const who = eb.fn.coalesce('reviews.resolved_by', 'reviews.assignee');
      const person = eb.selectFrom('users').select('users.name').where('users.id', '=', who);
      const client = eb
        .selectFrom('clients')
        .select('clients.name')
        .where('clients.id', '=', who)
        .whereRef('clients.environment', '=', 'reviews.environment');
      return eb.fn.coalesce(person, client).as('assignee_name');
    })
    .where('reviews.environment', '=', principal.environment) as unknown as Query;
  const owner = ownerFilter(principal);
  if (owner !== undefined) q = q.where('reviews.owner_client_id', '=', owner);
  return q;
}

/** Unresolved and free to claim at `now`: open, or claimed with the claim lapsed. */
function claimable(q: Query, now: number): Query {
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
export interface Position {
  phase: 'u' | 'r';
  at: number;
  id: string;
}

/** The rows of one page of the queue (limit + 1 at most, resolvers not named); `after` from decodeCursor. */
export async function reviewRows(
  db: Db,
  viewer: Viewer,
  filter: ListFilter,
  after: Position | undefined,
): Promise<ReviewJoined[]> {
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
  return rows;
}

export function reviewById(db: Db, viewer: Viewer, id: string): Promise<ReviewJoined | undefined> {
  return visibleReviews(db, viewer).where('reviews.id', '=', id).executeTakeFirst();
}

/** The entity's other reviews not yet resolved that the viewer may see, due first: at most 20 (a review's page). */
export function otherOpenReviews(db: Db, viewer: Viewer, entityId: string, reviewId: string): Promise<ReviewJoined[]> {
  return visibleReviews(db, viewer)
    .where('reviews.entity_id', '=', entityId)
    .where('reviews.id', '<>', reviewId)
    .where('reviews.status', '<>', 'resolved')
    .orderBy('reviews.due_at', 'asc')
    .orderBy('reviews.id', 'asc')
    .limit(20)
    .execute();
}

/** The claimable reviews due first (of those the filter keeps), at most `limit`: claims.ts's `next` candidates. */
export function claimCandidates(
  db: Db,
  viewer: Viewer,
  filter: { outcome?: string; entityId?: string },
  limit: number,
): Promise<ReviewJoined[]> {
  let q = claimable(visibleReviews(db, viewer), viewer.now);
  if (filter.outcome !== undefined) q = q.where('reviews.outcome', '=', filter.outcome);
  if (filter.entityId !== undefined) q = q.where('reviews.entity_id', '=', filter.entityId);
  return q.orderBy('reviews.due_at', 'asc').orderBy('reviews.id', 'asc').limit(limit).execute();
}

/**
 * Claims review `id` for the viewer when it is open, its claim lapsed, or (`renew`) already the
 * viewer's: the rows changed, 0 or 1. Scoped by owner and environment, so a review the viewer
 * cannot see is never touched.
 */
export async function claimRow(db: Db, viewer: Viewer, id: string, renew: boolean): Promise<number> {
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
  return Number((await update.executeTakeFirst()).numUpdatedRows ?? 0);
}

/** Opens a claimed review again: any claim for an admin, else only the viewer's own or a lapsed one. */
export async function releaseRow(db: Db, viewer: Viewer, id: string): Promise<number> {
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
  return Number((await update.executeTakeFirst()).numUpdatedRows ?? 0);
}

/** What a resolution stores on its review. */
export interface ResolvedFields {
  resolution: 'approve' | 'decline';
  label: 'fraud' | 'legit' | null;
  note: string | null;
  addedToList: string | null;
}

/**
 * Resolves review `id` when it is not resolved and is open, its claim lapsed, or the viewer's own:
 * the rows changed, 0 or 1 (of two reviewers at once exactly one wins).
 */
export async function resolveRow(db: Db, viewer: Viewer, id: string, fields: ResolvedFields): Promise<number> {
  const { principal, now } = viewer;
  let update = db
    .updateTable('reviews')
    .set({
      status: 'resolved',
      resolution: fields.resolution,
      resolution_label: fields.label,
      note: fields.note,
      added_to_list: fields.addedToList,
      resolved_at: now,
      resolved_by: principal.id,
      assignee: principal.id,
    })
    .where('id', '=', id)
    .where('environment', '=', principal.environment)
    .where('status', '<>', 'resolved')
    .where((eb) =>
      eb.or([
        eb('status', '=', 'open'),
        eb('claimed_at', '<=', now - CLAIM_LAPSE_MS),
        eb('assignee', '=', principal.id),
      ]),
    );
  const owner = ownerFilter(principal);
  if (owner !== undefined) update = update.where('owner_client_id', '=', owner);
  return Number((await update.executeTakeFirst()).numUpdatedRows ?? 0);
}

/**
 * An erasure (docs/api.md, "Erasure"), in its transaction: the erased id becomes its digest in the
 * environment's reviews and, as a whole token, in their notes. Handed to the erasure
 * (trust/erasure.ts) by the composition root (src/routes.ts).
 */
export async function eraseFromReviews(
  trx: Transaction<Database>,
  env: Environment,
  id: string,
  digest: string,
): Promise<void> {
  await trx
    .updateTable('reviews')
    .set({ entity_id: digest })
    .where('environment', '=', env)
    .where('entity_id', '=', id)
    .execute();
  const pattern = containsPattern(id);
  const notes = await trx
    .selectFrom('reviews')
    .select(['id', 'note'])
    .where('environment', '=', env)
    .where(likeEscaped('note', pattern))
    .execute();
  for (const row of notes) {
    const note = replaceToken(row.note ?? '', id, digest);
    if (note !== row.note) await trx.updateTable('reviews').set({ note }).where('id', '=', row.id).execute();
  }
}
