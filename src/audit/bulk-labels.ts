// POST /api/v1/labels: up to 1,000 labels in one call, for a desk back-filling its outcomes without
// meeting the per-request rate limit (OpenAPI: labelDecisions). Each item is validated and
// labelled exactly as POST /api/v1/decisions/{id}/label would label it (labels.ts labelDecision);
// a refused item gets, in its place, the problem document that endpoint would have answered, and
// the others are still labelled.
// What a batch costs is its items, not one request (issue 29 item 10; docs/api.md, "Outcomes and
// labels"): each principal has a budget of labels per minute (VOUCH_LABELS_PER_MINUTE), shared by
// the host's workers and, with Redis, by every instance, like the request rate limit. The labels are
// written in chunks of CHUNK_ITEMS, one short transaction each with a turn of the event loop between
// them, so a batch never holds the store's writer (SQLite) or this process for long; on a store
// failure the chunks before it stay written (5xx), and sending the batch again is safe.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { Type, type Static } from 'typebox';
import { ProblemSchema, problemBodyOf, problemResponses, type ProblemBody } from '../http/problem.ts';
import { Limited } from '../lib/domain-errors.ts';
import { compileBodyValidator } from '../http/validation.ts';
import type { Store } from '../store/db.ts';
import { principalAuditor, type AuditNote, type Auditor } from '../audit-log/auditor.ts';
import { resolveActors } from '../audit-log/actors.ts';
import { LabelBody, LabelSchema, labelDecision, type LabelRecord } from './labels.ts';

const MAX_LABELS = 1000;
/** Items per transaction: a few milliseconds of writes, then the store and the event loop are free again. */
const CHUNK_ITEMS = 100;
/** The budget is counted in units of this many labels: a full batch is 100 counter increments at most. */
const LABELS_PER_UNIT = 10;

/** One item: the single-label body plus the decision it labels (the single endpoint's path id). */
const LabelItem = Type.Object(
  {
    decision_id: Type.String({ minLength: 1, maxLength: 64 }),
    ...LabelBody.properties,
  },
  { additionalProperties: false },
);

const BulkBody = Type.Object(
  {
    labels: Type.Array(
      Type.Unknown({ description: 'a label: {decision_id, label: "fraud" | "legit", note?}, validated on its own' }),
      {
        minItems: 1,
        maxItems: MAX_LABELS,
      },
    ),
  },
  { additionalProperties: false },
);

const BulkResponse = Type.Object({
  results: Type.Array(Type.Union([LabelSchema, ProblemSchema]), {
    description:
      'the label record, or the problem document POST /api/v1/decisions/{id}/label would have answered, per item, in request order',
  }),
});

const problems = problemResponses(400, 401, 403, 413, 415, 429);

type Item = Static<typeof LabelItem>;

/** operationId: the OpenAPI document's name for the route (src/http/docs.ts reads it from the config). */
const ROUTE_CONFIG = { scope: 'labels:write' as const, operationId: 'labelDecisions' };

export interface BulkLabelOptions {
  store: Store;
  /** labelBudget(): VOUCH_LABELS_PER_MINUTE per principal, on the app's rate-limit counters (shared by the host) */
  budget: LabelBudget;
}

/** A principal's budget of labels a minute, spent by batches here and by review resolutions (reviews/routes.ts). */
export interface LabelBudget {
  /** Charges `items` labels to the caller's budget, or throws 429 rate_limited with Retry-After. */
  charge(request: FastifyRequest, items: number): Promise<void>;
}

export function labelBudget(createRateLimit: FastifyInstance['createRateLimit'], labelsPerMinute: number): LabelBudget {
  const units = Math.max(1, Math.floor(labelsPerMinute / LABELS_PER_UNIT));
  const budget = createRateLimit({
    max: units,
    timeWindow: 60_000,
    keyGenerator: (request) => `labels:${request.principal.id}`,
  });
  return {
    /**
     * The counter takes one unit per call, so a batch takes its units one by one, stopping at the
     * first refused: a refused batch spends what was left of the window, never more, and is
     * logged once. A single label takes a whole unit.
     */
    async charge(request, items) {
      for (let i = 0; i < Math.ceil(items / LABELS_PER_UNIT); i++) {
        const result = await budget(request);
        if (result.isAllowed || !result.isExceeded) continue;
        throw new Limited(
          `Label budget of ${units * LABELS_PER_UNIT} labels a minute exceeded (this request has ${items}); send it again when the window resets.`,
          result.ttlInSeconds,
        );
      }
    },
  };
}

export function bulkLabelRoutes({ store, budget }: BulkLabelOptions): RouteDefinition[] {
  const { db } = store;
  const validate = compileBodyValidator(LabelItem);
  const charge = (request: FastifyRequest, items: number) => budget.charge(request, items);

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/labels',
      config: ROUTE_CONFIG,
      bodyLimit: 1024 * 1024,
      schema: {
        tags: ['audit'],
        summary: `Label up to ${MAX_LABELS} score decisions in one call (each as the single-label endpoint would)`,
        description:
          "Each label counts against the caller's label budget (VOUCH_LABELS_PER_MINUTE, default 6,000 a minute): a batch beyond what is left of the minute gets 429 rate_limited with Retry-After and labels nothing. The labels are written in chunks of 100, one transaction each; on a store failure the earlier chunks stay written, and sending the batch again is safe. Requires the `labels:write` scope (an API key must have been issued with it).",
        body: BulkBody,
        response: { 200: BulkResponse, ...problems },
      },
      handler: async (request) => {
        const { principal } = request;
        const audit = principalAuditor(store, principal);
        // Every label of the batch is the caller's: its actor is read once (docs/api.md, "Audit log", "Who").
        const actors = await resolveActors(db, [principal.id]);
        const labels = request.body.labels;
        await charge(request, labels.length);
        const results: Array<LabelRecord | ProblemBody> = [];
        // In order, one after another: a decision labelled twice in a batch ends with the later label,
        // as two single calls would leave it.
        for (let start = 0; start < labels.length; start += CHUNK_ITEMS) {
          if (start > 0) await nextTurn();
          const chunk = labels.slice(start, start + CHUNK_ITEMS);
          results.push(
            ...(await db.transaction().execute(async (trx) => {
              const out: Array<LabelRecord | ProblemBody> = [];
              // The chunk's audit entries go in at its end: the log's lock is the last a transaction
              // takes, never held while waiting for a decision's row.
              const notes: AuditNote[] = [];
              const later: Auditor = async (_db, note) => void notes.push(note);
              for (const raw of chunk) {
                const invalid = validate(raw);
                if (invalid) {
                  out.push(problemBodyOf(invalid, request.id)!);
                  continue;
                }
                const item = raw as Item;
                try {
                  out.push(
                    await labelDecision(trx, principal, item.decision_id, item.label, item.note ?? null, later, actors),
                  );
                } catch (err) {
                  // Anything but a refusal (a store failure) rolls this chunk back and ends the request.
                  const problem = problemBodyOf(err, request.id);
                  if (!problem) throw err;
                  out.push(problem);
                }
              }
              for (const note of notes) await audit(trx, note);
              return out;
            })),
          );
        }
        return { results };
      },
    }),
  ];
}
