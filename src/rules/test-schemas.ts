// The request and response of testing a rule (docs/rules.md, "Testing a rule"; test-routes.ts).
import { Type } from 'typebox';
import { StringEnum } from '../http/validation.ts';
import { OUTCOMES } from '../model/outcomes.ts';
import { RuleBodySchema } from './schemas.ts';

const Time = Type.String({ format: 'date-time' });
const Exclude = Type.Optional(
  Type.Array(StringEnum(OUTCOMES), {
    maxItems: OUTCOMES.length,
    uniqueItems: true,
    description:
      'leave out the decisions whose outcome was one of these (e.g. ["decline", "hold"]: what the policy and the other rules already stop), to see what this rule adds',
  }),
);
export const TestBody = Type.Object(
  { rule: RuleBodySchema, since: Type.Optional(Time), until: Type.Optional(Time), exclude_outcomes: Exclude },
  { additionalProperties: false },
);
export const SavedTestBody = Type.Object(
  { since: Type.Optional(Time), until: Type.Optional(Time), exclude_outcomes: Exclude },
  { additionalProperties: false },
);
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const Count = Type.Integer({ minimum: 0 });
const OutcomeCounts = Type.Object(
  Object.fromEntries(OUTCOMES.map((o) => [o, Count])) as Record<(typeof OUTCOMES)[number], typeof Count>,
);
const Cell = Type.Object({ matched: Count, total: Count });
const LabelCell = Type.Object({ changed: Count, amount_matched: Type.Record(Type.String(), Type.Number()) });
const OutcomeName = StringEnum(OUTCOMES);
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const RuleTestSchema = Type.Object({
  since: Time,
  until: Time,
  decisions: Type.Integer({ minimum: 0, description: 'score decisions of the window replayed' }),
  matched: Type.Integer({ minimum: 0, description: 'decisions the rule matches' }),
  errors: Type.Integer({
    minimum: 0,
    description: 'decisions on which the condition failed at run time (no match, as in a live score)',
  }),
  without_inputs: Type.Integer({
    minimum: 0,
    description:
      'decisions made before rule inputs were stored: the entity facts, amount_ref and any context beyond the request summary read as absent',
  }),
  changed: Type.Integer({ minimum: 0, description: 'decisions whose outcome the rule changes' }),
  outcomes: Type.Object(
    { before: OutcomeCounts, after: OutcomeCounts },
    { description: 'outcomes as decided, and with the rule active' },
  ),
  labelled: Type.Object(
    { fraud: Cell, legit: Cell },
    { description: 'labelled decisions: how many there are and how many the rule matches (a confusion matrix)' },
  ),
  amount_matched: Type.Record(Type.String(), Type.Number(), {
    description:
      'the matched decisions\' amounts summed per currency (`{"USDT": 1234.5, "EUR": 80}`); amounts of different currencies are never added together',
  }),
  by_label: Type.Object(
    { fraud: LabelCell, legit: LabelCell, unlabelled: LabelCell },
    { description: '`changed` and `amount_matched` of the fraud, legit and unlabelled decisions apart' },
  ),
  excluded: Type.Integer({ minimum: 0, description: 'decisions left out by `exclude_outcomes`' }),
  notes: Type.Array(Type.String(), {
    description:
      'what to know when reading the figures, e.g. that a list the rule reads got its first entry after some of the decisions (a test reads each list as it was at each decision)',
  }),
  examples: Type.Array(
    Type.Object({
      decision_id: Type.String(),
      created_at: Time,
      reads: Type.Record(Type.String(), Type.Unknown(), {
        description: 'the variables the condition read, with their values',
      }),
      before: OutcomeName,
      after: OutcomeName,
      label: Nullable(StringEnum(['fraud', 'legit'] as const)),
      amount: Nullable(Type.Number()),
      currency: Nullable(Type.String()),
    }),
    { maxItems: 20, description: 'the most recent matched decisions (at most 20), newest first' },
  ),
});
