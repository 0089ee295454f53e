// Rules over HTTP (docs/api.md, "Rules and lists"): create, list, show, change (each change a new
// version), retire, the versions; what the console needs to write one is authoring-routes.ts.
// Rules belong to an environment and are shared by its clients, so there is no owner filter; the
// scope and role are.
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { nextCursor } from '../lib/pagination.ts';
import type { Environment, Principal } from '../lib/principal.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { Store } from '../store/db.ts';
import type { RuleBody } from './compile.ts';
import { createRule, getRule, listRules, listVersions, retireRule, updateRule } from './repository.ts';
import { parseBody } from './rule-body.ts';
import type { RuleRow, RuleVersionRow } from './repository.ts';
import { checkOrThrow } from './route-support.ts';
import { deferRuleChange } from './four-eyes.ts';
import { principalAuditor } from '../audit-log/auditor.ts';
import { actorIn, resolveActors, type Actors } from '../audit-log/actors.ts';
import { fourEyesHolds } from '../changes/four-eyes.ts';
import { ChangeSchema } from '../changes/schemas.ts';
import { RULES_FEED_KIND } from './revisions.ts';
import {
  CreateRuleBody,
  PatchRuleBody,
  RetireQuery,
  RuleIdParams,
  RuleListQuery,
  RuleSchema,
  RuleVersionSchema,
  type RuleStatus,
} from './schemas.ts';
import { ruleAuthoringRoutes } from './authoring-routes.ts';

const iso = (ms: number | string) => new Date(Number(ms)).toISOString();
const ruleActorIds = (rows: readonly RuleRow[]) => rows.flatMap((r) => [r.created_by, r.updated_by]);

function bodyView(body: RuleBody) {
  return {
    name: body.name,
    condition: body.condition,
    action: body.action ?? null,
    override: body.override === true,
    final: body.final === true,
    cap: body.cap ?? null,
    description: body.description ?? null,
  };
}

/** A rule as answered; `actors` names its `*_by` ids (resolveActors over the page's, docs/api.md "Audit log"). */
function ruleView(row: RuleRow, actors: Actors): Static<typeof RuleSchema> {
  return {
    id: row.id,
    ...bodyView(parseBody(row)),
    version: row.version,
    status: row.status as RuleStatus,
    created_at: iso(row.created_at),
    created_by: row.created_by,
    created_by_actor: actorIn(actors, row.created_by),
    updated_at: iso(row.updated_at),
    updated_by: row.updated_by,
    updated_by_actor: actorIn(actors, row.updated_by),
  };
}

function versionView(row: RuleVersionRow, actors: Actors): Static<typeof RuleVersionSchema> {
  return {
    rule_id: row.rule_id,
    ...bodyView(JSON.parse(row.body) as RuleBody),
    version: row.version,
    status: row.status as RuleStatus,
    changed_at: iso(row.changed_at),
    changed_by: row.changed_by,
    changed_by_actor: actorIn(actors, row.changed_by),
    reason: row.reason,
  };
}

// The rule and list tests build rules with the routes' check.
export { checkOrThrow } from './route-support.ts';

const Page = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({ data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) });
const problems = problemResponses(400, 401, 403, 404);

