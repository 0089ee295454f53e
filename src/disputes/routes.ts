// POST /api/v1/dispute/analyze: both parties' scores from their history, then the pure analyser.
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { claimOf } from '../http/idempotency.ts';
import type { Metrics } from '../http/observability.ts';
import { Type } from 'typebox';
import { problemResponses } from '../http/problem.ts';
import { newId } from '../lib/ids.ts';
import type { DecisionWriter } from '../audit/decisions.ts';
import type { ScoringService } from '../trust/scoring.ts';
import type { PolicyRegistry } from '../policies/registry.ts';
import { requestDigest } from '../trust/cache.ts';
import { StringEnum } from '../trust/schemas.ts';
import type { ScoreContext } from '../model/types.ts';
import { analyseDispute, MISSING_EVIDENCE_CODES, type PartyAssessment } from './analyser.ts';
import { AnalyzeBody, checkDisputeBody } from './schemas.ts';

const Party = Type.Object({
  entity_id: Type.String(),
  score: Type.Integer(),
  risk_level: Type.String(),
  safe_amount: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
});
const AnalyzeResponse = Type.Object({
  dispute_id: Type.String(),
  analysis_id: Type.String(),
  recommendation: StringEnum(['release_to_buyer', 'return_to_seller', 'manual_review'] as const),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  risk_flags: Type.Array(
    Type.Object({
      code: Type.String(),
      severity: StringEnum(['low', 'medium', 'high', 'critical'] as const),
      party: StringEnum(['buyer', 'seller', 'trade'] as const),
      message: Type.String(),
    }),
  ),
  parties: Type.Object({ buyer: Party, seller: Party }),
  missing_evidence: Type.Array(
    Type.Object({
      code: StringEnum(MISSING_EVIDENCE_CODES),
      party: StringEnum(['buyer', 'seller', 'trade'] as const),
      message: Type.String(),
    }),
    { description: 'what the operator should ask for next; empty when nothing would change the recommendation' },
  ),
  policy_version: Type.String(),
});

export interface DisputeRouteOptions {
  scoring: ScoringService;
  policies: PolicyRegistry;
  decisions: DecisionWriter;
  /** VOUCH_REQUIRE_HASHED_IDS */
  requireHashedIds?: boolean;
  metrics: Metrics;
}

export function disputeRoutes({
  scoring,
  policies,
  decisions,
  requireHashedIds = false,
  metrics,
}: DisputeRouteOptions): RouteDefinition[] {
  const outcomes = metrics.counter('vouch_dispute_analyses_total', 'Dispute analyses by recommendation', [
    'recommendation',
  ]);

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/dispute/analyze',
      config: { scope: 'dispute:analyze' },
      schema: {
        tags: ['disputes'],
        summary: 'Recommend who should get the escrowed funds, with confidence and operator-facing risk flags',
        body: AnalyzeBody,
        response: {
          200: AnalyzeResponse,
          ...problemResponses(400, 401, 403, 413, 415, 429),
        },
      },
      handler: async (request, reply) => {
        const body = request.body;
        const { environment } = request.principal;
        const policy = policies.active(environment);
        checkDisputeBody(body, policy.cryptoAssets, { requireHashedIds });

        const now = Date.now();
        const { amount, currency, payment_method } = body.trade;
        const assess = async (
          entityId: string,
          counterparty: string,
        ): Promise<PartyAssessment & { safeAmount: number | null }> => {
          const context: ScoreContext = {
            counterparty_id: counterparty,
            ...(payment_method ? { payment_method } : {}),
          };
          const { profile, result, safeAmount } = await scoring.assess(
            environment,
            policy,
            entityId,
            amount,
            currency,
            context,
            now,
          );
          return {
            entityId,
            score: result.score,
            riskLevel: result.riskLevel,
            signals: result.signals,
            profile,
            safeAmount,
          };
        };
        const [buyer, seller] = await Promise.all([
          assess(body.buyer_id, body.seller_id),
          assess(body.seller_id, body.buyer_id),
        ]);
        const analysis = analyseDispute(body, { buyer, seller }, policy.dispute, now);

        const response = {
          dispute_id: body.dispute_id,
          analysis_id: newId('dan'),
          recommendation: analysis.recommendation,
          confidence: analysis.confidence,
          risk_flags: analysis.risk_flags,
          parties: {
            buyer: {
              entity_id: buyer.entityId,
              score: buyer.score,
              risk_level: buyer.riskLevel,
              safe_amount: buyer.safeAmount,
            },
            seller: {
              entity_id: seller.entityId,
              score: seller.score,
              risk_level: seller.riskLevel,
              safe_amount: seller.safeAmount,
            },
          },
          missing_evidence: analysis.missing_evidence,
          policy_version: policy.version,
        };
        // Serialised once: the stored result is the response's text, sent as it is.
        const json = JSON.stringify(response);
        await decisions.write({
          id: response.analysis_id,
          kind: 'dispute_analysis',
          environment,
          principal_id: request.principal.id,
          owner_client_id: request.principal.clientId,
          subject_id: body.dispute_id,
          request_digest: requestDigest(body),
          result: json,
          policy_version: policy.version,
          created_at: now,
          // What the operator reviews beside the recommendation; the parties are in the result.
          request: JSON.stringify({
            trade: body.trade,
            reason: body.reason,
            opened_by: body.opened_by,
            opened_at: body.opened_at ?? new Date(now).toISOString(),
            evidence: body.evidence ?? {},
          }),
          claim: claimOf(request) ?? null,
        });
        outcomes.inc({ recommendation: response.recommendation });
        return reply.type('application/json; charset=utf-8').send(json as unknown as typeof response);
      },
    }),
  ];
}
