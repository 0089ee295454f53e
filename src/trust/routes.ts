// /api/v1/trust: events in, scores out, aggregates for inspection.
import type { FastifyReply } from 'fastify';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { claimOf } from '../http/idempotency.ts';
import type { Metrics } from '../http/observability.ts';
import type { Counter } from 'prom-client';
import { Type } from 'typebox';
import type { Store } from '../store/db.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { ingestEvents } from './ingest.ts';
import { EventConflictError } from './event-ids.ts';
import type { ScoringService } from './scoring.ts';
import type { PolicyRegistry } from '../policies/registry.ts';
import { documentedOnly, scoreValidator } from './score-validation.ts';
import { EventsBody, ScoreBody, ScoreResponse, checkEvents } from './schemas.ts';
import { EntityId, checkEntityParam } from '../model/identifier-schemas.ts';
import { entityRow } from '../entities/entity-repository.ts';
import { currencyVolumes } from '../entities/aggregate-repository.ts';
import { identifiersWithHolders } from '../entities/identifier-repository.ts';

const problems = problemResponses(400, 401, 403, 413, 415, 429);

const EntityAggregates = Type.Object({
  entity_id: Type.String(),
  first_seen_at: Type.String({ format: 'date-time' }),
  last_event_at: Type.String({ format: 'date-time' }),
  trades_completed: Type.Integer(),
  trades_cancelled: Type.Integer(),
  volume_completed: Type.Record(Type.String(), Type.Number(), { description: 'by currency' }),
  disputes_opened: Type.Integer(),
  disputes_won: Type.Integer(),
  disputes_lost: Type.Integer(),
  chargebacks: Type.Integer(),
  fraud_reports: Type.Integer(),
  blocklisted: Type.Boolean(),
  linked_identifiers: Type.Array(
    Type.Object({
      type: Type.String(),
      hash: Type.String(),
      entities: Type.Integer({ minimum: 0, description: 'how many entities hold this identifier (this one included)' }),
    }),
  ),
});

export interface TrustRouteOptions {
  store: Store;
  scoring: ScoringService;
  /** each request reads its environment's policies from here, once */
  policies: PolicyRegistry;
  /** VOUCH_REQUIRE_HASHED_IDS */
  requireHashedIds?: boolean;
  metrics: Metrics;
  /** scores returned, shared with the batch route (scoreCounter) */
  scores: Counter<'risk_level' | 'cached'>;
}

/** Scores returned by the single and the batch route, by level and cache use. */
export const scoreCounter = (metrics: Metrics) =>
  metrics.counter('vouch_scores_total', 'Scores returned, by risk level and cache use', [
    'risk_level',
    'cached',
  ]) as Counter<'risk_level' | 'cached'>;

export function trustRoutes({
  store,
  scoring,
  policies,
  requireHashedIds = false,
  metrics,
  scores,
}: TrustRouteOptions): RouteDefinition[] {
  const validateScore = scoreValidator({ requireHashedIds });
  const ingested = metrics.counter('vouch_events_ingested_total', 'Events accepted or skipped as duplicates', [
    'outcome',
  ]);
  const EntityParams = Type.Object({ entity_id: EntityId });

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/trust/events',
      config: { scope: 'trust:write' },
      bodyLimit: 1024 * 1024,
      schema: {
        tags: ['trust'],
        summary: "Record history events (idempotent by the client's event_id; up to 1000 per call)",
        body: EventsBody,
        response: {
          200: Type.Object({ accepted: Type.Integer(), duplicates: Type.Integer() }),
          ...problemResponses(409),
          ...problems,
        },
      },
      handler: async (request) => {
        // A batch is all or nothing: nothing is stored unless every event is valid.
        const { environment, clientId } = request.principal;
        const policy = policies.active(environment);
        checkEvents(request.body.events, policy.cryptoAssets, { requireHashedIds });
        let result;
        try {
          result = await ingestEvents(store, request.body.events, policy, { environment, clientId });
        } catch (err) {
          if (!(err instanceof EventConflictError)) throw err;
          const errors = err.conflicts
            .slice(0, 50)
            .map((c) => ({ field: `events.${c.index}.event_id`, message: 'was already used for a different event' }));
          throw new ApiError(
            'conflict',
            `An event_id was reused with a different payload (${errors
              .map((e) => e.field)
              .slice(0, 3)
              .join(', ')}); nothing was stored.`,
            { errors },
          );
        }
        ingested.inc({ outcome: 'accepted' }, result.accepted);
        ingested.inc({ outcome: 'duplicate' }, result.duplicates);
        return result;
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/trust/score',
      config: { scope: 'trust:read', person: 'operator' },
      validatorCompiler: documentedOnly,
      schema: {
        tags: ['trust'],
        summary: 'Score a counterparty for a trade (higher = riskier)',
        body: ScoreBody,
        response: { 200: ScoreResponse, ...problems },
      },
      // The reply is the general one: an answer is the score already serialised, a JSON string.
      handler: async (request, reply: FastifyReply) => {
        // Read once: the body is validated (one step, score-validation.ts) and scored with the same policies.
        const live = policies.get(request.principal.environment);
        const body = validateScore(request.body, live.active.cryptoAssets);
        const answer = await scoring.answer(body, request.principal, live, true, claimOf(request));
        scores.inc({ risk_level: answer.riskLevel, cached: String(answer.cached) });
        // A JSON string is sent as it is (no serialiser runs on it): the text the decision was stored as.
        return reply.type('application/json; charset=utf-8').send(answer.json);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/trust/entities/:entity_id',
      config: { scope: 'trust:read' },
      schema: {
        tags: ['trust'],
        summary: "An entity's recorded history aggregates (plain, undecayed counts)",
        params: EntityParams,
        response: { 200: EntityAggregates, ...problemResponses(404), ...problems },
      },
      handler: async (request) => {
        const id = request.params.entity_id;
        checkEntityParam(id, { requireHashedIds });
        const { environment } = request.principal;
        const row = await entityRow(store.db, environment, id);
        if (!row || Number(row.version) === 0) throw new ApiError('not_found', 'This entity has no recorded history.');
        const [currencies, identifiers] = await Promise.all([
          currencyVolumes(store.db, environment, id),
          // The sharing count comes from identifier_stats in the same query: no scan of the other holders.
          identifiersWithHolders(store.db, environment, id, 100),
        ]);
        const iso = (ms: number) => new Date(Number(ms)).toISOString();
        return {
          entity_id: id,
          first_seen_at: iso(row.first_seen_at),
          last_event_at: iso(row.last_event_at),
          trades_completed: Number(row.trades_completed),
          trades_cancelled: Number(row.trades_cancelled),
          volume_completed: Object.fromEntries(currencies.map((c) => [c.currency, Number(c.volume)])),
          disputes_opened: Number(row.disputes_opened),
          disputes_won: Number(row.disputes_won),
          disputes_lost: Number(row.disputes_lost),
          chargebacks: Number(row.chargebacks),
          fraud_reports: Number(row.fraud_reports),
          blocklisted: Number(row.blocklisted) === 1,
          // A missing stats row (never expected) still counts this entity itself.
          linked_identifiers: identifiers.map((i) => ({
            type: i.id_type,
            hash: i.hash,
            entities: Math.max(1, Number(i.entities ?? 1)),
          })),
        };
      },
    }),
  ];
}
