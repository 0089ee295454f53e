// The request and response schemas of the policy routes (docs/api.md, "Policies"), and the checks
// a schema cannot express (an operating target names exactly one limit). The OpenAPI document and
// the SDK are generated from these.
import { Type, type Static } from 'typebox';
import { ProblemSchema, problemResponses } from '../http/problem.ts';
import { Invalid } from '../lib/domain-errors.ts';
import { StringEnum } from '../http/validation.ts';
import type { OperatingTarget } from './operating.ts';
import { EconomicsSchema } from '../model/economics.ts';
import { nullableActor } from '../audit-log/schemas.ts';

const recordFields = {
  version: Type.String(),
  status: StringEnum(['active', 'shadow', 'candidate', 'retired'] as const),
  source: StringEnum(['builtin', 'file', 'upload', 'fit', 'derived'] as const),
  parent_version: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Type.Union([Type.String(), Type.Null()], {
    description: 'the principal id that created it (a user, client or API key; `cli`); null for the built-in policy',
  }),
  created_by_actor: nullableActor('`created_by` named as it is now: `{type, id, name}`; null when created_by is'),
  activated_by: nullableActor(
    'who last made this version active, named as now; null if never, for activations before 2026-11-29, and at start-up',
  ),
  summary: Type.String(),
};
export const PolicyRecord = Type.Object(recordFields);
export const PolicyDetail = Type.Object({ ...recordFields, document: Type.Unknown(), report: Type.Unknown() });

export const Params = Type.Object({ version: Type.String({ minLength: 1, maxLength: 64 }) });
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,16}\\.[\\x21-\\x7e]{1,64}$' })),
  },
  { additionalProperties: false },
);
const Time = Type.String({ format: 'date-time' });
export const WindowBody = Type.Object(
  { since: Type.Optional(Time), until: Type.Optional(Time) },
  { additionalProperties: false },
);
/** An operating point (docs/api.md, "Policies"): a level and exactly one limit, checked by checkTarget. */
const TargetSchema = Type.Object(
  {
    level: StringEnum(['high', 'critical'] as const),
    max_false_positive_rate: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    max_share_flagged: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    min_precision: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);
const LIMITS = ['max_false_positive_rate', 'max_share_flagged', 'min_precision'] as const;

export function checkTarget(target: Static<typeof TargetSchema> | undefined): OperatingTarget | undefined {
  if (target === undefined) return undefined;
  const given = LIMITS.filter((k) => target[k] !== undefined);
  if (given.length !== 1) {
    throw new Invalid('A target names exactly one of max_false_positive_rate, max_share_flagged, min_precision.', [
      { field: 'target', message: `must have exactly one of ${LIMITS.join(', ')} (got ${given.length})` },
    ]);
  }
  return target;
}

export const FitBody = Type.Object(
  {
    since: Type.Optional(Time),
    until: Type.Optional(Time),
    base_version: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    assume_legit_after_days: Type.Optional(Type.Number({ minimum: 0, maximum: 3650 })),
    holdout_fraction: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
    target: Type.Optional(TargetSchema),
    /** docs/api.md, "Decisions by money": `cost` sets the candidate's economics from the desk's costs and capacity */
    objective: Type.Optional(StringEnum(['cost', 'target'] as const)),
    /** the desk's costs for the cost objective; default: the base policy's, else the documented defaults */
    economics: Type.Optional(EconomicsSchema),
  },
  { additionalProperties: false },
);
export const EmptyBody = Type.Object({}, { additionalProperties: false });
export const ActivateBody = Type.Object(
  {
    /** activate even when the operating point moves beyond MOVE_LIMITS (operating.ts) */
    confirm: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const Side = Type.Object({ version: Type.String(), high: Type.Integer(), share_flagged_high: Type.Number() });
const MoveSchema = Type.Object({
  decisions: Type.Integer(),
  before: Side,
  after: Side,
  change: Type.Number(),
  exceeds: Type.Boolean(),
});
/** 409 when confirmation is needed: the problem plus the before/after figures. */
export const ConfirmProblem = Type.Object({ ...ProblemSchema.properties, operating_point: Type.Optional(MoveSchema) });

export const problems = problemResponses(400, 401, 403, 404);

/** A running fit or backtest and its progress (GET /api/v1/policy-jobs). */
export const JobSchema = Type.Object({
  id: Type.String(),
  kind: StringEnum(['fit', 'backtest'] as const),
  started_at: Type.String({ format: 'date-time' }),
  /** when the job last reported: its progress is written with its heartbeat, every few seconds */
  updated_at: Type.String({ format: 'date-time' }),
  phase: StringEnum(['reading', 'fitting', 'reporting'] as const),
  decisions_read: Type.Integer({ minimum: 0 }),
  /** decisions kept with a label (a fit's training labels, a backtest's labelled decisions) */
  labelled: Type.Integer({ minimum: 0 }),
  /** the decisions the job will read, counted as it starts; null until counted */
  total: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  /** decisions_read / total (the reading; fitting and reporting come after it), null without a total */
  fraction: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()]),
});
export const JobParams = Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 64 }) });
/** 409 while another job runs: the problem names it, to follow at GET /api/v1/policy-jobs/{id}. */
export const JobConflictProblem = Type.Object({
  ...ProblemSchema.properties,
  job: Type.Optional(Type.Object({ id: Type.String(), kind: Type.String() })),
});
