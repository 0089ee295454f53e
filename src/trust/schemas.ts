// Request and response schemas of the trust endpoints, and the checks JSON Schema cannot express
// (currency and country lists, raw identifiers, context depth, date floor, hashed-id mode).
import { Type, type Static } from 'typebox';
import { type FieldError } from '../http/problem.ts';
import { PATTERN_MESSAGE, StringEnum } from '../http/validation.ts';

export { StringEnum };
import { isCountryCode, isValidCurrency } from '../model/currency.ts';
import { PAYMENT_METHODS } from '../model/types.ts';
import { MatchedRuleSchema } from '../model/outcome-schemas.ts';
import { OUTCOMES } from '../model/outcomes.ts';
import { DISPUTE_REASONS } from '../model/dispute-reasons.ts';
import { contextBoundErrors, contextRawIdentifierErrors } from './context-checks.ts';
import {
  Currency,
  EntityId,
  HashedIdentifier,
  Identifier,
  Rfc3339,
  hashedIdErrors,
  rawIdentifierErrors,
  throwRawIdentifiers,
  throwValidation,
  type CheckOptions,
} from '../model/identifier-schemas.ts';

const Country = Type.String({
  pattern: '^[A-Z]{2}$',
  [PATTERN_MESSAGE]: 'must be an upper-case ISO 3166-1 alpha-2 country code such as DE',
  description: 'ISO 3166-1 alpha-2',
});
const Amount = Type.Number({ exclusiveMinimum: 0, maximum: 1e15 });

/**
 * Linked identifiers per score request and per event: enough for every device and account of one
 * person; each costs a score one primary-key lookup (see profile.ts).
 */
export const MAX_LINKED_IDENTIFIERS = 20;
const IDENTIFIER_TYPES = ['phone', 'bank_account', 'email', 'device', 'other'] as const;
const LinkedIdentifiers = Type.Array(
  Type.Object(
    { type: StringEnum(IDENTIFIER_TYPES), hash: HashedIdentifier({ minLength: 8 }) },
    { additionalProperties: false },
  ),
  { maxItems: MAX_LINKED_IDENTIFIERS },
);

const ScoreContext = Type.Object(
  {
    counterparty_id: Type.Optional(EntityId),
    side: Type.Optional(StringEnum(['buy', 'sell'] as const)),
    payment_method: Type.Optional(StringEnum(PAYMENT_METHODS)),
    country: Type.Optional(Country),
    counterparty_country: Type.Optional(Country),
    account_created_at: Type.Optional(Rfc3339),
    trade_id: Type.Optional(Identifier(256)),
    linked_identifiers: Type.Optional(LinkedIdentifiers),
  },
  {
    additionalProperties: true,
    description:
      'trade context (at most 16,384 characters as JSON, 5 levels, strings of 1,024, lists and maps of 100); members not defined here are stored with the decision and readable by rules, so raw identifiers are refused in them too',
  },
);

export const ScoreBody = Type.Object(
  { entity_id: EntityId, amount: Amount, currency: Currency, context: Type.Optional(ScoreContext) },
  { additionalProperties: false },
);
export type ScoreBody = Static<typeof ScoreBody>;

const SignalSchema = Type.Object({
  name: Type.String(),
  value: Type.Number(),
  weight: Type.Number(),
  description: Type.String({ description: 'one plain sentence of what was seen, with the figure' }),
});