export function ruleRoutes({
  store,
  feed,
  createRateLimit,
}: {
  store: Store;
  feed: ChangeFeed;
  createRateLimit: FastifyInstance['createRateLimit'];
}): RouteDefinition[] {
  const db = store.db;
  const announce = (environment: Environment) => feed.announce(RULES_FEED_KIND, environment).catch(() => {});
  const tags = ['rules'];
  const change = (principal: Principal, reason?: string | null) => ({
    environment: principal.environment,
    by: principal.id,
    now: Date.now(),
    reason: reason ?? null,
    audit: principalAuditor(store, principal),
  });

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/rules',
      config: { scope: 'rules:write', role: 'operator', operationId: 'createRule' },
      schema: {
        tags,
        summary: 'Create a rule (version 1), draft unless a status is given; its condition is type-checked',
        description:
          'With four eyes on rules (docs/api.md, "Four eyes"), a rule created active is stored as a draft and its activation waits for a second person: 202 with the pending change. Requires the `rules:write` scope and role operator or admin (an API key must have been issued with it).',
        body: CreateRuleBody,
        response: { 201: RuleSchema, 202: ChangeSchema, ...problems },
      },
      handler: async (request, reply) => {
        const { status = 'draft', ...body } = request.body;
        const { principal } = request;
        const held = status === 'active' && (await fourEyesHolds(db, principal.environment, 'rule_activation'));
        const row = await createRule(db, feed, change(principal), body, held ? 'draft' : status, checkOrThrow);
        await announce(principal.environment);
        // Held: the activation waits; should the setting have been turned off meanwhile, the draft is the answer.
        const pending = held ? await deferRuleChange(store, principal, row.id, { status: 'active' }, null) : undefined;
        if (pending) return reply.code(202).header('location', `/api/v1/changes/${pending.id}`).send(pending);
        reply.code(201).header('location', `/api/v1/rules/${encodeURIComponent(row.id)}`);
        return ruleView(row, await resolveActors(db, ruleActorIds([row])));
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/rules',
      config: { scope: 'rules:read', operationId: 'listRules' },
      schema: {
        tags,
        summary: "The environment's rules, newest first; status= filters",
        querystring: RuleListQuery,
        response: { 200: Page(RuleSchema), ...problems },
      },
      handler: async (request) => {
        const { status, limit = 50, cursor } = request.query;
        const page = await listRules(db, request.principal.environment, {
          ...(status ? { status } : {}),
          limit,
          ...(cursor ? { after: cursor } : {}),
        });
        const actors = await resolveActors(db, ruleActorIds(page.rows));
        return { data: page.rows.map((r) => ruleView(r, actors)), next_cursor: nextCursor(page, (last) => last.id) };
      },
    }),

    ...ruleAuthoringRoutes({ store, createRateLimit }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/rules/:id',
      config: { scope: 'rules:read', operationId: 'getRule' },
      schema: {
        tags,
        summary: "A rule's current version",
        params: RuleIdParams,
        response: { 200: RuleSchema, ...problems },
      },
      handler: async (request) => {
        const row = await getRule(db, request.principal.environment, request.params.id);
        if (!row) throw new ApiError('not_found', 'No such rule in this environment.');
        return ruleView(row, await resolveActors(db, ruleActorIds([row])));
      },
    }),

    defineRoute({
      method: 'PATCH',
      url: '/api/v1/rules/:id',
      config: { scope: 'rules:write', role: 'operator', operationId: 'updateRule' },
      schema: {
        tags,
        summary:
          'Change a rule: a new version with the fields given (null clears action, cap, description); status moves between draft, shadow and active; reason is kept',
        description:
          'With four eyes on rules (docs/api.md, "Four eyes"), a change that leaves the rule active with something new (activating it, or editing an active rule) waits for a second person: 202 with the pending change. Requires the `rules:write` scope and role operator or admin (an API key must have been issued with it).',
        params: RuleIdParams,
        body: PatchRuleBody,
        response: { 200: RuleSchema, 202: ChangeSchema, ...problemResponses(409), ...problems },
      },
      handler: async (request, reply) => {
        const { reason, ...patch } = request.body;
        if (Object.keys(patch).length === 0)
          throw new ApiError('validation_failed', 'Nothing to change.', {
            errors: [{ field: '(body)', message: 'must change at least one field' }],
          });
        const { principal } = request;
        const pending = await deferRuleChange(store, principal, request.params.id, patch, reason ?? null);
        if (pending) return reply.code(202).header('location', `/api/v1/changes/${pending.id}`).send(pending);
        const row = await updateRule(db, feed, change(principal, reason), request.params.id, patch, checkOrThrow);
        await announce(principal.environment);
        return ruleView(row, await resolveActors(db, ruleActorIds([row])));
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/rules/:id',
      config: { scope: 'rules:write', role: 'operator', operationId: 'retireRule' },
      schema: {
        tags,
        summary: 'Retire a rule: a last version, status retired, never evaluated again (final)',
        params: RuleIdParams,
        querystring: RetireQuery,
        response: { 200: RuleSchema, ...problemResponses(409), ...problems },
      },
      handler: async (request) => {
        const { principal } = request;
        const row = await retireRule(db, feed, change(principal, request.query.reason), request.params.id);
        await announce(principal.environment);
        return ruleView(row, await resolveActors(db, ruleActorIds([row])));
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/rules/:id/versions',
      config: { scope: 'rules:read', operationId: 'listRuleVersions' },
      schema: {
        tags,
        summary: 'Every version of a rule, newest first, with who changed it, when and why',
        params: RuleIdParams,
        response: { 200: Type.Object({ data: Type.Array(RuleVersionSchema) }), ...problems },
      },
      handler: async (request) => {
        const rows = await listVersions(db, request.principal.environment, request.params.id);
        if (rows.length === 0) throw new ApiError('not_found', 'No such rule in this environment.');
        const actors = await resolveActors(
          db,
          rows.map((r) => r.changed_by),
        );
        return { data: rows.map((r) => versionView(r, actors)) };
      },
    }),
  ];
}
