// Lists over HTTP (docs/api.md, "Rules and lists"): typed lists of the environment, shared by its
// clients like its rules, and their entries (added 1–1,000 at a time, removed one by one, never
// deleted from the store). Every change reaches every instance before its next request (the feed).
import { Type, type Static } from 'typebox';
import { NoContent, defineRoute, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses, ProblemSchema } from '../http/problem.ts';
import { nextCursor } from '../lib/pagination.ts';
import type { Environment, Principal } from '../lib/principal.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { Store } from '../store/db.ts';
import { addListEntries, createList, deleteList, removeListEntry } from './lists.ts';
import { deferListDeletion } from './four-eyes.ts';
import { principalAuditor } from '../audit-log/auditor.ts';
import { actorIn, resolveActors, type Actors } from '../audit-log/actors.ts';
import { ChangeSchema } from '../changes/schemas.ts';
import { LIST_BOUND } from './list-bound.ts';
import { HIDDEN_CHARACTERS_MESSAGE, hasHiddenCharacters } from '../lib/plain-text.ts';
import { getList, listEntries, listLists, presentCounts, type ListRow } from './list-repository.ts';
import { RULES_FEED_KIND } from './revisions.ts';
import {
  AddEntriesBody,
  CreateListBody,
  EntriesQuery,
  EntryParams,
  EntrySchema,
  ListParams,
  ListSchema,
  ListsQuery,
  MAX_VALUES_PER_REQUEST,
  type ListKind,
} from './schemas.ts';

const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

/** A list as answered; `actors` names its creator (resolveActors over the page's, docs/api.md "Audit log"). */
function listView(row: ListRow, entries: number, actors: Actors): Static<typeof ListSchema> {
  return {
    name: row.name,
    kind: row.kind as ListKind,
    description: row.description,
    entries,
    created_at: iso(row.created_at),
    created_by: row.created_by,
    created_by_actor: actorIn(actors, row.created_by),
  };
}

const problems = problemResponses(400, 401, 403, 404);
const ConflictProblem = Type.Object({
  ...ProblemSchema.properties,
  rules: Type.Optional(
    Type.Array(Type.Object({ id: Type.String(), name: Type.String(), status: Type.String() }), {
      description: 'the active or shadow rules naming the list',
    }),
  ),
});

