// Request and response schemas of the trust endpoints, and the checks JSON Schema cannot express
// (currency lists, raw identifiers, context depth).
import { Type, type Static } from 'typebox';
import { ApiError, type FieldError } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';

export { StringEnum };
import { looksLikeRawIdentifier } from './identifiers.ts';
import { isValidCurrency } from './currency.ts';
import { PAYMENT_METHODS } from './types.ts';


/** An identifier or reference: printable text only (control characters are never part of a hash,
 *  and PostgreSQL cannot store NUL). */
export function Identifier(maxLength: number, options: object = {}) {
  return Type.String({ minLength: 1, maxLength, pattern: '^[^\\u0000-\\u001f\\u007f]+$', ...options });
}

export const EntityId = Identifier(256, { description: "the caller's hash of the identifier" });
const Rfc3339 = Type.String({ format: 'date-time', maxLength: 40 });
const Currency = Type.String({ minLength: 2, maxLength: 10, pattern: '^[A-Z0-9]+$', description: 'upper-case ISO 4217 code or a crypto asset of the policy' });
const Amount = Type.Number({ exclusiveMinimum: 0, maximum: 1e15 });

export const IDENTIFIER_TYPES = ['phone', 'bank_account', 'email', 'device', 'other'] as const;
export const LinkedIdentifiers = Type.Array(
  Type.Object({ type: StringEnum(IDENTIFIER_TYPES), hash: Identifier(256, { minLength: 8 }) }, { additionalProperties: false }),
  { maxItems: 50 },
);

export const ScoreContext = Type.Object(
  {
    counterparty_id: Type.Optional(EntityId),
    side: Type.Optional(StringEnum(['buy', 'sell'] as const)),
    payment_method: Type.Optional(StringEnum(PAYMENT_METHODS)),
    country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    counterparty_country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    account_created_at: Type.Optional(Rfc3339),
    trade_id: Type.Optional(Identifier(256)),
    linked_identifiers: Type.Optional(LinkedIdentifiers),
  },
  { additionalProperties: true, description: 'trade context; unknown members are accepted and ignored' },
);

export const ScoreBody = Type.Object(
  { entity_id: EntityId, amount: Amount, currency: Currency, context: Type.Optional(ScoreContext) },
  { additionalProperties: false },
);
export type ScoreBody = Static<typeof ScoreBody>;

export const SignalSchema = Type.Object({ name: Type.String(), value: Type.Number(), weight: Type.Number() });
export const ScoreResponse = Type.Object({
  entity_id: Type.String(),
  score: Type.Integer({ minimum: 0, maximum: 100, description: 'higher = riskier' }),
  risk_level: StringEnum(['low', 'medium', 'high', 'critical'] as const),
  signals: Type.Array(SignalSchema),
  cached: Type.Boolean(),
  decision_id: Type.String(),
  policy_version: Type.String(),
  scored_at: Type.String({ format: 'date-time' }),
});
export type ScoreResponse = Static<typeof ScoreResponse>;

export const EVENT_TYPES = [
  'trade.completed', 'trade.cancelled', 'dispute.opened', 'dispute.resolved', 'chargeback',
  'fraud.reported', 'entity.blocklisted', 'entity.unblocklisted', 'identifier.linked',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
    linked_identifiers: Type.Optional(LinkedIdentifiers),
  },
  { additionalProperties: false },
);
export type TrustEvent = Static<typeof TrustEvent>;

export const EventsBody = Type.Object({ events: Type.Array(TrustEvent, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false });

const MAX_CONTEXT_DEPTH = 5;

/**
 * The `date-time` format accepts shapes Date.parse cannot read (a leap second, an offset without
 * minutes such as `+01`); such a value would reach the store as NaN. Refuse it with a field error.
 */
export function unreadableTime(field: string, value: string | undefined): FieldError[] {
  return value !== undefined && Number.isNaN(Date.parse(value))
    ? [{ field, message: 'must be an RFC 3339 date-time with a full offset (Z or ±hh:mm) and seconds 00-59' }]
    : [];
}

function depth(value: unknown, level: number): number {
  if (level > MAX_CONTEXT_DEPTH + 1 || value === null || typeof value !== 'object') return level;
  let max = level;
  for (const child of Object.values(value)) max = Math.max(max, depth(child, level + 1));
  return max;
}

/** Field errors for raw identifiers; the value itself is never echoed or logged. */
export function rawIdentifierErrors(fields: Array<[string, string | undefined]>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [field, value] of fields) {
    const kind = value === undefined ? null : looksLikeRawIdentifier(value);
    if (kind) errors.push({ field, message: `looks like a raw ${kind === 'iban' ? 'IBAN' : kind === 'card' ? 'card number' : kind === 'email' ? 'e-mail address' : 'phone number'}; send a hash of it instead` });
  }
  return errors;
}

