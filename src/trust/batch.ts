// POST /api/v1/trust/score/batch (docs/api.md, "Integration"): up to 100 score requests in one call. Each item
// is validated, scored and audited exactly as a single POST /trust/score would be; an invalid item
// gets the problem document the single endpoint would have answered, in its place, and the
// others are still scored.
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { Type, type Static } from 'typebox';
import type { Counter } from 'prom-client';
import { ProblemSchema, problemBodyOf, problemResponses } from '../http/problem.ts';
import type { ScoringService } from './scoring.ts';
import type { PolicyRegistry } from '../policies/registry.ts';
import { ScoreResponse, type ScoreBody } from './schemas.ts';
import { type CheckOptions } from '../model/identifier-schemas.ts';
import { scoreValidator } from './score-validation.ts';

const MAX_BATCH = 100;
/**
 * Items scored at once within one batch: all of them, so that their decisions join one flush
 * window and share one commit (audit/decisions.ts), instead of waiting for a commit every eight
 * items. On PostgreSQL the pool queues their profile reads.
 */
const CONCURRENCY = MAX_BATCH;

const BatchBody = Type.Object(
  {
    requests: Type.Array(Type.Unknown({ description: 'a score request, as POST /api/v1/trust/score takes it' }), {
      minItems: 1,
      maxItems: MAX_BATCH,
    }),
  },
  { additionalProperties: false },
);

const BatchResponse = Type.Object({
  results: Type.Array(Type.Union([ScoreResponse, ProblemSchema]), {
    description: 'a score response or a problem document per request, in request order',
  }),
});

const problems = problemResponses(400, 401, 403, 413, 415, 429);

export interface BatchOptions {
  scoring: ScoringService;
  policies: PolicyRegistry;
  check: CheckOptions;
  scores: Counter<'risk_level' | 'cached'>;
}

export function batchRoutes({ scoring, policies, check, scores }: BatchOptions): RouteDefinition[] {
  const validate = scoreValidator(check);

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/trust/score/batch',
      config: { scope: 'trust:read', person: 'operator' },
      bodyLimit: 1024 * 1024,
      schema: {
        tags: ['trust'],
        summary: `Score up to ${MAX_BATCH} counterparties in one call (each scored and audited on its own)`,
        body: BatchBody,
        response: { 200: BatchResponse, ...problems },
      },
      // The reply is built as text: each score is the text its decision was stored as, each problem its JSON, so no
      // serialiser picks between the two schemas of the union item by item.
      handler: async (request, reply) => {
        const results: string[] = new Array(request.body.requests.length);
        const valid: Array<{ index: number; body: ScoreBody }> = [];
        // Read once: every item is checked and scored with the same policies.
        const live = policies.get(request.principal.environment);
        const { cryptoAssets } = live.active;
        // A refusal is the item's problem document; anything else fails the whole call.
        const problem = (index: number, err: unknown) => {
          const body = problemBodyOf(err, request.id);
          if (!body) throw err;
          results[index] = JSON.stringify(body);
        };
        request.body.requests.forEach((item, index) => {
          try {
            valid.push({ index, body: validate(item, cryptoAssets) });
          } catch (err) {
            problem(index, err);
          }
        });
        // All at once (CONCURRENCY): their profile reads overlap and their decisions share one
        // group commit (audit/decisions.ts), instead of one store round trip and one commit after another.
        let next = 0;
        const worker = async () => {
          while (next < valid.length) {
            const { index, body } = valid[next++]!;
            try {
              const answer = await scoring.answer(body, request.principal, live, true);
              scores.inc({ risk_level: answer.riskLevel, cached: String(answer.cached) });
              results[index] = answer.json;
            } catch (err) {
              // A store failure fails the whole call (503/500) rather than answering a partial batch.
              problem(index, err);
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(CONCURRENCY, valid.length) }, worker));
        // Text the schema's type cannot describe: what it carries is the schema's (the stored score texts, problems).
        const text = `{"results":[${results.join(',')}]}` as unknown as Static<typeof BatchResponse>;
        return reply.type('application/json; charset=utf-8').send(text);
      },
    }),
  ];
}
