// POST /api/v1/labels: up to 1,000 labels in one call, for a desk back-filling its outcomes without
// meeting the per-request rate limit (OpenAPI: labelDecisions). Each item is validated and
// labelled exactly as POST /api/v1/decisions/{id}/label would label it (labels.ts labelDecision);
// a refused item gets, in its place, the problem document that endpoint would have answered, and
// the others are still labelled. The whole batch is one transaction: all its labels or, on a
// store failure, none (5xx).
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import { ApiError, ProblemSchema, problemBody, type ProblemBody } from '../http/problem.ts';
import { compileBodyValidator } from '../http/validation.ts';
import type { Database } from '../store/schema.ts';
import { LabelBody, LabelSchema, labelDecision, type LabelRecord } from './labels.ts';

const MAX_LABELS = 1000;

/** One item: the single-label body plus the decision it labels (the single endpoint's path id). */
const LabelItem = Type.Object({
  decision_id: Type.String({ minLength: 1, maxLength: 64 }),
  ...LabelBody.properties,
}, { additionalProperties: false });

const BulkBody = Type.Object({
  labels: Type.Array(Type.Unknown({ description: 'a label: {decision_id, label: "fraud" | "legit", note?}, validated on its own' }), {
    minItems: 1, maxItems: MAX_LABELS,
  }),
}, { additionalProperties: false });

const BulkResponse = Type.Object({
  results: Type.Array(Type.Union([LabelSchema, ProblemSchema]), {
    description: 'the label record, or the problem document POST /api/v1/decisions/{id}/label would have answered, per item, in request order',
  }),
});

const problems = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 413: ProblemSchema, 415: ProblemSchema, 429: ProblemSchema };

type Item = Static<typeof LabelItem>;

/** operationId: the OpenAPI document's name for the route (src/http/docs.ts reads it from the config). */
const ROUTE_CONFIG = { scope: 'labels:write' as const, operationId: 'labelDecisions' };

export function bulkLabelRoutes({ db }: { db: Kysely<Database> }): RouteDefinition[] {
  const validate = compileBodyValidator(LabelItem);

  return [
    defineRoute<{ Body: Static<typeof BulkBody> }>({
      method: 'POST',
      url: '/api/v1/labels',
      config: ROUTE_CONFIG,
      bodyLimit: 1024 * 1024,
      schema: {
        tags: ['audit'],
        summary: `Label up to ${MAX_LABELS} score decisions in one call (each as the single-label endpoint would)`,
        body: BulkBody,
        response: { 200: BulkResponse, ...problems },
      },
      handler: async (request) => {
        const { principal } = request;
        const problem = (err: ApiError): ProblemBody => problemBody(err.status, err.code, err.detail, request.id, err.options.errors);
        const results: Array<LabelRecord | ProblemBody> = await db.transaction().execute(async (trx) => {
          const out: Array<LabelRecord | ProblemBody> = [];
          // In order, one after another: a decision labelled twice in a batch ends with the later label,
          // as two single calls would leave it.
          for (const raw of request.body.labels) {
            const invalid = validate(raw);
            if (invalid) {
              out.push(problem(invalid));
              continue;
            }
            const item = raw as Item;
            try {
              out.push(await labelDecision(trx, principal, item.decision_id, item.label, item.note ?? null));
            } catch (err) {
              // Anything but a refusal (a store failure) rolls the whole batch back.
              if (!(err instanceof ApiError)) throw err;
              out.push(problem(err));
            }
          }
          return out;
        });
        return { results };
      },
    }),
  ];
}
