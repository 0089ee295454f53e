// Reading and labelling stored decisions (docs/api.md, "Trust scoring" audit, §8). A caller that is not an admin
// sees its own client's decisions only; anything else is "not found", never "forbidden".
import { defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { decodeTimeKey, encodeTimeKey, nextCursor, pageOf } from '../lib/pagination.ts';
import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { DecisionsTable } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import { principalAuditor } from '../audit-log/auditor.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';
import { listDecisions } from './decision-history-repository.ts';
import { findDecision, labelActorIds, labelDecision, labelObject, LabelBody, LabelSchema } from './labels.ts';
import { resolveActors, type Actors } from '../audit-log/actors.ts';
import { MatchedRuleSchema } from '../model/outcome-schemas.ts';
import { OUTCOMES, type MatchedRule, type ShadowMatch } from '../model/outcomes.ts';
import { decodeFeatures } from '../model/feature-vector.ts';

const ShadowRuleSchema = Type.Object({
  ...MatchedRuleSchema.properties,
  would_be_outcome: StringEnum(OUTCOMES, {
    description: 'the outcome the decision would have had with this rule active',
  }),
});

type Row = Selectable<DecisionsTable>;

const Decision = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('score'), Type.Literal('dispute_analysis')]),
  principal_id: Type.String(),
  subject_id: Type.String({ description: 'the scored entity, or the dispute id' }),
  request_digest: Type.String({ description: 'SHA-256 of the canonical request' }),
  result: Type.Unknown({ description: 'the response as it was returned' }),
  policy_version: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  trade_id: Type.Union([Type.String(), Type.Null()], { description: "scores: the request's context.trade_id" }),
  features: Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()], {
    description:
      "scores: every signal's value under the deciding policy, zeros included (docs/api.md, 'Outcomes and labels')",
  }),
  request: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description:
      "what was asked, without entity ids: a score's amount, currency and trade context; a dispute's trade, reason, opened_by, opened_at and evidence (null for decisions stored before it was kept)",
  }),
  network_peers: Type.Union(
    [
      Type.Array(
        Type.Object({
          id: Type.String({ description: 'the peer (GET /api/v1/network/peers/{id})' }),
          name: Type.String(),
          contribution: Type.Number({
            description:
              "the peer's share of network_flags: half its weight × age decay (at most 0.5), scaled down alike where the peers together pass 1, so the shares add up to the value (decisions before 2026-11-27: weight × age decay, at most 1)",
          }),
        }),
      ),
      Type.Null(),
    ],
    {
      description:
        'scores: the network peers whose flags made up the network_flags signal (docs/network.md); null when none did',
    },
  ),
  label: Type.Union([LabelSchema, Type.Null()]),
  outcome: Type.Union([StringEnum(OUTCOMES), Type.Null()], {
    description:
      'scores: approve, review, hold or decline (docs/rules.md); null for dispute analyses and scores stored before outcomes',
  }),
  rules: Type.Union([Type.Array(MatchedRuleSchema), Type.Null()], {
    description:
      'scores: the active rules that matched, with what their conditions read ([] when none; null before outcomes)',
  }),
  shadow_rules: Type.Union([Type.Array(ShadowRuleSchema), Type.Null()], {
    description:
      'scores: the shadow rules that matched, with the outcome each would have given had it been active; they changed nothing ([] when none; null before outcomes)',
  }),
});

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });

