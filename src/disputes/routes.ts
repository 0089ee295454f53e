// POST /api/v1/dispute/analyze: both parties' scores from their history, then the pure analyser.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Policy } from '../config/policy.ts';
import { ProblemSchema, type FieldError } from '../http/problem.ts';
import { newId } from '../keys/format.ts';
import type { DecisionWriter } from '../audit/decisions.ts';
import type { ScoringService } from '../trust/scoring.ts';
import { requestDigest } from '../trust/cache.ts';
import { isValidCurrency } from '../trust/currency.ts';
import { EntityId, Identifier, StringEnum, rawIdentifierErrors, throwRawIdentifiers, throwValidation, unreadableTime } from '../trust/schemas.ts';
import { PAYMENT_METHODS, type ScoreContext } from '../trust/types.ts';
import { analyseDispute, DISPUTE_REASONS, type PartyAssessment } from './analyser.ts';

const Rfc3339 = Type.String({ format: 'date-time', maxLength: 40 });
const Minutes = Type.Number({ minimum: 0, maximum: 10_000_000 });

const AnalyzeBody = Type.Object({
  dispute_id: Identifier(128),
  trade: Type.Object({
    trade_id: Identifier(256),
    amount: Type.Number({ exclusiveMinimum: 0, maximum: 1e15 }),
    currency: Type.String({ minLength: 2, maxLength: 10, pattern: '^[A-Z0-9]+$' }),
    payment_method: Type.Optional(StringEnum(PAYMENT_METHODS)),
    created_at: Type.Optional(Rfc3339),
    paid_at: Type.Optional(Rfc3339),
  }, { additionalProperties: false }),
  buyer_id: EntityId,
  seller_id: EntityId,
  opened_by: StringEnum(['buyer', 'seller'] as const),
  opened_at: Type.Optional(Rfc3339),
  reason: StringEnum(DISPUTE_REASONS),
  evidence: Type.Optional(Type.Object({
    payment_proof_submitted: Type.Optional(Type.Boolean()),
    bank_reference_matches: Type.Optional(Type.Boolean()),
    payer_name_matches: Type.Optional(Type.Boolean()),
    seller_confirmed_receipt: Type.Optional(Type.Boolean()),
    payment_reversed: Type.Optional(Type.Boolean()),
    amount_paid: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
    buyer_response_minutes: Type.Optional(Minutes),
    seller_response_minutes: Type.Optional(Minutes),
    messages_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  }, { additionalProperties: false })),
  context: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 64 })),
}, { additionalProperties: false });
type AnalyzeBody = Static<typeof AnalyzeBody>;

const Party = Type.Object({ entity_id: Type.String(), score: Type.Integer(), risk_level: Type.String() });
const AnalyzeResponse = Type.Object({
  dispute_id: Type.String(),
  analysis_id: Type.String(),
  recommendation: StringEnum(['release_to_buyer', 'return_to_seller', 'manual_review'] as const),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  risk_flags: Type.Array(Type.Object({
    code: Type.String(),
    severity: StringEnum(['low', 'medium', 'high', 'critical'] as const),
    party: StringEnum(['buyer', 'seller', 'trade'] as const),
    message: Type.String(),
  })),
  parties: Type.Object({ buyer: Party, seller: Party }),
  policy_version: Type.String(),
});

export interface DisputeRouteOptions {
  policy: Policy;
  scoring: ScoringService;
  decisions: DecisionWriter;
}

function semanticErrors(body: AnalyzeBody, cryptoAssets: readonly string[]): FieldError[] {
  const errors: FieldError[] = [
    ...unreadableTime('trade.created_at', body.trade.created_at),
    ...unreadableTime('trade.paid_at', body.trade.paid_at),
    ...unreadableTime('opened_at', body.opened_at),
  ];
  if (!isValidCurrency(body.trade.currency, cryptoAssets)) errors.push({ field: 'trade.currency', message: 'is not an ISO 4217 code or a supported crypto asset' });
  if (body.buyer_id === body.seller_id) errors.push({ field: 'seller_id', message: 'must differ from buyer_id' });
  const { created_at: created, paid_at: paid } = body.trade;
  if (created && paid && Date.parse(paid) < Date.parse(created)) errors.push({ field: 'trade.paid_at', message: 'must not be before trade.created_at' });
  if (paid && body.opened_at && Date.parse(body.opened_at) < Date.parse(paid) - 60_000) errors.push({ field: 'opened_at', message: 'must not be before trade.paid_at' });
  return errors;
}

export default async function disputeRoutes(app: FastifyInstance, { policy, scoring, decisions }: DisputeRouteOptions) {
  const outcomes = app.metrics.counter('vouch_dispute_analyses_total', 'Dispute analyses by recommendation', ['recommendation']);

  app.post<{ Body: AnalyzeBody }>('/api/v1/dispute/analyze', {
    config: { scope: 'dispute:analyze' },
    schema: {
      tags: ['disputes'],
      summary: 'Recommend who should get the escrowed funds, with confidence and operator-facing risk flags',
      body: AnalyzeBody,
      response: { 200: AnalyzeResponse, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 413: ProblemSchema, 415: ProblemSchema, 429: ProblemSchema },
    },
  }, async (request) => {
    const body = request.body;
    throwValidation(semanticErrors(body, policy.cryptoAssets));
    throwRawIdentifiers(rawIdentifierErrors([['buyer_id', body.buyer_id], ['seller_id', body.seller_id]]));

    const now = Date.now();
    const { amount, currency, payment_method } = body.trade;
    const assess = async (entityId: string, counterparty: string): Promise<PartyAssessment> => {
      const context: ScoreContext = { counterparty_id: counterparty, ...(payment_method ? { payment_method } : {}) };
      const { profile, result } = await scoring.assess(entityId, amount, currency, context, now);
      return { entityId, score: result.score, riskLevel: result.riskLevel, signals: result.signals, profile };
    };
    const [buyer, seller] = await Promise.all([assess(body.buyer_id, body.seller_id), assess(body.seller_id, body.buyer_id)]);
    const analysis = analyseDispute(body, { buyer, seller }, policy.dispute, now);

    const response = {
      dispute_id: body.dispute_id,
      analysis_id: newId('dan'),
      recommendation: analysis.recommendation,
      confidence: analysis.confidence,
      risk_flags: analysis.risk_flags,
      parties: {
        buyer: { entity_id: buyer.entityId, score: buyer.score, risk_level: buyer.riskLevel },
        seller: { entity_id: seller.entityId, score: seller.score, risk_level: seller.riskLevel },
      },
      policy_version: policy.version,
    };
    await decisions.write({
      id: response.analysis_id,
      kind: 'dispute_analysis',
      principal_id: request.principal.id,
      owner_client_id: request.principal.clientId,
      subject_id: body.dispute_id,
      request_digest: requestDigest(body),
      result: JSON.stringify(response),
      policy_version: policy.version,
      created_at: now,
    });
    outcomes.inc({ recommendation: response.recommendation });
    return response;
  });
}
