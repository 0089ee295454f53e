// The body of POST /api/v1/dispute/analyze and the checks JSON Schema cannot express.
import { Type, type Static } from 'typebox';
import type { FieldError } from '../http/problem.ts';
import { isValidCurrency } from '../model/currency.ts';
import { StringEnum, dateErrors } from '../trust/schemas.ts';
import { contextBoundErrors } from '../trust/context-checks.ts';
import {
  Currency,
  EntityId,
  Identifier,
  Rfc3339,
  hashedIdErrors,
  rawIdentifierErrors,
  throwRawIdentifiers,
  throwValidation,
  type CheckOptions,
} from '../model/identifier-schemas.ts';
import { PAYMENT_METHODS } from '../model/types.ts';
import { DISPUTE_REASONS } from './analyser.ts';

const Minutes = Type.Number({ minimum: 0, maximum: 10_000_000 });

export const AnalyzeBody = Type.Object(
  {
    dispute_id: Identifier(128),
    trade: Type.Object(
      {
        trade_id: Identifier(256),
        amount: Type.Number({ exclusiveMinimum: 0, maximum: 1e15 }),
        currency: Currency,
        payment_method: Type.Optional(StringEnum(PAYMENT_METHODS)),
        created_at: Type.Optional(Rfc3339),
        paid_at: Type.Optional(Rfc3339),
      },
      { additionalProperties: false },
    ),
    buyer_id: EntityId,
    seller_id: EntityId,
    opened_by: StringEnum(['buyer', 'seller'] as const),
    opened_at: Type.Optional(Rfc3339),
    reason: StringEnum(DISPUTE_REASONS),
    evidence: Type.Optional(
      Type.Object(
        {
          payment_proof_submitted: Type.Optional(Type.Boolean()),
          bank_reference_matches: Type.Optional(Type.Boolean()),
          payer_name_matches: Type.Optional(Type.Boolean()),
          seller_confirmed_receipt: Type.Optional(Type.Boolean()),
          payment_reversed: Type.Optional(Type.Boolean()),
          amount_paid: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
          buyer_response_minutes: Type.Optional(Minutes),
          seller_response_minutes: Type.Optional(Minutes),
          messages_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    // Nests at most 5 levels (checked below, as for the score context): the request digest walks it.
    context: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 64 })),
  },
  { additionalProperties: false },
);
export type AnalyzeBody = Static<typeof AnalyzeBody>;

function semanticErrors(body: AnalyzeBody, cryptoAssets: readonly string[]): FieldError[] {
  const errors: FieldError[] = [
    ...dateErrors('trade.created_at', body.trade.created_at),
    ...dateErrors('trade.paid_at', body.trade.paid_at),
    ...dateErrors('opened_at', body.opened_at),
    ...contextBoundErrors('context', body.context),
  ];
  if (!isValidCurrency(body.trade.currency, cryptoAssets))
    errors.push({ field: 'trade.currency', message: 'is not an ISO 4217 code or a supported crypto asset' });
  if (body.buyer_id === body.seller_id) errors.push({ field: 'seller_id', message: 'must differ from buyer_id' });
  const { created_at: created, paid_at: paid } = body.trade;
  if (created && paid && Date.parse(paid) < Date.parse(created))
    errors.push({ field: 'trade.paid_at', message: 'must not be before trade.created_at' });
  if (paid && body.opened_at && Date.parse(body.opened_at) < Date.parse(paid) - 60_000)
    errors.push({ field: 'opened_at', message: 'must not be before trade.paid_at' });
  return errors;
}

/** Checks of a dispute body beyond its schema; a raw identifier is reported before anything else. */
export function checkDisputeBody(body: AnalyzeBody, cryptoAssets: readonly string[], options: CheckOptions = {}): void {
  const ids: Array<[string, string]> = [
    ['buyer_id', body.buyer_id],
    ['seller_id', body.seller_id],
  ];
  throwRawIdentifiers(rawIdentifierErrors(ids));
  throwValidation([...semanticErrors(body, cryptoAssets), ...hashedIdErrors(ids, options)]);
}
