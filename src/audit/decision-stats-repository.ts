// The `decisions` table's owner for the figures read beside the desk and the rules (issue 41, "one
// owner per table"): the desk's day (docs/api.md, "Reviews", GET /api/v1/desk/day: outcomes,
// labels and their reviews' verdicts per UTC day, the fraud money passed) and the rules' statistics
// (docs/api.md, "Rules and lists": the latest decision's facts, matches per rule and day). Counts
// are grouped in the store; each function takes the executor and builds what its caller built.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { afterKey } from './decision-history-repository.ts';

type Db = Kysely<Database>;

const DAY_MS = 86_400_000;

/** The score decisions of a window (from `since`) a caller may see: `owner` undefined is every client's. */
interface DecisionWindow {
  environment: Environment;
  owner: string | undefined;
  since: number;
}

/** The UTC day number of a time column: integer division on both stores (times are never negative). */
const dayNumber = (column: string): RawBuilder<number> => sql<number>`${sql.ref(column)} / ${sql.lit(DAY_MS)}`;

/** The window's score decisions, each beside the review it opened (at most one: reviews.decision_id is unique). */
function decisionsOf(db: Db, w: DecisionWindow) {
  return db
    .selectFrom('decisions')
    .leftJoin('reviews', (j) =>
      j.onRef('reviews.decision_id', '=', 'decisions.id').on('reviews.environment', '=', w.environment),
    )
    .where('decisions.environment', '=', w.environment)
    .where('decisions.kind', '=', 'score')
    .where('decisions.created_at', '>=', w.since)
    .$if(w.owner !== undefined, (q) => q.where('decisions.owner_client_id', '=', w.owner!));
}

/** Score decisions counted per UTC day, outcome, label and their review's verdict. */
export function decisionDayGroups(db: Db, w: DecisionWindow) {
  const day = dayNumber('decisions.created_at');
  const columns = ['decisions.outcome', 'decisions.label', 'reviews.resolution'] as const;
  return decisionsOf(db, w)
    .select((eb) => [day.as('day'), ...columns, eb.fn.countAll<number>().as('n')])
    .groupBy([day, ...columns])
    .execute();
}

/**
 * A page of the window's fraud-labelled decisions that were approved, or sent to a review that
 * approved them, after (at, id), oldest first: the amount is in the request's JSON.
 */
export function fraudPassedPage(
  db: Db,
  w: DecisionWindow,
  after: { at: number; id: string } | undefined,
  page: number,
) {
  let q = decisionsOf(db, w)
    .select(['decisions.id', 'decisions.created_at', 'decisions.request'])
    .where('decisions.label', '=', 'fraud')
    .where((eb) =>
      eb.or([
        eb('decisions.outcome', '=', 'approve'),
        eb.and([eb('decisions.outcome', 'in', ['review', 'hold']), eb('reviews.resolution', '=', 'approve')]),
      ]),
    );
  if (after) q = q.where(afterKey(after));
  return q.orderBy('decisions.created_at').orderBy('decisions.id').limit(page).execute();
}

/** The environment's most recent score decision (of `owner` when set): what it gave its rules. */
export function latestScoreDecision(db: Db, environment: Environment, owner: string | undefined) {
  return db
    .selectFrom('decisions')
    .select(['subject_id', 'created_at', 'request', 'features', 'result', 'risk_level', 'rule_inputs'])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .$if(owner !== undefined, (q) => q.where('owner_client_id', '=', owner!))
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Up to `limit` score decisions from `since` whose rules or shadow_rules are set, newest first. */
export function ruleMatchRows(
  db: Db,
  environment: Environment,
  since: number,
  owner: string | undefined,
  limit: number,
) {
  return db
    .selectFrom('decisions')
    .select(['created_at', 'rules', 'shadow_rules'])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('created_at', '>=', since)
    .$if(owner !== undefined, (q) => q.where('owner_client_id', '=', owner!))
    .where((eb) => eb.or([eb('rules', 'is not', null), eb('shadow_rules', 'is not', null)]))
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

/** Score decisions from `since` per UTC day number (of `owner` when set). */
export function scoredPerDay(db: Db, environment: Environment, since: number, owner: string | undefined) {
  // Integer division on both stores: the UTC day number (a literal, so select and group by are one expression).
  const day = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
  return db
    .selectFrom('decisions')
    .select((eb) => [day.as('day'), eb.fn.countAll<number>().as('n')])
    .where('environment', '=', environment)
    .where('kind', '=', 'score')
    .where('created_at', '>=', since)
    .$if(owner !== undefined, (q) => q.where('owner_client_id', '=', owner!))
    .groupBy(day)
    .execute();
}
