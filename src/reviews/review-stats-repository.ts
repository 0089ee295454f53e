// The reviews table's owner for the figures (docs/api.md, "Reviews": GET /api/v1/reviews/stats,
// the queue's, and GET /api/v1/desk/day, the desk's day): counts grouped in the store, the middle
// rows of a median, the analysts' resolutions. stats.ts and desk-day.ts compute from these; each
// function takes the executor and builds what its caller built. The decisions' side of the desk's
// day is audit/decision-stats-repository.ts.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

type Db = Kysely<Database>;

const DAY_MS = 86_400_000;

/** The window of the desk's day. */
export interface ReviewWindow {
  environment: Environment;
  /** the caller's client, or undefined for every client's (an admin, a person) */
  owner: string | undefined;
  /** the first UTC midnight of the window */
  since: number;
  now: number;
}

/** The UTC day number of a time column: integer division on both stores (times are never negative). */
const dayNumber = (column: string): RawBuilder<number> => sql<number>`${sql.ref(column)} / ${sql.lit(DAY_MS)}`;

// The queue's figures (stats.ts).

/** The environment's reviews (of `owner` when set). */
function statsBase(db: Db, environment: Environment, owner: string | undefined) {
  let base = db.selectFrom('reviews').where('environment', '=', environment);
  if (owner !== undefined) base = base.where('owner_client_id', '=', owner);
  return base;
}

/** Reviews counted per outcome, status and resolution. */
export function reviewCounts(db: Db, environment: Environment, owner: string | undefined) {
  return statsBase(db, environment, owner)
    .select((eb) => ['outcome', 'status', 'resolution', eb.fn.countAll<string | number>().as('n')])
    .groupBy(['outcome', 'status', 'resolution'])
    .execute();
}

/** Unresolved reviews past their due time at `now`, counted. */
export function overdueCount(db: Db, environment: Environment, owner: string | undefined, now: number) {
  return statsBase(db, environment, owner)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('status', '<>', 'resolved')
    .where('due_at', '<', now)
    .executeTakeFirst();
}

/** When each review resolved from `since` on was opened and resolved. */
export function resolvedSince(db: Db, environment: Environment, owner: string | undefined, since: number) {
  return statsBase(db, environment, owner)
    .select(['opened_at', 'resolved_at'])
    .where('status', '=', 'resolved')
    .where('resolved_at', '>=', since)
    .execute();
}

// The desk's day (desk-day.ts).

/** The reviews the caller may see. */
function reviewsOf(db: Db, w: ReviewWindow) {
  return db
    .selectFrom('reviews')
    .where('reviews.environment', '=', w.environment)
    .$if(w.owner !== undefined, (q) => q.where('reviews.owner_client_id', '=', w.owner!));
}

/** Reviews resolved in the window. */
const resolvedIn = (db: Db, w: ReviewWindow) =>
  reviewsOf(db, w).where('reviews.status', '=', 'resolved').where('reviews.resolved_at', '>=', w.since);

/** What a median groups the window's resolutions by: the UTC day resolved, none (one group), the analyst. */
export type MedianGroup = 'day' | 'all' | 'analyst';

const GROUPS: Record<MedianGroup, () => RawBuilder<unknown>> = {
  day: () => dayNumber('reviews.resolved_at'),
  all: () => sql`0`,
  analyst: () => sql`reviews.resolved_by`,
};

/**
 * The middle rows of each group of the window's resolutions by time to resolve (opened → resolved,
 * ms): each group's rows numbered by duration; the one or two middle rows (2·rn between n and n + 2)
 * are the only ones read.
 */
export function middleResolutions(db: Db, w: ReviewWindow, by: MedianGroup) {
  const ranked = resolvedIn(db, w).select([
    GROUPS[by]().as('g'),
    sql<number>`reviews.resolved_at - reviews.opened_at`.as('ms'),
  ]);
  const numbered = db.selectFrom(ranked.as('r')).select((eb) => [
    'r.g',
    'r.ms',
    eb.fn
      .agg<number>('row_number', [])
      .over((ob) => ob.partitionBy('r.g').orderBy('r.ms'))
      .as('rn'),
    eb.fn
      .countAll<number>()
      .over((ob) => ob.partitionBy('r.g'))
      .as('n'),
  ]);
  return db
    .selectFrom(numbered.as('x'))
    .select(['x.g', 'x.ms'])
    .where(sql<boolean>`2 * x.rn >= x.n and 2 * x.rn <= x.n + 2`)
    .execute();
}

/** Reviews opened in the window, per UTC day. */
export function openedPerDay(db: Db, w: ReviewWindow) {
  const opened = dayNumber('reviews.opened_at');
  return reviewsOf(db, w)
    .select((eb) => [opened.as('day'), eb.fn.countAll<number>().as('n')])
    .where('reviews.opened_at', '>=', w.since)
    .groupBy(opened)
    .execute();
}

/** Reviews resolved in the window, per UTC day, with those resolved after their due time. */
export function resolvedPerDay(db: Db, w: ReviewWindow) {
  const resolved = dayNumber('reviews.resolved_at');
  return resolvedIn(db, w)
    .select((eb) => [
      resolved.as('day'),
      eb.fn.countAll<number>().as('n'),
      eb.fn
        .sum<number>(eb.case().when('reviews.resolved_at', '>', eb.ref('reviews.due_at')).then(1).else(0).end())
        .as('late'),
    ])
    .groupBy(resolved)
    .execute();
}

/** The backlog now: unresolved reviews, and those past due. */
export function backlogCounts(db: Db, w: ReviewWindow) {
  return reviewsOf(db, w)
    .select((eb) => [
      eb.fn.countAll<number>().as('open'),
      eb.fn.sum<number>(eb.case().when('reviews.due_at', '<', w.now).then(1).else(0).end()).as('overdue'),
    ])
    .where('reviews.status', '<>', 'resolved')
    .executeTakeFirst();
}

/**
 * Each analyst's resolutions in the window, most first, up to `limit`: how many, and of those whose
 * decision was later labelled by an event or the API, how many agreed (decline ↔ fraud, approve ↔
 * legit: the fit's measure). It joins decisions for their labels, but is about reviews (their
 * resolutions, grouped by who resolved them), so it lives with the reviews.
 */
export function analystResolutions(db: Db, w: ReviewWindow, limit: number) {
  const checked = sql<boolean>`decisions.label_source in ('event', 'api') and decisions.label in ('fraud', 'legit')`;
  const agreed = sql<boolean>`(reviews.resolution = 'decline' and decisions.label = 'fraud') or (reviews.resolution = 'approve' and decisions.label = 'legit')`;
  return resolvedIn(db, w)
    .innerJoin('decisions', 'decisions.id', 'reviews.decision_id')
    .select((eb) => [
      'reviews.resolved_by',
      eb.fn.countAll<number>().as('resolved'),
      eb.fn.sum<number>(eb.case().when(checked).then(1).else(0).end()).as('checked'),
      eb.fn
        .sum<number>(eb.case().when(checked).then(eb.case().when(agreed).then(1).else(0).end()).else(0).end())
        .as('agreed'),
    ])
    .where('reviews.resolved_by', 'is not', null)
    .groupBy('reviews.resolved_by')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('reviews.resolved_by')
    .limit(limit)
    .execute();
}