export function listRoutes({
  store,
  feed,
  requireHashedIds = false,
}: {
  store: Store;
  feed: ChangeFeed;
  requireHashedIds?: boolean;
}): RouteDefinition[] {
  const db = store.db;
  const announce = (environment: Environment) => feed.announce(RULES_FEED_KIND, environment).catch(() => {});
  const tags = ['lists'];
  const change = (principal: Principal) => ({
    environment: principal.environment,
    by: principal.id,
    now: Date.now(),
    audit: principalAuditor(store, principal),
  });

  async function requireList(environment: Environment, name: string): Promise<ListRow> {
    const row = await getList(db, environment, name);
    if (!row) throw new ApiError('not_found', 'No such list in this environment.');
    return row;
  }

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/lists',
      config: { scope: 'rules:write', role: 'operator', operationId: 'createList' },
      schema: {
        tags,
        summary: 'Create a typed list (entity, identifier, country, string or payment_method)',
        body: CreateListBody,
        response: { 201: ListSchema, ...problemResponses(409), ...problems },
      },
      handler: async (request, reply) => {
        const { principal } = request;
        const { description } = request.body;
        if (description !== undefined && hasHiddenCharacters(description, { lines: true }))
          throw new ApiError('validation_failed', `description ${HIDDEN_CHARACTERS_MESSAGE}.`, {
            errors: [{ field: 'description', message: HIDDEN_CHARACTERS_MESSAGE }],
          });
        const row = await createList(db, feed, change(principal), request.body);
        await announce(principal.environment);
        reply.code(201).header('location', `/api/v1/lists/${encodeURIComponent(row.name)}`);
        return listView(row, 0, await resolveActors(db, [row.created_by]));
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/lists',
      config: { scope: 'rules:read', operationId: 'listLists' },
      schema: {
        tags,
        summary: "The environment's lists by name, each with its count of present entries",
        querystring: ListsQuery,
        response: {
          200: Type.Object({ data: Type.Array(ListSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const { limit = 100, cursor } = request.query;
        const page = await listLists(db, request.principal.environment, limit, cursor);
        const counts = await presentCounts(
          db,
          page.rows.map((r) => r.id),
          Date.now(),
        );
        const actors = await resolveActors(
          db,
          page.rows.map((r) => r.created_by),
        );
        return {
          data: page.rows.map((r) => listView(r, counts.get(r.id) ?? 0, actors)),
          next_cursor: nextCursor(page, (last) => last.name),
        };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/lists/:name',
      config: { scope: 'rules:read', operationId: 'getList' },
      schema: { tags, summary: 'One list', params: ListParams, response: { 200: ListSchema, ...problems } },
      handler: async (request) => {
        const row = await requireList(request.principal.environment, request.params.name);
        const counts = await presentCounts(db, [row.id], Date.now());
        return listView(row, counts.get(row.id) ?? 0, await resolveActors(db, [row.created_by]));
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/lists/:name',
      config: { scope: 'rules:write', role: 'operator', operationId: 'deleteList' },
      schema: {
        tags,
        summary:
          'Delete a list (its entries are kept for rule tests); 409 while an active or shadow rule names it, with those rules',
        description:
          'With four eyes on lists (docs/api.md, "Four eyes"), the deletion waits for a second person: 202 with the pending change. Requires the `rules:write` scope and role operator or admin (an API key must have been issued with it).',
        params: ListParams,
        response: { 202: ChangeSchema, 204: NoContent, 409: ConflictProblem, ...problems },
      },
      handler: async (request, reply) => {
        const { principal } = request;
        const pending = await deferListDeletion(store, principal, request.params.name);
        if (pending) return reply.code(202).header('location', `/api/v1/changes/${pending.id}`).send(pending);
        await deleteList(db, feed, change(principal), request.params.name);
        await announce(principal.environment);
        return reply.code(204).send();
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/lists/:name/entries',
      config: { scope: 'rules:write', role: 'operator', operationId: 'addListEntries' },
      schema: {
        tags,
        summary: `Add 1–${MAX_VALUES_PER_REQUEST} values (with an optional reason and expiry); present ones are counted, not added again`,
        description: `Entity and identifier values must be ids or hashes, never raw phone numbers, e-mails, IBANs or card numbers (400 raw_identifier_rejected); country values are ISO 3166-1 alpha-2, payment_method values the score request's. An environment's lists hold at most ${LIST_BOUND.entries.toLocaleString('en')} present entries and ${LIST_BOUND.chars.toLocaleString('en')} characters of their values together (409 beyond; nothing of the request is added). Requires the \`rules:write\` scope and role operator or admin (an API key must have been issued with it).`,
        params: ListParams,
        body: AddEntriesBody,
        response: {
          200: Type.Object({ added: Type.Integer(), already_present: Type.Integer() }),
          ...problemResponses(409),
          ...problems,
        },
      },
      handler: async (request) => {
        const { environment, id } = request.principal;
        const { values, reason, expires_at } = request.body;
        const now = Date.now();
        const expiresAt = expires_at === undefined ? null : Date.parse(expires_at);
        if (expiresAt !== null && !(expiresAt > now))
          throw new ApiError('validation_failed', 'expires_at must be in the future.', {
            errors: [{ field: 'expires_at', message: 'must be in the future' }],
          });
        const result = await addListEntries(
          db,
          environment,
          request.params.name,
          values,
          id,
          {
            reason: reason ?? null,
            expiresAt,
            feed,
            requireHashedIds,
            audit: principalAuditor(store, request.principal),
          },
          now,
        );
        await announce(environment);
        return result;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/lists/:name/entries',
      config: { scope: 'rules:read', operationId: 'listListEntries' },
      schema: {
        tags,
        summary: "A list's present entries by value (removed and expired ones are kept for rule tests, not shown)",
        params: ListParams,
        querystring: EntriesQuery,
        response: {
          200: Type.Object({ data: Type.Array(EntrySchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const row = await requireList(request.principal.environment, request.params.name);
        const { limit = 100, cursor } = request.query;
        const page = await listEntries(db, row.id, Date.now(), limit, cursor);
        const actors = await resolveActors(
          db,
          page.rows.map((e) => e.added_by),
        );
        return {
          data: page.rows.map((e) => ({
            value: e.value,
            reason: e.reason,
            added_at: iso(e.added_at),
            added_by: e.added_by,
            added_by_actor: actorIn(actors, e.added_by),
            expires_at: e.expires_at === null ? null : iso(e.expires_at),
          })),
          next_cursor: nextCursor(page, (last) => last.value),
        };
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/lists/:name/entries/:value',
      config: { scope: 'rules:write', role: 'operator', operationId: 'removeListEntry' },
      schema: {
        tags,
        summary: 'Remove a value from a list (the entry keeps its removal time and who removed it)',
        params: EntryParams,
        response: { 204: NoContent, ...problems },
      },
      handler: async (request, reply) => {
        const { principal } = request;
        await removeListEntry(db, feed, change(principal), request.params.name, request.params.value);
        await announce(principal.environment);
        return reply.code(204).send();
      },
    }),
  ];
}
