// The `decisions` table's owner for reads over many decisions (issue 41, "one owner per table"): the
// audit list (docs/api.md, "Trust scoring" audit), the pages a fit, backtest or rule test reads
// oldest first by keyset on (created_at, id), the activation check's sample, and the counts the
// review desk shows. Each takes the executor; the statements are the ones their callers built.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';

type Db = Kysely<Database>;

/** A page of GET /api/v1/decisions: its filters, each applied when set (label 'none': unlabelled). */
interface DecisionListFilter {
  environment: Environment;
  /** the caller's client, or undefined for an admin (every client's) */
  owner: string | undefined;
  kind: 'score' | 'dispute_analysis' | undefined;
  entityId: string | undefined;
  label: 'fraud' | 'legit' | 'none' | undefined;
  since: number | undefined;
  until: number | undefined;
  /** the cursor: rows before (at, key), newest first */
  after: { at: number; key: string } | undefined;
  riskLevel: string | undefined;
  outcome: string | undefined;
}

/** Up to `rows` decisions of the filter, newest first (by time, then id). */
export function listDecisions(db: Db, f: DecisionListFilter, rows: number) {
  let q = db.selectFrom('decisions').selectAll().where('environment', '=', f.environment);
  if (f.owner !== undefined) q = q.where('owner_client_id', '=', f.owner);
  if (f.kind) q = q.where('kind', '=', f.kind);
  if (f.entityId !== undefined) q = q.where('kind', '=', 'score').where('subject_id', '=', f.entityId);
  if (f.label === 'none') q = q.where('label', 'is', null);
  else if (f.label) q = q.where('label', '=', f.label);
  if (f.since !== undefined) q = q.where('created_at', '>=', f.since);
  if (f.until !== undefined) q = q.where('created_at', '<', f.until);
  const after = f.after;
  if (after)
    q = q.where((eb) =>
      eb.or([eb('created_at', '<', after.at), eb.and([eb('created_at', '=', after.at), eb('id', '<', after.key)])]),
    );
  if (f.riskLevel) q = q.where('risk_level', '=', f.riskLevel);
  if (f.outcome) q = q.where('outcome', '=', f.outcome);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(rows).execute();
}

