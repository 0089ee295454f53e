// /api/v1/keys: list, create, deactivate, rotate. A non-admin sees only its own client's keys;
// anything else is "not found", so existence is never revealed. Keys are credentials, not data, so
// listing is not partitioned by environment (each record names its own); but a test principal can
// never obtain or disturb a live credential: it creates and rotates only test keys, and
// deactivates only test keys. A live principal may manage both (that is how test keys are made).
import { defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { nextCursor } from '../lib/pagination.ts';
import { Type } from 'typebox';
import type { Store } from '../store/db.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import { parseScopes, roleAtMost, type Environment, type Principal, type Role } from '../lib/principal.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { KeyVerifier } from './verifier.ts';
import { resolveActors, type Actors } from '../audit-log/actors.ts';
import { deactivateKey, findKey, insertKey, listKeys, toKeyRecord, type KeyRow } from './repository.ts';
import { rotateKey } from './rotation.ts';
import { loggableText, principalAuditor } from '../audit-log/auditor.ts';
import {
  CONTROL_CHARS,
  CreateBody,
  CreatedKey,
  KEY_ID,
  KeyParams,
  KeyRecord,
  ListQuery,
  problems,
  RotateBody,
} from './route-schemas.ts';

export interface KeyRouteOptions {
  store: Store;
  feed: ChangeFeed;
  verifier: KeyVerifier;
}

/**
 * Why `principal` may not hold or act on a key of `environment`, or undefined. A live key reads
 * and writes live data, so a test credential (handed to a sandbox, a CI job) that could make,
 * rotate or switch one off would reach production: like a higher role, it is refused with 403.
 */
function environmentRefusal(principal: Principal, environment: string, action: string): string | undefined {
  if (principal.environment === 'test' && environment !== 'test')
    return `A test-mode credential cannot ${action} a ${environment} key.`;
  return undefined;
}

export function keyRoutes({ store, feed, verifier }: KeyRouteOptions): RouteDefinition[] {
  const { db } = store;
  const record = (row: KeyRow, actors: Actors) => toKeyRecord(row, verifier.lastUsed(row.id), actors);
  /** One key as answered, its creator named (docs/api.md, "Audit log", "Who"). */
  const one = async (row: KeyRow) => record(row, await resolveActors(db, [row.created_by]));
  const notFound = () => new ApiError('not_found', 'No such key.');

  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/keys',
      config: { scope: 'keys:read' },
      schema: {
        tags: ['keys'],
        summary: 'List API keys, newest first',
        querystring: ListQuery,
        response: {
          200: Type.Object({ data: Type.Array(KeyRecord), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const { status, environment, limit = 50, cursor } = request.query;
        const page = await listKeys(db, {
          owner: ownerFilter(request.principal),
          status,
          environment,
          limit,
          after: cursor,
        });
        const actors = await resolveActors(
          db,
          page.rows.map((r) => r.created_by),
        );
        return { data: page.rows.map((r) => record(r, actors)), next_cursor: nextCursor(page, (last) => last.id) };
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/keys',
      config: { scope: 'keys:write' },
      schema: {
        tags: ['keys'],
        summary: 'Create an API key (the secret is returned once)',
        body: CreateBody,
        response: { 201: CreatedKey, ...problems },
      },
      handler: async (request, reply) => {
        const { principal } = request;
        const body = request.body;
        const role: Role = body.role ?? 'service';
        if (CONTROL_CHARS.test(body.name)) {
          throw new ApiError('validation_failed', 'name must not contain control characters.', {
            errors: [{ field: 'name', message: 'must not contain control characters' }],
          });
        }
        const excess = body.scopes.filter((s) => !principal.scopes.has(s));
        if (excess.length > 0)
          throw new ApiError('insufficient_scope', `A key cannot hold scopes its creator lacks: ${excess.join(', ')}.`);
        if (!roleAtMost(role, principal.role))
          throw new ApiError(
            'insufficient_scope',
            `A key cannot have a higher role than its creator (${principal.role}).`,
          );
        const environment: Environment = body.environment ?? principal.environment;
        const crossing = environmentRefusal(principal, environment, 'create');
        if (crossing !== undefined) throw new ApiError('insufficient_scope', crossing);
        let expiresAt: number | null = null;
        if (body.expires_at !== undefined) {
          expiresAt = Date.parse(body.expires_at);
          if (!(expiresAt > Date.now())) {
            throw new ApiError('validation_failed', 'expires_at must be in the future.', {
              errors: [{ field: 'expires_at', message: 'must be in the future' }],
            });
          }
        }
        // The key and its audit entry (never the secret) commit together.
        const { row, key } = await db.transaction().execute(async (trx) => {
          const created = await insertKey(trx, {
            ownerClientId: principal.clientId,
            name: body.name,
            scopes: body.scopes,
            role,
            environment,
            expiresAt,
            createdBy: principal.id,
          });
          const { name, scopes, expires_at, owner_client_id } = toKeyRecord(created.row, undefined, new Map());
          await principalAuditor(store, principal)(trx, {
            action: 'key.created',
            target: `key:${created.row.id}`,
            after: { name: loggableText(name), role, scopes, environment, expires_at, owner_client_id },
          });
          return created;
        });
        request.log.info(
          {
            event: 'api_key_created',
            key_id: row.id,
            owner_client_id: row.owner_client_id,
            role,
            environment: row.environment,
            principal_id: principal.id,
          },
          'API key created',
        );
        reply.code(201).header('location', `/api/v1/keys/${row.id}`);
        return { ...(await one(row)), key };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/keys/:key_id',
      config: { scope: 'keys:read' },
      schema: {
        tags: ['keys'],
        summary: 'Read one API key',
        params: KeyParams,
        response: { 200: KeyRecord, ...problems },
      },
      handler: async (request) => {
        const id = request.params.key_id;
        if (!KEY_ID.test(id)) throw notFound();
        const row = await findKey(db, id, ownerFilter(request.principal));
        if (!row) throw notFound();
        return one(row);
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/keys/:key_id',
      config: { scope: 'keys:write' },
      schema: {
        tags: ['keys'],
        summary: 'Deactivate an API key (idempotent)',
        params: KeyParams,
        response: { 200: KeyRecord, ...problems },
      },
      handler: async (request) => {
        const id = request.params.key_id;
        if (!KEY_ID.test(id)) throw notFound();
        const { principal } = request;
        // The same role ceiling as rotation: a service key must not switch off an admin's key.
        const outcome = await deactivateKey(
          db,
          feed,
          id,
          ownerFilter(principal),
          (row) =>
            environmentRefusal(principal, row.environment, 'deactivate') ??
            (roleAtMost(row.role as Role, principal.role)
              ? undefined
              : `A key with a higher role than the caller (${principal.role}) cannot be deactivated by it.`),
          principal.id,
          principalAuditor(store, principal),
        );
        if (outcome.kind === 'not_found') throw notFound();
        if (outcome.kind === 'forbidden') throw new ApiError('insufficient_scope', outcome.detail);
        if (outcome.changed)
          request.log.info(
            {
              event: 'api_key_deactivated',
              key_id: id,
              owner_client_id: outcome.row.owner_client_id,
              principal_id: principal.id,
            },
            'API key deactivated',
          );
        return one(outcome.row);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/keys/:key_id/rotate',
      config: { scope: 'keys:write', bodyOptional: true },
      schema: {
        tags: ['keys'],
        summary: 'Rotate an API key: a new key now, the old one expires after the grace period',
        params: KeyParams,
        body: RotateBody,
        response: { 201: CreatedKey, ...problemResponses(409), ...problems },
      },
      handler: async (request, reply) => {
        const grace = request.body?.grace_period_seconds ?? 86400;
        const id = request.params.key_id;
        if (!KEY_ID.test(id)) throw notFound();
        const { principal } = request;
        // Rotation hands out a fresh secret with the old key's rights, so it is bound by the same
        // rule as creation: a key with scopes or a role the caller lacks cannot be rotated by it.
        const outcome = await rotateKey(
          db,
          feed,
          id,
          ownerFilter(principal),
          grace,
          (old) => {
            const crossing = environmentRefusal(principal, old.environment, 'rotate');
            if (crossing !== undefined) return crossing;
            const excess = parseScopes(old.scopes).filter((s) => !principal.scopes.has(s));
            if (excess.length > 0)
              return `A key holding scopes the caller lacks cannot be rotated by it: ${excess.join(', ')}.`;
            if (!roleAtMost(old.role as Role, principal.role))
              return `A key with a higher role than the caller (${principal.role}) cannot be rotated by it.`;
            return undefined;
          },
          principalAuditor(store, principal),
          principal.id,
        );
        if (outcome.kind === 'not_found') throw notFound();
        if (outcome.kind === 'forbidden') throw new ApiError('insufficient_scope', outcome.detail);
        if (outcome.kind === 'conflict')
          throw new ApiError('conflict', 'Only an active key that has not been rotated yet can be rotated.');
        request.log.info(
          {
            event: 'api_key_rotated',
            key_id: id,
            successor_id: outcome.row.id,
            owner_client_id: outcome.row.owner_client_id,
            principal_id: principal.id,
            grace_period_seconds: grace,
          },
          'API key rotated',
        );
        reply.code(201).header('location', `/api/v1/keys/${outcome.row.id}`);
        return { ...(await one(outcome.row)), key: outcome.key };
      },
    }),
  ];
}