export const ScoreResponse = Type.Object({
  entity_id: Type.String(),
  score: Type.Integer({ minimum: 0, maximum: 100, description: 'higher = riskier' }),
  risk_level: StringEnum(['low', 'medium', 'high', 'critical'] as const),
  signals: Type.Array(SignalSchema),
  cached: Type.Boolean(),
  decision_id: Type.String(),
  policy_version: Type.String(),
  scored_at: Type.String({ format: 'date-time' }),
  safe_amount: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
    description:
      "largest amount (request's currency, minor units, rounded down) scoring below the policy's high threshold, lowered to the least cap of the matched rules (a rule never raises it); null: none reaches it and no rule capped it; 0: even the smallest does",
  }),
  outcome: StringEnum(OUTCOMES, {
    description:
      "what to do with the trade (docs/rules.md): the policy's outcome for the risk level (default low/medium approve, high review, critical decline), made more severe by a matched rule's action (decline > hold > review > approve), or approve by a matched override rule unless a final decline rule also matched",
  }),
  rules: Type.Array(MatchedRuleSchema, {
    description: 'the active rules whose condition matched, in evaluation order; [] when none did',
  }),
  fraud_probability: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        'with the policy\'s economics: the probability that this trade is fraud, σ of the policy\'s log-odds (docs/api.md, "Decisions by money")',
    }),
  ),
  expected_costs: Type.Optional(
    Type.Object(
      {
        approve: Type.Number(),
        review: Type.Number(),
        decline: Type.Number(),
        currency: Type.String(),
      },
      {
        description:
          "with the policy's economics: what each outcome is expected to cost the desk, in the economics' currency; the least is the policy's outcome (before rules)",
      },
    ),
  ),
  review_id: Type.Optional(
    Type.String({
      description:
        'the review this decision opened (its outcome is review or hold: GET /api/v1/reviews/{id}); absent when it opened none. An approval drawn for review_sample_rate opens a review without saying so here.',
    }),
  ),
});
export type ScoreResponse = Static<typeof ScoreResponse>;

const EVENT_TYPES = [
  'trade.completed',
  'trade.cancelled',
  'dispute.opened',
  'dispute.resolved',
  'chargeback',
  'fraud.reported',
  'entity.blocklisted',
  'entity.unblocklisted',
  'identifier.linked',
] as const;
type EventType = (typeof EVENT_TYPES)[number];

/**
 * Why a resolved dispute went against its loser (docs/api.md, "Events"): a dispute reason, or one of
 * the outcomes that name the fraud. The fraudulent ones are counted per entity for the dispute analyser.
 */
export const FRAUDULENT_LOSS_REASONS = ['third_party_payment', 'fake_proof', 'underpayment', 'no_payment'] as const;
// third_party_payment is a dispute reason too.
const RESOLUTION_REASONS = [...DISPUTE_REASONS, 'fake_proof', 'underpayment', 'no_payment'] as const;

export const TrustEvent = Type.Object(
  {
    event_id: Identifier(128),
    type: StringEnum(EVENT_TYPES),
    entity_id: EntityId,
    occurred_at: Rfc3339,
    amount: Type.Optional(Amount),
    currency: Type.Optional(Currency),
    counterparty_id: Type.Optional(EntityId),
    trade_id: Type.Optional(Identifier(256)),
    resolution: Type.Optional(StringEnum(['in_favor', 'against'] as const)),
    reason: Type.Optional(StringEnum(RESOLUTION_REASONS, { description: 'dispute.resolved only: why the loser lost' })),
    linked_identifiers: Type.Optional(LinkedIdentifiers),
  },
  { additionalProperties: false },
);
export type TrustEvent = Static<typeof TrustEvent>;

