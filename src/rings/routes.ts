// GET /api/v1/trust/entities/{entity_id}/graph (docs/api.md, "Rings"): the accounts behind a
// counterparty, for an operator. Read with the same capped plan as the score, deeper and wider;
// hubs (the policy's maxIdentifierFanout) are listed, never followed. Only the caller's
// environment's rows are read (docs/api.md, "Integration" test mode).
import { Type } from 'typebox';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import type { Store } from '../store/db.ts';
import type { PolicyRegistry } from '../policies/registry.ts';
import { EntityId, checkEntityParam } from '../model/identifier-schemas.ts';
import { flagsOf, walkRing, type RingCaps } from './graph.ts';
import { readNeighbourhood } from './read.ts';
import { redactRing, unredacted } from './redact.ts';
import { ownerFilter } from '../http/route.ts';
import { ringRootOf } from '../entities/entity-repository.ts';

const problems = problemResponses(400, 401, 403, 404, 429);

/** The response's node cap; the read goes further so that `truncated` is known. */
const GRAPH_MAX_NODES = 200;
const GRAPH_CAPS = { identifiersPerHop: 256, entitiesPerHop: 512 } as const;

const Flag = Type.Union([
  Type.Literal('fraud_reported'),
  Type.Literal('blocklisted'),
  Type.Literal('chargeback'),
  Type.Literal('dispute_lost'),
]);

const EntityGraph = Type.Object({
  entity_id: Type.String(),
  nodes: Type.Array(
    Type.Object({
      entity_id: Type.String({
        description:
          "the entity, or `redacted-<n>` (stable within this answer) for an entity a non-admin's client never sent",
      }),
      redacted: Type.Boolean({
        description:
          "true when the entity id is withheld: no event about it and no score of it came from the caller's client (admins see every id)",
      }),
      distance: Type.Integer({
        minimum: 0,
        maximum: 3,
        description: 'hops from entity_id through shared non-hub identifiers',
      }),
      flagged: Type.Boolean(),
      flags: Type.Array(Flag, {
        description: 'why it is flagged: a fraud report, a blocklisting, a chargeback or a lost dispute',
      }),
    }),
    { maxItems: GRAPH_MAX_NODES },
  ),
  edges: Type.Array(
    Type.Object({
      from: Type.String(),
      to: Type.String(),
      type: Type.String({ description: 'the shared identifier type' }),
      hash: Type.Union([Type.String(), Type.Null()], {
        description:
          "the shared identifier (the caller's hash); null when the caller's client never linked it in an event (admins see every hash)",
      }),
    }),
  ),
  hubs: Type.Array(
    Type.Object({
      type: Type.String(),
      hash: Type.Union([Type.String(), Type.Null()], {
        description: "null when the caller's client never linked it in an event (admins see every hash)",
      }),
      entities: Type.Integer({
        description: "entities holding it: more than the policy's maxIdentifierFanout, so it is not traversed",
      }),
    }),
  ),
  truncated: Type.Boolean({
    description: `the neighbourhood is larger than what was read or returned (at most ${GRAPH_MAX_NODES} nodes)`,
  }),
});

const Params = Type.Object({ entity_id: EntityId });
const Query = Type.Object(
  {
    depth: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 3, default: 2, description: 'hops from the entity, 1 to 3' }),
    ),
  },
  { additionalProperties: false },
);

export interface RingRouteOptions {
  store: Store;
  policies: PolicyRegistry;
  requireHashedIds?: boolean;
}

export function ringRoutes({ store, policies, requireHashedIds = false }: RingRouteOptions): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/trust/entities/:entity_id/graph',
      config: { scope: 'trust:read', role: 'operator' },
      schema: {
        tags: ['trust'],
        summary: 'The entities linked to this one through shared identifiers (role operator or admin)',
        params: Params,
        querystring: Query,
        response: { 200: EntityGraph, ...problems },
      },
      handler: async (request) => {
        const id = request.params.entity_id;
        checkEntityParam(id, { requireHashedIds });
        const { environment } = request.principal;
        const root = await ringRootOf(store.db, environment, id);
        if (!root || Number(root.version) === 0)
          throw new ApiError('not_found', 'This entity has no recorded history.');
        const caps: RingCaps = {
          ...GRAPH_CAPS,
          depth: request.query.depth ?? 2,
          fanout: policies.active(environment).maxIdentifierFanout,
        };
        const read = walkRing(
          await readNeighbourhood(store.db, environment, id, [], caps),
          caps.depth,
          caps.fanout,
          GRAPH_MAX_NODES,
        );
        // Another client's accounts and identifiers keep their place in the graph, not their names
        // (src/rings/redact.ts).
        const owner = ownerFilter(request.principal);
        const ring = owner === undefined ? unredacted(read) : await redactRing(store.db, environment, read, owner);
        const rootFlags = flagsOf({
          entityId: id,
          fraudReports: Number(root.fraud_reports),
          blocklisted: Number(root.blocklisted) === 1,
          chargebacks: Number(root.chargebacks),
          disputesLost: Number(root.disputes_lost),
          flaggedAt: Number(root.flagged_at),
        });
        return {
          entity_id: id,
          nodes: ring.nodes.map((n) => {
            const flags = n.entityId === id ? rootFlags : n.flags;
            return {
              entity_id: n.entityId,
              redacted: n.redacted,
              distance: n.distance,
              flagged: flags.length > 0,
              flags,
            };
          }),
          edges: ring.edges,
          hubs: ring.hubs,
          truncated: ring.truncated,
        };
      },
    }),
  ];
}
