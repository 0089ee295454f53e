// The review queue's API shapes (docs/api.md, "Reviews") and the record a stored review row becomes.
// A review row holds the queue's own state; what it is about (score, level, amount, matched rules)
// is read from its decision, which never changes, so it is joined rather than copied.
import { Type, type Static } from 'typebox';
import { StringEnum } from '../http/validation.ts';
import { LabelSchema, labelObject } from '../audit/labels.ts';
import type { DecisionsTable, ReviewsTable } from '../store/schema.ts';
import type { Actor } from '../lib/principal.ts';
import { actorIn, type Actors } from '../audit-log/actors.ts';
import { nullableActor } from '../audit-log/schemas.ts';
import { decodeFeaturesOrNull } from '../model/feature-vector.ts';

/** A claim not resolved within this long lapses: the review is open again for anyone. */
export const CLAIM_LAPSE_MS = 15 * 60_000;

export const REVIEW_STATUSES = ['open', 'claimed', 'resolved'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export const REVIEW_OUTCOMES = ['approve', 'review', 'hold'] as const;
const RESOLUTIONS = ['approve', 'decline'] as const;

const time = Type.String({ format: 'date-time' });
const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, options: { description?: string } = {}) =>
  Type.Union([t, Type.Null()], options);

export const ReviewSchema = Type.Object(
  {
    id: Type.String(),
    decision_id: Type.String(),
    entity_id: Type.String(),
    status: StringEnum(REVIEW_STATUSES, { description: 'open (a lapsed claim reads as open), claimed, or resolved' }),
    outcome: StringEnum(REVIEW_OUTCOMES, {
      description: "the decision's outcome: review or hold, or approve for a sampled review",
    }),
    reason: StringEnum(['outcome', 'sample'] as const, {
      description:
        "outcome: opened by the decision's outcome; sample: one of the policy's review_sample_rate of approvals",
    }),
    sample_rate: nullable(Type.Number(), {
      description: 'the rate a sampled review was drawn at; null for reason outcome',
    }),
    rules: Type.Array(Type.Unknown(), {
      description: 'the active rules that matched, with the values they read; [] when none',
    }),
    score: nullable(Type.Integer()),
    risk_level: nullable(Type.String()),
    amount: nullable(Type.Number()),
    currency: nullable(Type.String()),
    opened_at: time,
    due_at: time,
    overdue: Type.Boolean({ description: 'not resolved and past due_at' }),
    assignee: nullable(Type.String(), {
      description: 'the principal holding the claim (while it has not lapsed), or who resolved it',
    }),
    assignee_name: nullable(Type.String(), {
      description:
        "the assignee's name: the user's name for a person, the client's name for a machine client; null when no one holds it",
    }),
    claimed_at: nullable(time),
    claim_expires_at: nullable(time, {
      description: 'when the claim lapses (15 minutes after it was taken) unless resolved',
    }),
    resolution: nullable(StringEnum(RESOLUTIONS)),
    label: nullable(StringEnum(['fraud', 'legit'] as const), {
      description: 'the label the resolution gave (given, or fraud for a decline); null for an approve without one',
    }),
    note: nullable(Type.String()),
    added_to_list: nullable(Type.String()),
    resolved_at: nullable(time),
    resolved_by: nullable(Type.String()),
    resolved_by_actor: nullableActor('`resolved_by` named as it is now: `{type, id, name}`; null while unresolved'),
    owner_client_id: Type.String(),
  },
  { $id: 'Review' },
);
export type ReviewRecord = Static<typeof ReviewSchema>;

const ReviewDecision = Type.Object({
  id: Type.String(),
  created_at: time,
  policy_version: Type.String(),
  outcome: nullable(Type.String()),
  result: Type.Unknown({
    description:
      'the score response as it was returned: score, risk_level, signals (each with its value, weight and description), safe_amount, rules',
  }),
  features: nullable(Type.Record(Type.String(), Type.Number())),
  request: nullable(Type.Record(Type.String(), Type.Unknown())),
  rules: Type.Array(Type.Unknown(), { description: 'matched active rules with the values their condition read' }),
  shadow_rules: Type.Array(Type.Unknown()),
  trade_id: nullable(Type.String()),
  label: nullable(LabelSchema),
});

export const ReviewDetailSchema = Type.Intersect([
  ReviewSchema,
  Type.Object({
    decision: ReviewDecision,
    other_open_reviews: Type.Array(ReviewSchema, {
      description: "the entity's other unresolved reviews visible to the caller, due first (at most 20)",
    }),
    entity_labels: Type.Object(
      { fraud: Type.Integer(), legit: Type.Integer() },
      { description: "labels on the entity's other score decisions visible to the caller" },
    ),
  }),
]);

export const ListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(REVIEW_STATUSES)),
    outcome: Type.Optional(StringEnum(REVIEW_OUTCOMES)),
    assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "a principal id, or 'me'" })),
    entity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** POST /api/v1/reviews/next: the queue filters that choose what "next" is among. */
