// The environment's settings and its pending changes (docs/api.md, "Four eyes"): PUT/GET
// /api/v1/settings, GET /api/v1/changes, and approving or rejecting one. What an approval
// applies comes from the features (`appliers`, filled by the composition root), which sit above.
import { Type, type Static } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { nextCursor } from '../lib/pagination.ts';
import type { Store } from '../store/db.ts';
import { checkLabelNote } from '../audit/labels.ts';
import { decideChange, setFourEyes, type ChangeAppliers } from './four-eyes.ts';
import { changeView, fourEyesSetting, getChange, listChanges } from './repository.ts';
import { resolveActor } from '../audit-log/actors.ts';
import type { Environment } from '../lib/principal.ts';
import {
  ChangeParams,
  ChangeQuery,
  ChangeSchema,
  DecideBody,
  SCOPE_OF,
  SettingsAnswerSchema,
  SettingsSchema,
  type ChangeView,
} from './schemas.ts';

const problems = problemResponses(400, 401, 403, 404);
const notFound = () => new ApiError('not_found', 'No such change in this environment.');
const CHANGE_ID = /^chg_[0-9A-HJKMNP-TV-Z]{26}$/;

export interface ChangeRouteOptions {
  store: Store;
  /** how an approved change of each kind is applied (rules/four-eyes.ts, policies/changes.ts) */
  appliers: ChangeAppliers;
}

export function changeRoutes({ store, appliers }: ChangeRouteOptions): RouteDefinition[] {
  const db = store.db;
  const tags = ['changes'];

  /** Approve or reject: the outcome as the route answers it. */
  const decide = async (request: FastifyRequest, id: string, approve: boolean, note?: string): Promise<ChangeView> => {
    if (!CHANGE_ID.test(id)) throw notFound();
    // Kept with the change and in the audit log: screened as a label's note is (no raw identifier).
    checkLabelNote(note);
    const { principal } = request;
    const outcome = await decideChange(
      store,
      principal,
      id,
      {
        approve,
        note: note ?? null,
        // The route declares rules:write; a policy's activation needs policy:write as its own route does.
        lacks: (change) => (principal.scopes.has(SCOPE_OF[change.kind]) ? undefined : SCOPE_OF[change.kind]),
      },
      appliers,
    );
    if (outcome.kind === 'not_found') throw notFound();
    if (outcome.kind === 'insufficient_scope')
      throw new ApiError('insufficient_scope', `Deciding on this change requires the ${outcome.scope} scope.`, {
        headers: { 'www-authenticate': `Bearer realm="vouch", error="insufficient_scope", scope="${outcome.scope}"` },
      });
    if (outcome.kind === 'forbidden') throw new ApiError('forbidden', outcome.detail);
    if (outcome.kind === 'conflict') throw new ApiError('conflict', outcome.detail);
    await outcome.afterCommit();
    return outcome.change;
  };

  /** The setting, who last changed it named as now (docs/api.md, "Audit log", "Who"). */
  const settingsAnswer = async (environment: Environment): Promise<Static<typeof SettingsAnswerSchema>> => {
    const setting = await fourEyesSetting(db, environment);
    return {
      four_eyes: setting.areas,
      updated_by: await resolveActor(db, setting.updatedBy),
      updated_at: setting.updatedAt === null ? null : new Date(setting.updatedAt).toISOString(),
    };
  };

  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/settings',
      config: { scope: 'settings:read', operationId: 'getSettings' },
      schema: {
        tags,
        summary: "The environment's settings: what needs a second person (four eyes)",
        response: { 200: SettingsAnswerSchema, ...problems },
      },
      handler: async (request) => settingsAnswer(request.principal.environment),
    }),

    defineRoute({
      method: 'PUT',
      url: '/api/v1/settings',
      config: { scope: 'settings:write', role: 'admin', operationId: 'putSettings' },
      schema: {
        tags,
        summary: "Replace the environment's settings: four_eyes lists the areas whose changes need a second person",
        body: SettingsSchema,
        response: { 200: SettingsAnswerSchema, ...problems },
      },
      handler: async (request) => {
        await setFourEyes(store, request.principal, request.body.four_eyes);
        return settingsAnswer(request.principal.environment);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/changes',
      config: { scope: 'rules:read', operationId: 'listChanges' },
      schema: {
        tags,
        summary: 'Changes held for a second person (four eyes), newest first; status= filters',
        querystring: ChangeQuery,
        response: {
          200: Type.Object({ data: Type.Array(ChangeSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const { status, kind, limit = 50, cursor } = request.query;
        const now = Date.now();
        const page = await listChanges(db, request.principal.environment, {
          ...(status ? { status } : {}),
          ...(kind ? { kind } : {}),
          limit,
          ...(cursor ? { after: cursor } : {}),
          now,
        });
        return { data: page.rows.map((r) => changeView(r, now)), next_cursor: nextCursor(page, (last) => last.id) };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/changes/:id',
      config: { scope: 'rules:read', operationId: 'getChange' },
      schema: { tags, summary: 'One change', params: ChangeParams, response: { 200: ChangeSchema, ...problems } },
      handler: async (request) => {
        const row = CHANGE_ID.test(request.params.id)
          ? await getChange(db, request.principal.environment, request.params.id)
          : undefined;
        if (!row) throw notFound();
        return changeView(row, Date.now());
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/changes/:id/approve',
      config: { scope: 'rules:write', role: 'operator', operationId: 'approveChange', bodyOptional: true },
      schema: {
        tags,
        summary:
          'Approve a pending change and apply it now, as its request would have (checked again); a person other than the requester only',
        params: ChangeParams,
        body: DecideBody,
        response: { 200: ChangeSchema, ...problemResponses(409), ...problems },
      },
      handler: async (request) => decide(request, request.params.id, true, request.body?.note),
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/changes/:id/reject',
      config: { scope: 'rules:write', role: 'operator', operationId: 'rejectChange', bodyOptional: true },
      schema: {
        tags,
        summary: 'Reject a pending change: it is never applied (the requester may reject their own, withdrawing it)',
        params: ChangeParams,
        body: DecideBody,
        response: { 200: ChangeSchema, ...problemResponses(409), ...problems },
      },
      handler: async (request) => decide(request, request.params.id, false, request.body?.note),
    }),
  ];
}