export const EventsBody = Type.Object(
  { events: Type.Array(TrustEvent, { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);

/**
 * The earliest date an event or account may carry. No P2P crypto trade predates Bitcoin, and a
 * year-1 date would make a new account look decades old.
 */
const EARLIEST_DATE = '2009-01-01T00:00:00Z';
const EARLIEST_MS = Date.parse(EARLIEST_DATE);

/**
 * Field errors for a date-time beyond its schema. The `date-time` format accepts shapes Date.parse
 * cannot read (a leap second, an offset without minutes such as `+01`); such a value would reach
 * the store as NaN.
 */
export function dateErrors(field: string, value: string | undefined): FieldError[] {
  if (value === undefined) return [];
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    return [{ field, message: 'must be an RFC 3339 date-time with a full offset (Z or ±hh:mm) and seconds 00-59' }];
  if (ms < EARLIEST_MS) return [{ field, message: `must not be before ${EARLIEST_DATE}` }];
  return [];
}

function countryErrors(field: string, code: string | undefined): FieldError[] {
  return code !== undefined && !isCountryCode(code)
    ? [{ field, message: 'is not an assigned ISO 3166-1 alpha-2 country code' }]
    : [];
}

/** Checks of a score request beyond its schema; a raw identifier is reported before anything else. */
export function checkScoreBody(body: ScoreBody, cryptoAssets: readonly string[], options: CheckOptions = {}): void {
  const ctx = body.context ?? {};
  const ids: Array<[string, string | undefined, object]> = [
    ['entity_id', body.entity_id, body],
    ['context.counterparty_id', ctx.counterparty_id, ctx],
    ...(ctx.linked_identifiers ?? []).map((l, i): [string, string, object] => [
      `context.linked_identifiers.${i}.hash`,
      l.hash,
      l,
    ]),
  ];
  throwRawIdentifiers([...rawIdentifierErrors(ids), ...contextRawIdentifierErrors('context', body.context)]);
  const errors: FieldError[] = [];
  if (!isValidCurrency(body.currency, cryptoAssets))
    errors.push({ field: 'currency', message: 'is not an ISO 4217 code or a supported crypto asset' });
  errors.push(...contextBoundErrors('context', body.context));
  errors.push(...dateErrors('context.account_created_at', ctx.account_created_at));
  errors.push(
    ...countryErrors('context.country', ctx.country),
    ...countryErrors('context.counterparty_country', ctx.counterparty_country),
  );
  errors.push(...hashedIdErrors(ids, options));
  throwValidation(errors);
}

/**
 * How far ahead of this server's clock an event may be dated (clock skew). A later date would move
 * the entity's decay clock into the future and silently fade its whole decayed history.
 */
const MAX_EVENT_SKEW_MS = 10 * 60_000;

// `trade.completed` may omit amount and currency (docs/api.md, "Trust scoring"): the trade counts, only the volume
// statistics skip it.
const NEEDS: Partial<Record<EventType, Array<keyof TrustEvent>>> = {
  'dispute.resolved': ['resolution'],
  'identifier.linked': ['linked_identifiers'],
};

/** Per-event checks beyond the schema; `prefix` locates the event in a batch (e.g. "events.3"). */
export function eventErrors(
  event: TrustEvent,
  prefix: string,
  cryptoAssets: readonly string[],
  now = Date.now(),
  options: CheckOptions = {},
): { validation: FieldError[]; raw: FieldError[] } {
  const validation: FieldError[] = dateErrors(`${prefix}.occurred_at`, event.occurred_at);
  if (Date.parse(event.occurred_at) > now + MAX_EVENT_SKEW_MS) {
    validation.push({
      field: `${prefix}.occurred_at`,
      message: `must not be more than ${MAX_EVENT_SKEW_MS / 60_000} minutes in the future`,
    });
  }
  for (const field of NEEDS[event.type] ?? []) {
    if (event[field] === undefined || (Array.isArray(event[field]) && (event[field] as unknown[]).length === 0)) {
      validation.push({ field: `${prefix}.${field}`, message: `is required for ${event.type}` });
    }
  }
  if (event.reason !== undefined && event.type !== 'dispute.resolved') {
    validation.push({ field: `${prefix}.reason`, message: 'is only allowed on dispute.resolved' });
  }
  if (event.currency !== undefined && !isValidCurrency(event.currency, cryptoAssets)) {
    validation.push({ field: `${prefix}.currency`, message: 'is not an ISO 4217 code or a supported crypto asset' });
  }
  if ((event.amount === undefined) !== (event.currency === undefined)) {
    validation.push({
      field: `${prefix}.${event.amount === undefined ? 'amount' : 'currency'}`,
      message: 'amount and currency go together',
    });
  }
  const ids: Array<[string, string | undefined, object]> = [
    [`${prefix}.entity_id`, event.entity_id, event],
    [`${prefix}.counterparty_id`, event.counterparty_id, event],
    ...(event.linked_identifiers ?? []).map((l, i): [string, string, object] => [
      `${prefix}.linked_identifiers.${i}.hash`,
      l.hash,
      l,
    ]),
  ];
  validation.push(...hashedIdErrors(ids, options));
  return { validation, raw: rawIdentifierErrors(ids) };
}

/** Checks of an events batch beyond its schema: a raw identifier anywhere wins over other errors. */
export function checkEvents(events: TrustEvent[], cryptoAssets: readonly string[], options: CheckOptions = {}): void {
  const validation: FieldError[] = [];
  const raw: FieldError[] = [];
  const now = Date.now();
  events.forEach((ev, i) => {
    const errs = eventErrors(ev, `events.${i}`, cryptoAssets, now, options);
    validation.push(...errs.validation);
    raw.push(...errs.raw);
  });
  throwRawIdentifiers(raw);
  throwValidation(validation);
}