const ListQuery = Type.Object(
  {
    kind: Type.Optional(StringEnum(['score', 'dispute'] as const)),
    entity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    risk_level: Type.Optional(StringEnum(['low', 'medium', 'high', 'critical'] as const)),
    outcome: Type.Optional(StringEnum(OUTCOMES, { description: 'scores whose outcome is this' })),
    label: Type.Optional(StringEnum(['fraud', 'legit', 'none'] as const)),
    since: Type.Optional(Type.String({ format: 'date-time' })),
    until: Type.Optional(Type.String({ format: 'date-time' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,16}\\.[A-Za-z0-9_]{1,64}$' })),
  },
  { additionalProperties: false },
);

const problems = problemResponses(400, 401, 403, 404);

function decisionRecord(row: Row, actors: Actors): Static<typeof Decision> {
  return {
    id: row.id,
    kind: row.kind as 'score' | 'dispute_analysis',
    principal_id: row.principal_id,
    subject_id: row.subject_id,
    request_digest: row.request_digest,
    result: JSON.parse(row.result) as unknown,
    policy_version: row.policy_version,
    created_at: new Date(Number(row.created_at)).toISOString(),
    trade_id: row.trade_id ?? null,
    // stored as an array or as the object of names (model/feature-vector.ts): answered as the object
    features: row.features ? (decodeFeatures(row.features) as Record<string, number>) : null,
    request: row.request ? (JSON.parse(row.request) as Record<string, unknown>) : null,
    network_peers: row.network_peers
      ? (JSON.parse(row.network_peers) as Array<{ id: string; name: string; contribution: number }>)
      : null,
    label: labelObject(row, actors),
    outcome: (row.outcome ?? null) as Static<typeof Decision>['outcome'],
    rules: row.kind !== 'score' || !row.outcome ? null : row.rules ? (JSON.parse(row.rules) as MatchedRule[]) : [],
    shadow_rules:
      row.kind !== 'score' || !row.outcome
        ? null
        : row.shadow_rules
          ? (JSON.parse(row.shadow_rules) as ShadowMatch[])
          : [],
  };
}

export function decisionRoutes({ store }: { store: Store }): RouteDefinition[] {
  const { db } = store;
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/decisions/:id',
      config: { scope: 'audit:read' },
      schema: {
        tags: ['audit'],
        summary: 'A stored score or dispute analysis, by decision_id or analysis_id',
        params: Params,
        response: { 200: Decision, ...problemResponses(401, 403, 404) },
      },
      handler: async (request) => {
        const row = await findDecision(db, request.params.id, request.principal);
        if (!row) throw new ApiError('not_found', 'No such decision.');
        return decisionRecord(row, await resolveActors(db, labelActorIds([row])));
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/decisions',
      config: { scope: 'audit:read' },
      schema: {
        tags: ['audit'],
        summary: 'Stored decisions, newest first, with filters',
        querystring: ListQuery,
        response: {
          200: Type.Object({ data: Type.Array(Decision), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const query = request.query;
        const limit = query.limit ?? 50;
        const since = query.since === undefined ? undefined : Date.parse(query.since);
        const until = query.until === undefined ? undefined : Date.parse(query.until);
        if (Number.isNaN(since) || Number.isNaN(until))
          throw new ApiError('invalid_request', 'since and until must be RFC 3339 times.');
        const filter = {
          environment: request.principal.environment,
          owner: ownerFilter(request.principal),
          kind: query.kind ? (query.kind === 'score' ? ('score' as const) : ('dispute_analysis' as const)) : undefined,
          entityId: query.entity_id,
          label: query.label,
          since,
          until,
          after: query.cursor ? decodeTimeKey(query.cursor) : undefined,
          riskLevel: query.risk_level,
          outcome: query.outcome,
        };
        const page = pageOf(await listDecisions(db, filter, limit + 1), limit);
        const actors = await resolveActors(db, labelActorIds(page.rows));
        return {
          data: page.rows.map((row) => decisionRecord(row, actors)),
          next_cursor: nextCursor(page, (last) => encodeTimeKey({ at: Number(last.created_at), key: last.id })),
        };
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/decisions/:id/label',
      config: { scope: 'labels:write' },
      schema: {
        tags: ['audit'],
        summary: "Label a score decision's outcome (fraud or legit); labelling again replaces it",
        params: Params,
        body: LabelBody,
        response: { 200: LabelSchema, ...problemResponses(409), ...problems },
      },
      handler: async (request) => {
        const { principal, params, body } = request;
        // The label and its audit entry commit together.
        return db
          .transaction()
          .execute((trx) =>
            labelDecision(trx, principal, params.id, body.label, body.note ?? null, principalAuditor(store, principal)),
          );
      },
    }),
  ];
}
