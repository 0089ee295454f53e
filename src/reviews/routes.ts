// /api/v1/reviews (docs/api.md, "Reviews"): the desk's queue. Reading needs reviews:read; claiming
// and resolving need reviews:write with role operator or admin. A review belongs to the client
// whose decision opened it: a non-admin sees only its client's (another client's is "not found"),
// an admin sees every client's of its environment.
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { Store } from '../store/db.ts';
import { principalAuditor } from '../audit-log/auditor.ts';
import { resolveActors } from '../audit-log/actors.ts';
import type { Environment, Principal } from '../lib/principal.ts';
import { NoContent, defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { nextCursor } from '../lib/pagination.ts';
import {
  ListQuery,
  NextBody,
  ResolveBody,
  ReviewDetailSchema,
  ReviewSchema,
  StatsSchema,
  reviewDecision,
  reviewRecord,
  type ReviewJoined,
} from './schemas.ts';
import { claimNext, claimReview, QueueContendedError, releaseReview } from './claims.ts';
import { cursorOf, decodeCursor, findReview, listReviews } from './queue.ts';
import { otherOpenReviews, type Viewer } from './repository.ts';
import { resolutionLabel, resolveReview } from './resolve.ts';
import { reviewStats } from './stats.ts';
import { decisionById } from '../audit/decision-repository.ts';
import { entityLabelCounts } from '../audit/decision-history-repository.ts';

export interface ReviewRouteOptions {
  store: Store;
  feed: ChangeFeed;
  /** whether the environment's active policy opens a list to reviewers (its `reviewLists`) */
  reviewListOpen: (environment: Environment, list: string) => boolean;
  /** a resolution that labels its decision spends one of the caller's labels a minute (429 beyond) */
  chargeLabel: (request: FastifyRequest) => Promise<void>;
}

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const problems = problemResponses(400, 401, 403, 404);
const notFound = () => new ApiError('not_found', 'No such review.');
const viewer = (principal: Principal): Viewer => ({ principal, now: Date.now() });

/** What a review's page shows beside it: its decision, the entity's other open reviews, and the entity's labels. */
async function detail(db: Kysely<Database>, v: Viewer, row: ReviewJoined) {
  const decision = await decisionById(db, row.decision_id);
  const others = await otherOpenReviews(db, v, row.entity_id, row.id);
  const labels = entityLabelCounts(db, v.principal.environment, row.entity_id, ownerFilter(v.principal));
  const counts = { fraud: 0, legit: 0 };
  for (const l of await labels) if (l.label === 'fraud' || l.label === 'legit') counts[l.label] = Number(l.n);
  return {
    ...reviewRecord(row, v.now),
    decision: reviewDecision(decision, await resolveActors(db, [decision.labelled_by])),
    other_open_reviews: others.map((o) => reviewRecord(o, v.now)),
    entity_labels: counts,
  };
}

export function reviewRoutes({ store, feed, reviewListOpen, chargeLabel }: ReviewRouteOptions): RouteDefinition[] {
  const { db } = store;
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/reviews',
      config: { scope: 'reviews:read', operationId: 'listReviews' },
      schema: {
        tags: ['reviews'],
        summary: 'The review queue: unresolved reviews due first, then resolved ones newest first',
        querystring: ListQuery,
        response: {
          200: Type.Object({ data: Type.Array(ReviewSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const q = request.query;
        const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
        if (q.cursor !== undefined && !after)
          throw new ApiError('validation_failed', 'cursor is not one this listing returned.', {
            errors: [{ field: 'cursor', message: 'is not a cursor of this listing' }],
          });
        const v = viewer(request.principal);
        const page = await listReviews(
          db,
          v,
          {
            status: q.status,
            outcome: q.outcome,
            entityId: q.entity_id,
            limit: q.limit ?? 50,
            assignee: q.assignee === 'me' ? request.principal.id : q.assignee,
          },
          after,
        );
        return { data: page.rows.map((r) => reviewRecord(r, v.now)), next_cursor: nextCursor(page, cursorOf) };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/reviews/stats',
      config: { scope: 'reviews:read', operationId: 'getReviewStats' },
      schema: {
        tags: ['reviews'],
        summary: 'The queue in figures: open, overdue, resolved in 24 hours, time to resolve, verdicts',
        response: { 200: StatsSchema, ...problems },
      },
      handler: async (request) =>
        reviewStats(db, request.principal.environment, ownerFilter(request.principal), Date.now()),
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/reviews/:id',
      config: { scope: 'reviews:read', operationId: 'getReview' },
      schema: {
        tags: ['reviews'],
        summary:
          "A review with its decision (signals, matched rules and what they read), the entity's other open reviews and its labels",
        params: Params,
        response: { 200: ReviewDetailSchema, ...problems },
      },
      handler: async (request) => {
        const v = viewer(request.principal);
        const row = await findReview(db, v, request.params.id);
        if (!row) throw notFound();
        return detail(db, v, row);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/reviews/next',
      config: { scope: 'reviews:write', role: 'operator', operationId: 'claimNextReview', bodyOptional: true },
      schema: {
        tags: ['reviews'],
        summary: 'Claim the open review due first, of those the filters keep (204 when none is open)',
        description:
          'Optional body `{"outcome", "entity_id"}`: the queue filters of GET /api/v1/reviews. 204 means no review is left to claim; 503 with Retry-After means every one this call tried went to other reviewers first (ask again). Requires the `reviews:write` scope and role operator or admin (an API key must have been issued with it).',
        body: NextBody,
        response: { 200: ReviewSchema, 204: NoContent, ...problemResponses(503), ...problems },
      },
      handler: async (request, reply) => {
        const v = viewer(request.principal);
        const filter = { outcome: request.body.outcome, entityId: request.body.entity_id };
        const row = await claimNext(db, v, filter, principalAuditor(store, request.principal)).catch((err: unknown) => {
          if (err instanceof QueueContendedError)
            throw new ApiError('unavailable', err.message, { headers: { 'retry-after': '1' } });
          throw err;
        });
        if (!row) return reply.code(204).send();
        request.log.info(
          { event: 'review_claimed', review_id: row.id, principal_id: v.principal.id },
          'review claimed',
        );
        return reviewRecord(row, v.now);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/reviews/:id/claim',
      config: { scope: 'reviews:write', role: 'operator', operationId: 'claimReview' },
      schema: {
        tags: ['reviews'],
        summary: 'Claim a review for 15 minutes (409 while another principal holds it)',
        params: Params,
        response: { 200: ReviewSchema, ...problemResponses(409), ...problems },
      },
      handler: async (request) => {
        const v = viewer(request.principal);
        const outcome = await claimReview(db, v, request.params.id, true, principalAuditor(store, request.principal));
        if (outcome.kind === 'not_found') throw notFound();
        if (outcome.kind === 'resolved') throw new ApiError('conflict', 'This review is already resolved.');
        if (outcome.kind === 'held') throw new ApiError('conflict', `This review is claimed by ${outcome.by}.`);
        request.log.info(
          { event: 'review_claimed', review_id: outcome.row.id, principal_id: v.principal.id },
          'review claimed',
        );
        return reviewRecord(outcome.row, v.now);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/reviews/:id/release',
      config: { scope: 'reviews:write', role: 'operator', operationId: 'releaseReview' },
      schema: {
        tags: ['reviews'],
        summary: "Give a claim back: the review is open again for anyone's next (409 while another principal holds it)",
        params: Params,
        response: { 200: ReviewSchema, ...problemResponses(409), ...problems },
      },
      handler: async (request) => {
        const v = viewer(request.principal);
        const outcome = await releaseReview(db, v, request.params.id, principalAuditor(store, request.principal));
        if (outcome.kind === 'not_found') throw notFound();
        if (outcome.kind === 'resolved') throw new ApiError('conflict', 'This review is already resolved.');
        if (outcome.kind === 'held') throw new ApiError('conflict', `This review is claimed by ${outcome.by}.`);
        request.log.info(
          { event: 'review_released', review_id: outcome.row.id, principal_id: v.principal.id },
          'review released',
        );
        return reviewRecord(outcome.row, v.now);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/reviews/:id/resolve',
      config: { scope: 'reviews:write', role: 'operator', operationId: 'resolveReview' },
      schema: {
        tags: ['reviews'],
        summary: "Resolve a review: approve or decline, the decision's label, and optionally add the entity to a list",
        description:
          "A resolution that labels the decision spends one label of the caller's budget (VOUCH_LABELS_PER_MINUTE, shared with POST /api/v1/labels): 429 rate_limited with Retry-After beyond it, and nothing is resolved. Requires the `reviews:write` scope and role operator or admin (an API key must have been issued with it).",
        params: Params,
        body: ResolveBody,
        response: { 200: ReviewSchema, ...problemResponses(409, 429), ...problems },
      },
      handler: async (request) => {
        const v = viewer(request.principal);
        if (resolutionLabel(request.body) !== null) await chargeLabel(request);
        const audit = principalAuditor(store, request.principal);
        const record = await resolveReview({ db, feed, reviewListOpen, audit }, v, request.params.id, request.body);
        request.log.info(
          {
            event: 'review_resolved',
            review_id: record.id,
            resolution: record.resolution,
            principal_id: v.principal.id,
          },
          'review resolved',
        );
        return record;
      },
    }),
  ];
}