export const NextBody = Type.Object(
  {
    outcome: Type.Optional(StringEnum(REVIEW_OUTCOMES)),
    entity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);

export const ResolveBody = Type.Object(
  {
    resolution: StringEnum(RESOLUTIONS),
    label: Type.Optional(StringEnum(['fraud', 'legit'] as const)),
    note: Type.Optional(Type.String({ maxLength: 500 })),
    add_to_list: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' })),
  },
  { additionalProperties: false },
);

const outcomeCounts = Type.Object({ open: Type.Integer(), resolved: Type.Integer() });
export const StatsSchema = Type.Object({
  open: Type.Integer({ description: 'unresolved (open or claimed)' }),
  overdue: Type.Integer({ description: 'unresolved and past due' }),
  resolved_24h: Type.Integer(),
  median_minutes_to_resolve: nullable(Type.Number(), {
    description: 'opened to resolved, over the reviews resolved in the last 24 hours; null when none',
  }),
  by_outcome: Type.Object({ review: outcomeCounts, hold: outcomeCounts, approve: outcomeCounts }),
  agreement: Type.Object(
    { approve: Type.Integer(), decline: Type.Integer() },
    { description: 'resolved reviews by verdict' },
  ),
  review_labels_since_last_fit: Type.Integer({
    description:
      "score decisions labelled by a review after the environment's latest fitted policy was made (all of them when none was)",
  }),
});

/** A review row joined with the decision columns its record shows. */
export type ReviewJoined = ReviewsTable &
  Pick<DecisionsTable, 'result' | 'risk_level' | 'request' | 'rules'> & {
    /** the name of whoever `resolved_by` (else `assignee`) names: a user's, else a client's (queue.ts) */
    assignee_name?: string | null;
    /** `resolved_by` named (queue.ts resolves a page's at once); else named by its id */
    resolved_by_actor?: Actor | null;
  };

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();

function parse<T>(text: string | null | undefined, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** Whether an unresolved claim still holds at `now` (a lapsed one reads as open). */
const claimHolds = (row: Pick<ReviewsTable, 'status' | 'claimed_at'>, now: number): boolean =>
  row.status === 'claimed' && row.claimed_at !== null && Number(row.claimed_at) > now - CLAIM_LAPSE_MS;

export function reviewRecord(row: ReviewJoined, now: number): ReviewRecord {
  const result = parse<Record<string, unknown>>(row.result, {});
  const request = parse<Record<string, unknown>>(row.request, {});
  const held = claimHolds(row, now);
  const resolved = row.status === 'resolved';
  const status: ReviewStatus = resolved ? 'resolved' : held ? 'claimed' : 'open';
  return {
    id: row.id,
    decision_id: row.decision_id,
    entity_id: row.entity_id,
    status,
    outcome: row.outcome as ReviewRecord['outcome'],
    reason: row.reason === 'sample' ? 'sample' : 'outcome',
    sample_rate: row.sample_rate === null ? null : Number(row.sample_rate),
    rules: parse<unknown[]>(row.rules, []),
    score: typeof result.score === 'number' ? result.score : null,
    risk_level: row.risk_level ?? (typeof result.risk_level === 'string' ? result.risk_level : null),
    amount: typeof request.amount === 'number' ? request.amount : null,
    currency: typeof request.currency === 'string' ? request.currency : null,
    opened_at: iso(row.opened_at)!,
    due_at: iso(row.due_at)!,
    overdue: !resolved && Number(row.due_at) < now,
    assignee: resolved ? (row.resolved_by ?? row.assignee) : held ? row.assignee : null,
    assignee_name: resolved || held ? (row.assignee_name ?? null) : null,
    claimed_at: held ? iso(row.claimed_at) : null,
    claim_expires_at: held ? iso(Number(row.claimed_at) + CLAIM_LAPSE_MS) : null,
    resolution: resolved ? (row.resolution as ReviewRecord['resolution']) : null,
    label: row.resolution_label === 'fraud' || row.resolution_label === 'legit' ? row.resolution_label : null,
    note: row.note,
    added_to_list: row.added_to_list,
    resolved_at: iso(row.resolved_at),
    resolved_by: row.resolved_by,
    resolved_by_actor: row.resolved_by_actor ?? actorIn(new Map(), row.resolved_by),
    owner_client_id: row.owner_client_id,
  };
}

/** The decision as a review's detail shows it. */
export function reviewDecision(row: DecisionsTable, actors: Actors): Static<typeof ReviewDecision> {
  return {
    id: row.id,
    created_at: iso(row.created_at)!,
    policy_version: row.policy_version,
    outcome: row.outcome ?? null,
    result: parse<unknown>(row.result, null),
    // stored as an array or as the object of names (model/feature-vector.ts): shown as the object
    features: decodeFeaturesOrNull(row.features) as Record<string, number> | null,
    request: parse<Record<string, unknown> | null>(row.request, null),
    rules: parse<unknown[]>(row.rules, []),
    shadow_rules: parse<unknown[]>(row.shadow_rules, []),
    trade_id: row.trade_id ?? null,
    label: labelObject(row, actors),
  };
}