export function throwRawIdentifiers(errors: FieldError[]): void {
  if (errors.length > 0) {
    throw new ApiError(400, 'raw_identifier_rejected', 'Identifiers must be hashed by the caller before they are sent.', { errors });
  }
}

export function throwValidation(errors: FieldError[]): void {
  if (errors.length > 0) {
    const summary = errors.slice(0, 3).map((e) => `${e.field} ${e.message}`).join('; ');
    throw new ApiError(400, 'validation_failed', `The request does not match the schema: ${summary}.`, { errors });
  }
}

/** Checks of a score request beyond its schema. */
export function checkScoreBody(body: ScoreBody, cryptoAssets: readonly string[]): void {
  const errors: FieldError[] = [];
  if (!isValidCurrency(body.currency, cryptoAssets)) errors.push({ field: 'currency', message: 'is not an ISO 4217 code or a supported crypto asset' });
  if (body.context !== undefined && depth(body.context, 1) > MAX_CONTEXT_DEPTH) errors.push({ field: 'context', message: `nests deeper than ${MAX_CONTEXT_DEPTH} levels` });
  errors.push(...unreadableTime('context.account_created_at', body.context?.account_created_at));
  throwValidation(errors);
  const ctx = body.context ?? {};
  throwRawIdentifiers(rawIdentifierErrors([
    ['entity_id', body.entity_id],
    ['context.counterparty_id', ctx.counterparty_id],
    ...(ctx.linked_identifiers ?? []).map((l, i): [string, string] => [`context.linked_identifiers.${i}.hash`, l.hash]),
  ]));
}

const NEEDS: Partial<Record<EventType, Array<keyof TrustEvent>>> = {
  'trade.completed': ['amount', 'currency'],
  'dispute.resolved': ['resolution'],
  'identifier.linked': ['linked_identifiers'],
};

/**
 * How far ahead of this server's clock an event may be dated (clock skew). A later date would move
 * the entity's decay clock into the future and silently fade its whole decayed history.
 */
export const MAX_EVENT_SKEW_MS = 10 * 60_000;

/** Per-event checks beyond the schema; `prefix` locates the event in a batch (e.g. "events.3"). */
export function eventErrors(event: TrustEvent, prefix: string, cryptoAssets: readonly string[], now = Date.now()): { validation: FieldError[]; raw: FieldError[] } {
  const validation: FieldError[] = unreadableTime(`${prefix}.occurred_at`, event.occurred_at);
  if (Date.parse(event.occurred_at) > now + MAX_EVENT_SKEW_MS) {
    validation.push({ field: `${prefix}.occurred_at`, message: `must not be more than ${MAX_EVENT_SKEW_MS / 60_000} minutes in the future` });
  }
  for (const field of NEEDS[event.type] ?? []) {
    if (event[field] === undefined || (Array.isArray(event[field]) && (event[field] as unknown[]).length === 0)) {
      validation.push({ field: `${prefix}.${field}`, message: `is required for ${event.type}` });
    }
  }
  if (event.currency !== undefined && !isValidCurrency(event.currency, cryptoAssets)) {
    validation.push({ field: `${prefix}.currency`, message: 'is not an ISO 4217 code or a supported crypto asset' });
  }
  if ((event.amount === undefined) !== (event.currency === undefined)) {
    validation.push({ field: `${prefix}.${event.amount === undefined ? 'amount' : 'currency'}`, message: 'amount and currency go together' });
  }
  const raw = rawIdentifierErrors([
    [`${prefix}.entity_id`, event.entity_id],
    [`${prefix}.counterparty_id`, event.counterparty_id],
    ...(event.linked_identifiers ?? []).map((l, i): [string, string] => [`${prefix}.linked_identifiers.${i}.hash`, l.hash]),
  ]);
  return { validation, raw };
}

