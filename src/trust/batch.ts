// POST /api/v1/trust/score/batch (CONTRACT §10): up to 100 score requests in one call. Each item
// is validated, scored and audited exactly as a single POST /trust/score would be; an invalid item
// gets the problem document the single endpoint would have answered, in its place, and the
// others are still scored.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Counter } from 'prom-client';
import type { Policy } from '../config/policy.ts';
import { ApiError, ProblemSchema, problemBody, type ProblemBody } from '../http/problem.ts';
import { compileBodyValidator } from '../http/validation.ts';
import type { ScoringService } from './scoring.ts';
import { ScoreBody, ScoreResponse, checkScoreBody, type CheckOptions } from './schemas.ts';

export const MAX_BATCH = 100;

const BatchBody = Type.Object({
  requests: Type.Array(Type.Unknown({ description: 'a score request, as POST /api/v1/trust/score takes it' }), { minItems: 1, maxItems: MAX_BATCH }),
}, { additionalProperties: false });

const BatchResponse = Type.Object({
  results: Type.Array(Type.Union([ScoreResponse, ProblemSchema]), { description: 'a score response or a problem document per request, in request order' }),
});

const problems = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 413: ProblemSchema, 415: ProblemSchema, 429: ProblemSchema };

export interface BatchOptions {
  policy: Policy;
  scoring: ScoringService;
  check: CheckOptions;
  scores: Counter<'risk_level' | 'cached'>;
}

export function registerBatchRoute(app: FastifyInstance, { policy, scoring, check, scores }: BatchOptions): void {
  const validate = compileBodyValidator(ScoreBody);

  app.post<{ Body: Static<typeof BatchBody> }>('/api/v1/trust/score/batch', {
    config: { scope: 'trust:read' },
    bodyLimit: 1024 * 1024,
    schema: {
      tags: ['trust'],
      summary: `Score up to ${MAX_BATCH} counterparties in one call (each scored and audited on its own)`,
      body: BatchBody,
      response: { 200: BatchResponse, ...problems },
    },
  }, async (request) => {
    const results: Array<Static<typeof ScoreResponse> | ProblemBody> = [];
    // One after the other: each item's decision is durable before the next is scored, so a batch
    // that repeats an entity sees the same store state a sequence of single calls would.
    for (const item of request.body.requests) {
      try {
        const invalid = validate(item);
        if (invalid) throw invalid;
        const body = item as ScoreBody;
        checkScoreBody(body, policy.cryptoAssets, check);
        const response = await scoring.score(body, request.principal);
        scores.inc({ risk_level: response.risk_level, cached: String(response.cached) });
        results.push(response);
      } catch (err) {
        // A store failure fails the whole call (503/500) rather than answering a partial batch.
        if (!(err instanceof ApiError)) throw err;
        results.push(problemBody(err.status, err.code, err.detail, request.id, err.options.errors));
      }
    }
    return { results };
  });
}