/** The stored features of the environment's `limit` most recent score decisions that have them. */
export function recentScoreFeatures(db: Db, environment: Environment, limit: number) {
  return db
    .selectFrom('decisions')
    .select(['features', 'feature_set'])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('features', 'is not', null)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

/** [since, until) in ms, either end open when undefined. */
interface TimeWindow {
  since?: number;
  until?: number;
}

/** The score decisions with stored features in the window. */
export async function countScoredWithFeatures(db: Db, environment: Environment, window: TimeWindow): Promise<number> {
  let q = db
    .selectFrom('decisions')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('features', 'is not', null);
  if (window.since !== undefined) q = q.where('created_at', '>=', window.since);
  if (window.until !== undefined) q = q.where('created_at', '<', window.until);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/**
 * A page of the score decisions with stored features in the window after (at, id), oldest first,
 * each with the review it opened (one at most: reviews.decision_id is unique, so the join never
 * repeats a decision).
 */
export function scoredWithFeaturesPage(
  db: Db,
  environment: Environment,
  window: TimeWindow,
  after: { at: number; id: string } | undefined,
  page: number,
) {
  let q = db
    .selectFrom('decisions')
    .leftJoin('reviews', (join) =>
      join.onRef('reviews.decision_id', '=', 'decisions.id').on('reviews.environment', '=', environment),
    )
    .select([
      'decisions.id',
      'decisions.subject_id',
      'decisions.created_at',
      'decisions.features',
      'decisions.feature_set',
      'decisions.trade_id',
      'decisions.risk_level',
      'decisions.label',
      'decisions.label_source',
      'decisions.outcome',
      'decisions.shadow_version',
      'decisions.shadow_score',
      'decisions.policy_version',
      'decisions.request',
      'reviews.reason as review_reason',
      'reviews.sample_rate as review_sample_rate',
      'reviews.resolution as review_resolution',
    ])
    .where('decisions.environment', '=', environment)
    .where('decisions.kind', '=', 'score')
    .where('decisions.features', 'is not', null);
  if (window.since !== undefined) q = q.where('decisions.created_at', '>=', window.since);
  if (window.until !== undefined) q = q.where('decisions.created_at', '<', window.until);
  if (after) q = q.where(afterKey(after));
  return q.orderBy('decisions.created_at').orderBy('decisions.id').limit(page).execute();
}

/**
 * A page of a rule test's score decisions in [since, until), of `owner` when set, after (at, id),
 * oldest first; the features and the result only when `read` asks for them (rules/replay-columns.ts).
 */
export function replayPage(
  db: Db,
  environment: Environment,
  window: { since: number; until: number; owner?: string },
  read: { features: boolean; result: boolean },
  after: { at: number; id: string } | undefined,
  page: number,
) {
  let q = db
    .selectFrom('decisions')
    .select([
      'id',
      'subject_id',
      'created_at',
      'request',
      'feature_set',
      'risk_level',
      'outcome',
      'rules',
      'label',
      'rule_inputs',
    ])
    .$if(read.features, (qb) => qb.select('features'))
    .$if(read.result, (qb) => qb.select('result'))
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    // The index range starts at the last page's end, not at the window's start: with the
    // window's bound beside it (or the keyset as an OR alone), the planner may seek from the
    // window's start and every page scans the index from there again (quadratic: 26 ms a page
    // near the end of 100,000 decisions, and twice the read time over 200,000).
    .where('created_at', '>=', after ? after.at : window.since)
    .where('created_at', '<', window.until);
  if (window.owner !== undefined) q = q.where('owner_client_id', '=', window.owner);
  if (after) {
    const { at, id } = after;
    // With created_at >= at, "after (at, id)" is: a later time, or the same time and a later id.
    q = q.where((eb) => eb.or([eb('created_at', '>', at), eb('id', '>', id)]));
  }
  return q.orderBy('created_at').orderBy('id').limit(page).execute();
}

/** An entity's labelled score decisions counted per label, of `owner` when set. */
export function entityLabelCounts(db: Db, environment: Environment, entityId: string, owner: string | undefined) {
  let labels = db
    .selectFrom('decisions')
    .select((eb) => ['label', eb.fn.countAll<string | number>().as('n')])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('subject_id', '=', entityId)
    .where('label', 'is not', null)
    .groupBy('label');
  if (owner !== undefined) labels = labels.where('owner_client_id', '=', owner);
  return labels.execute();
}

/** Score decisions labelled by a reviewer, after `since` when set, of `owner` when set. */
export async function countReviewLabels(
  db: Db,
  environment: Environment,
  since: number | undefined,
  owner: string | undefined,
): Promise<number> {
  let q = db
    .selectFrom('decisions')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('label_source', '=', 'review');
  if (since !== undefined) q = q.where('labelled_at', '>', since);
  if (owner !== undefined) q = q.where('owner_client_id', '=', owner);
  return Number((await q.executeTakeFirst())?.n ?? 0);
}

/** Of `ids`, the subjects of the client's decisions. */
export function subjectsDecidedFor(db: Db, env: Environment, clientId: string, ids: string[]) {
  return db
    .selectFrom('decisions')
    .select('subject_id')
    .distinct()
    .where('environment', '=', env)
    .where('subject_id', 'in', ids)
    .where('owner_client_id', '=', clientId)
    .execute();
}

/**
 * The keyset of a page of decisions in time order: those after (at, id), ties on the same
 * millisecond broken by id, so a page never repeats or skips one.
 */
export const afterKey =
  ({ at, id }: { at: number; id: string }) =>
  (eb: ExpressionBuilder<Database, 'decisions'>) =>
    eb.or([
      eb('decisions.created_at', '>', at),
      eb.and([eb('decisions.created_at', '=', at), eb('decisions.id', '>', id)]),
    ]);
