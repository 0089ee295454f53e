// The request and response schemas of the rules and lists routes (docs/api.md, "Rules and lists").
// The schema checks shapes only; whether a condition type-checks, names a known list, and whether
// a rule has an action or a cap is the engine's check (compile.ts checkRule), answered with the
// field and the line:column where it applies. The OpenAPI document and the SDK come from these.
import { Type } from 'typebox';
import { PATTERN_MESSAGE, StringEnum } from '../http/validation.ts';
import { OUTCOMES } from '../model/outcomes.ts';
import { RULE_LIMITS } from './cel-env.ts';
import { actorSibling } from '../audit-log/schemas.ts';

export const RULE_STATUSES = ['draft', 'shadow', 'active', 'retired'] as const;
export type RuleStatus = (typeof RULE_STATUSES)[number];
/** The statuses a rule can be given; `retired` is reached only by DELETE, and is final. */
const SETTABLE_STATUSES = ['draft', 'shadow', 'active'] as const;

const LIST_KINDS = ['entity', 'identifier', 'country', 'string', 'payment_method'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

/** Longer expressions are refused by the engine with their length named; the schema leaves room for that answer. */
const expression = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: RULE_LIMITS.maxLength * 2,
    description: `${description} (at most ${RULE_LIMITS.maxLength} characters)`,
  });
const Expression = expression('a CEL expression');
const Cap = Type.Union([Type.Number({ minimum: 0 }), Expression], {
  description: "a number ≥ 0, or a CEL expression over the same variables returning one, in the request's currency",
});
const Name = Type.String({ minLength: 1, maxLength: 100 });
const Description = Type.String({ maxLength: 1000 });
const Action = StringEnum(OUTCOMES);

const bodyFields = {
  name: Name,
  condition: expression('a CEL expression returning a bool (docs/rules.md, "Variables")'),
  action: Type.Optional(Action),
  override: Type.Optional(
    Type.Boolean({
      description:
        'only with action approve: approve even when the policy or another rule says otherwise (a final decline still wins)',
    }),
  ),
  final: Type.Optional(Type.Boolean({ description: 'only with action decline: no override approve lifts it' })),
  cap: Type.Optional(Cap),
  description: Type.Optional(Description),
};

/** A rule body as written (the rule test takes one too, src/rules/test-routes.ts). */
export const RuleBodySchema = Type.Object(bodyFields, { additionalProperties: false });

export const CreateRuleBody = Type.Object(
  {
    ...bodyFields,
    status: Type.Optional(StringEnum(SETTABLE_STATUSES, { description: 'default draft (not evaluated)' })),
  },
  { additionalProperties: false },
);

/** Every field optional; null clears action, cap or description. Each PATCH makes a new version. */
export const PatchRuleBody = Type.Object(
  {
    name: Type.Optional(Name),
    condition: Type.Optional(bodyFields.condition),
    action: Type.Optional(Type.Union([Action, Type.Null()])),
    override: Type.Optional(Type.Boolean()),
    final: Type.Optional(Type.Boolean()),
    cap: Type.Optional(Type.Union([Cap, Type.Null()])),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    status: Type.Optional(StringEnum(SETTABLE_STATUSES)),
    reason: Type.Optional(Type.String({ maxLength: 1000, description: 'why, kept with the version' })),
  },
  { additionalProperties: false },
);

export const RetireQuery = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 1000 })) },
  { additionalProperties: false },
);

const Time = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const ruleShape = {
  name: Type.String(),
  condition: Type.String(),
  action: Type.Union([Action, Type.Null()]),
  override: Type.Boolean(),
  final: Type.Boolean(),
  cap: Type.Union([Type.Number(), Type.String(), Type.Null()]),
  description: Nullable(Type.String()),
  version: Type.Integer(),
  status: StringEnum(RULE_STATUSES),
};

export const RuleSchema = Type.Object({
  id: Type.String(),
  ...ruleShape,
  created_at: Time,
  created_by: Type.String({ description: 'the principal id that created it' }),
  created_by_actor: actorSibling('created_by'),
  updated_at: Time,
  updated_by: Type.String({ description: 'the principal id that made the current version' }),
  updated_by_actor: actorSibling('updated_by'),
});

export const RuleVersionSchema = Type.Object({
  rule_id: Type.String(),
  ...ruleShape,
  changed_at: Time,
  changed_by: Type.String({ description: 'the principal id that made this version (an approval: the requester)' }),
  changed_by_actor: actorSibling('changed_by'),
  reason: Nullable(Type.String()),
});

export const RuleIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const Cursor = Type.String({ minLength: 1, maxLength: 200 });
export const RuleListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(RULE_STATUSES)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

export const CheckBody = Type.Object(
  { condition: Type.String({ maxLength: RULE_LIMITS.maxLength * 2 }), cap: Type.Optional(Cap) },
  { additionalProperties: false },
);

export const FieldProblem = Type.Object({
  field: Type.String(),
  message: Type.String(),
  line: Type.Optional(Type.Integer()),
  column: Type.Optional(Type.Integer()),
});

export const StatsQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30 })) },
  { additionalProperties: false },
);

// Lists

const ListName = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  minLength: 1,
  maxLength: 64,
  [PATTERN_MESSAGE]: 'must be 1–64 of A-Z, a-z, 0-9, _ and -',
});
export const ListParams = Type.Object({ name: ListName });
export const EntryParams = Type.Object({ name: ListName, value: Type.String({ minLength: 1, maxLength: 256 }) });

export const CreateListBody = Type.Object(
  {
    name: ListName,
    kind: StringEnum(LIST_KINDS),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);

export const ListSchema = Type.Object({
  name: Type.String(),
  kind: StringEnum(LIST_KINDS),
  description: Nullable(Type.String()),
  /** present entries (not removed, not expired) */
  entries: Type.Integer({ description: 'present entries: not removed and not expired' }),
  created_at: Time,
  created_by: Type.String({ description: 'the principal id that created it' }),
  created_by_actor: actorSibling('created_by'),
});

export const ListsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 100 })),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

export const MAX_VALUES_PER_REQUEST = 1000;

export const AddEntriesBody = Type.Object(
  {
    values: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
      minItems: 1,
      maxItems: MAX_VALUES_PER_REQUEST,
    }),
    reason: Type.Optional(Type.String({ maxLength: 1000 })),
    expires_at: Type.Optional(Time),
  },
  { additionalProperties: false },
);

export const EntrySchema = Type.Object({
  value: Type.String(),
  reason: Nullable(Type.String()),
  added_at: Time,
  added_by: Type.String({ description: 'the principal id that added it (`vouch lists import --by`: the name given)' }),
  added_by_actor: actorSibling('added_by'),
  expires_at: Nullable(Time),
});

export const EntriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
