// /api/v1/keys: list, create, deactivate, rotate. A non-admin sees only its own client's keys;
// anything else is "not found", so existence is never revealed.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { ApiError, ProblemSchema } from '../http/problem.ts';
import { ROLES, SCOPES, roleAtMost, type Principal, type Role } from '../auth/principal.ts';
import type { RevocationFeed } from '../auth/revocation.ts';
import type { KeyVerifier } from './verifier.ts';
import { deactivateKey, findKey, insertKey, listKeys, rotateKey, toKeyRecord, type KeyRow } from './repository.ts';

const KeyRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  scopes: Type.Array(Type.String()),
  role: Type.String(),
  environment: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('inactive')]),
  owner_client_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  deactivated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
}, { $id: 'ApiKey' });

const CreatedKey = Type.Intersect([KeyRecord, Type.Object({ key: Type.String({ description: 'the secret; shown once' }) })]);

const ListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('inactive')])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  cursor: Type.Optional(Type.String({ pattern: '^key_[0-9A-HJKMNP-TV-Z]{26}$' })),
}, { additionalProperties: false });

const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Array(Type.Union(SCOPES.map((s) => Type.Literal(s))), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
  role: Type.Optional(Type.Union(ROLES.map((r) => Type.Literal(r)))),
  environment: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')])),
  expires_at: Type.Optional(Type.String({ format: 'date-time' })),
}, { additionalProperties: false });

const RotateBody = Type.Object({
  grace_period_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 604800 })),
}, { additionalProperties: false });

const KeyParams = Type.Object({ key_id: Type.String({ maxLength: 64 }) });

const problems = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema };

export interface KeyRouteOptions {
  db: Kysely<Database>;
  feed: RevocationFeed;
  verifier: KeyVerifier;
}

/** Admins act on every key; everyone else only on keys their own client owns. */
const ownerScope = (principal: Principal) => (principal.role === 'admin' ? undefined : principal.clientId);

export default async function keyRoutes(app: FastifyInstance, { db, feed, verifier }: KeyRouteOptions) {
  const record = (row: KeyRow) => toKeyRecord(row, verifier.lastUsed(row.id));
  const notFound = () => new ApiError(404, 'not_found', 'No such key.');

  app.get<{ Querystring: Static<typeof ListQuery> }>('/api/v1/keys', {
    config: { scope: 'keys:read' },
    schema: { tags: ['keys'], summary: 'List API keys, newest first', querystring: ListQuery, response: { 200: Type.Object({ data: Type.Array(KeyRecord), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...problems } },
  }, async (request) => {
    const { status, limit = 50, cursor } = request.query;
    const { rows, more } = await listKeys(db, { owner: ownerScope(request.principal), status, limit, after: cursor });
    return { data: rows.map(record), next_cursor: more ? rows[rows.length - 1]!.id : null };
  });

  app.post<{ Body: Static<typeof CreateBody> }>('/api/v1/keys', {
    config: { scope: 'keys:write' },
    schema: { tags: ['keys'], summary: 'Create an API key (the secret is returned once)', body: CreateBody, response: { 201: CreatedKey, ...problems } },
  }, async (request, reply) => {
    const { principal } = request;
    const body = request.body;
    const role: Role = body.role ?? 'service';
    const excess = body.scopes.filter((s) => !principal.scopes.has(s));
    if (excess.length > 0) throw new ApiError(403, 'insufficient_scope', `A key cannot hold scopes its creator lacks: ${excess.join(', ')}.`);
    if (!roleAtMost(role, principal.role)) throw new ApiError(403, 'insufficient_scope', `A key cannot have a higher role than its creator (${principal.role}).`);
    let expiresAt: number | null = null;
    if (body.expires_at !== undefined) {
      expiresAt = Date.parse(body.expires_at);
      if (!(expiresAt > Date.now())) {
        throw new ApiError(400, 'validation_failed', 'expires_at must be in the future.', { errors: [{ field: 'expires_at', message: 'must be in the future' }] });
      }
    }
    const { row, key } = await insertKey(db, { ownerClientId: principal.clientId, name: body.name, scopes: body.scopes, role, environment: body.environment ?? 'live', expiresAt });
    reply.code(201).header('location', `/api/v1/keys/${row.id}`);
    return { ...record(row), key };
  });

  app.delete<{ Params: Static<typeof KeyParams> }>('/api/v1/keys/:key_id', {
    config: { scope: 'keys:write' },
    schema: { tags: ['keys'], summary: 'Deactivate an API key (idempotent)', params: KeyParams, response: { 200: KeyRecord, ...problems } },
  }, async (request) => {
    const row = await deactivateKey(db, feed, request.params.key_id, ownerScope(request.principal));
    if (!row) throw notFound();
    return record(row);
  });

  app.post<{ Params: Static<typeof KeyParams>; Body: Static<typeof RotateBody> | undefined }>('/api/v1/keys/:key_id/rotate', {
    config: { scope: 'keys:write' },
    preValidation: async (request: FastifyRequest) => {
      request.body ??= {};
    },
    schema: { tags: ['keys'], summary: 'Rotate an API key: a new key now, the old one expires after the grace period', params: KeyParams, body: RotateBody, response: { 201: CreatedKey, 409: ProblemSchema, ...problems } },
  }, async (request, reply) => {
    const grace = request.body?.grace_period_seconds ?? 86400;
    const outcome = await rotateKey(db, feed, request.params.key_id, ownerScope(request.principal), grace);
    if (outcome.kind === 'not_found') throw notFound();
    if (outcome.kind === 'conflict') throw new ApiError(409, 'conflict', 'Only an active key can be rotated.');
    reply.code(201).header('location', `/api/v1/keys/${outcome.row.id}`);
    return { ...record(outcome.row), key: outcome.key };
  });
}
