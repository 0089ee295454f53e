// People over HTTP (docs/api.md, "People"): users by invitation, signing in to a console session
// or for an access token, signing out, and who the caller is. Login and accepting an invitation
// are public (they check their own credentials); the rest declare their scope and role.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../store/db.ts';
import { ApiError, ProblemSchema } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';
import { defineRoute, NoContent, type RouteDefinition } from '../http/route.ts';
import { actorOf, type Principal } from '../lib/principal.ts';
import { PERSON_ROLES } from '../lib/person-roles.ts';
import { limitSource } from '../lib/source.ts';
import { recordAudit } from '../audit-log/repository.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.ts';
import { listUsers, revokeSession, userById } from './repository.ts';
import { acceptInvitation, changeUser, checkLogin, inviteUser, PeopleError, userView } from './service.ts';
import {
  clearedSessionCookie,
  openSession,
  personPrincipal,
  resolveSession,
  sessionCookie,
  sessionToken,
} from './sessions.ts';
import { rotateCsrf } from './csrf.ts';

const tags = ['people'];
const Role = StringEnum(PERSON_ROLES);
const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Role,
  status: StringEnum(['invited', 'active', 'deactivated'] as const),
  created_at: Type.String({ format: 'date-time' }),
});
const Invited = Type.Object({
  ...UserSchema.properties,
  invitation: Type.Object({
    url: Type.String(),
    token: Type.String(),
    expires_at: Type.String({ format: 'date-time' }),
  }),
});
const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
const Password = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
const Name = Type.String({ minLength: 1, maxLength: 120, pattern: '^[^\\p{Cc}]*$' });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const problems = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema, 409: ProblemSchema };
const admin = (scope: 'users:read' | 'users:write') =>
  `Requires the \`${scope}\` scope and role admin (an API key must have been issued with it).`;

function mapPeopleError(err: unknown, reply?: FastifyReply): never {
  if (!(err instanceof PeopleError)) throw err;
  if (err.kind === 'conflict') throw new ApiError(409, 'conflict', err.message);
  if (err.kind === 'not_found') throw new ApiError(404, 'not_found', err.message);
  if (err.kind === 'invalid_invitation')
    throw new ApiError(400, 'validation_failed', err.message, { errors: [{ field: 'token', message: err.message }] });
  if (err.kind === 'locked') {
    const seconds = String(Math.max(1, Math.ceil(((err.retryAt ?? Date.now()) - Date.now()) / 1000)));
    reply?.header('retry-after', seconds);
    throw new ApiError(429, 'rate_limited', err.message, { headers: { 'retry-after': seconds } });
  }
  throw new ApiError(401, 'unauthenticated', err.message);
}

interface PeopleRouteOptions {
  store: Store;
  publicUrl: string | undefined;
  createRateLimit: FastifyInstance['createRateLimit'];
  /** sign-in attempts a minute from one address (any account) */
  loginsPerMinute: number;
  /** a person's access token (`"token": true`) */
  issueToken: (principal: Principal, origin: string | undefined) => Promise<{ token: string; expiresIn: number }>;
}

const secure = (request: FastifyRequest) => request.protocol === 'https';
const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

export function peopleRoutes(options: PeopleRouteOptions): RouteDefinition[] {
  const { store } = options;
  const { db } = store;
  const perIp = options.createRateLimit({
    max: options.loginsPerMinute,
    timeWindow: 60_000,
    keyGenerator: (r) => `login-ip:${limitSource(r.ip)}`,
  });
  const invitationUrl = (request: FastifyRequest, token: string) =>
    `${options.publicUrl ?? origin(request)}/console/?invitation=${token}`;

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/users',
      config: { scope: 'users:write', role: 'admin', operationId: 'inviteUser' },
      schema: {
        tags,
        summary: 'Invite a person: a one-time invitation link and token',
        description: admin('users:write'),
        body: Type.Object({ email: Email, name: Name, role: Role }, { additionalProperties: false }),
        response: { 201: Invited, ...problems },
      },
      handler: async (request, reply) => {
        const { user, token, expiresAt } = await inviteUser(store, actorOf(request.principal), request.body).catch(
          (err: unknown) => mapPeopleError(err),
        );
        reply.code(201).header('location', `/api/v1/users/${user.id}`);
        return {
          ...user,
          invitation: { url: invitationUrl(request, token), token, expires_at: new Date(expiresAt).toISOString() },
        };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/users',
      config: { scope: 'users:read', role: 'admin', operationId: 'listUsers' },
      schema: {
        tags,
        summary: 'The people of this deployment',
        description: admin('users:read'),
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
            cursor: Type.Optional(Type.String({ maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ data: Type.Array(UserSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
          ...problems,
        },
      },
      handler: async (request) => {
        const limit = request.query.limit ?? 50;
        const rows = await listUsers(db, request.query.cursor, limit + 1);
        const page = rows.slice(0, limit);
        return { data: page.map(userView), next_cursor: rows.length > limit ? page[page.length - 1]!.id : null };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/users/:id',
      config: { scope: 'users:read', role: 'admin', operationId: 'getUser' },
      schema: {
        tags,
        summary: 'One person',
        description: admin('users:read'),
        params: IdParams,
        response: { 200: UserSchema, ...problems },
      },
      handler: async (request) => {
        const row = await userById(db, request.params.id);
        if (!row) throw new ApiError(404, 'not_found', 'No such user.');
        return userView(row);
      },
    }),

    defineRoute({
      method: 'PATCH',
      url: '/api/v1/users/:id',
      config: { scope: 'users:write', role: 'admin', operationId: 'changeUser' },
      schema: {
        tags,
        summary: "Change a person's role, name or status (deactivated ends their sessions)",
        description: admin('users:write'),
        params: IdParams,
        body: Type.Object(
          {
            role: Type.Optional(Role),
            name: Type.Optional(Name),
            status: Type.Optional(StringEnum(['active', 'deactivated'] as const)),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: UserSchema, ...problems },
      },
      handler: async (request) =>
        changeUser(store, actorOf(request.principal), request.params.id, request.body).catch((err: unknown) =>
          mapPeopleError(err),
        ),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/users/:id',
      config: { scope: 'users:write', role: 'admin', operationId: 'deactivateUser' },
      schema: {
        tags,
        summary: 'Deactivate a person and end their sessions (the record stays, for the audit log)',
        description: admin('users:write'),
        params: IdParams,
        response: { 200: UserSchema, ...problems },
      },
      handler: async (request) =>
        changeUser(store, actorOf(request.principal), request.params.id, { status: 'deactivated' }).catch(
          (err: unknown) => mapPeopleError(err),
        ),
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/auth/invitations/accept',
      config: { operationId: 'acceptInvitation' },
      schema: {
        tags,
        summary: 'Accept an invitation: set the password (12 characters or more)',
        body: Type.Object(
          { token: Type.String({ minLength: 1, maxLength: 200 }), password: Password },
          { additionalProperties: false },
        ),
        response: { 200: UserSchema, 429: ProblemSchema, ...problems },
      },
      handler: async (request, reply) => {
        await throttle(request, reply);
        return acceptInvitation(store, request.body.token, request.body.password).catch((err: unknown) =>
          mapPeopleError(err),
        );
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/auth/login',
      config: { operationId: 'login' },
      schema: {
        tags,
        summary: 'Sign in: a console session (cookie and CSRF token), or with "token": true an access token',
        body: Type.Object(
          {
            email: Type.String({ minLength: 1, maxLength: 254 }),
            password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }),
            token: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Union([
            Type.Object({
              user: UserSchema,
              csrf_token: Type.String(),
              expires_at: Type.String({ format: 'date-time' }),
            }),
            Type.Object({
              access_token: Type.String(),
              token_type: Type.Literal('Bearer'),
              expires_in: Type.Integer(),
            }),
          ]),
          429: ProblemSchema,
          ...problems,
        },
      },
      handler: async (request, reply) => {
        await throttle(request, reply);
        const row = await checkLogin(store, request.body.email, request.body.password).catch((err: unknown) =>
          mapPeopleError(err, reply),
        );
        const user = userView(row);
        const actor = { type: 'user' as const, id: user.id, name: user.name };
        if (request.body.token === true) {
          const issued = await options.issueToken(personPrincipal(user), origin(request));
          await recordAudit(store, {
            environment: 'live',
            actor,
            action: 'user.login',
            target: `user:${user.id}`,
            after: { via: 'token' },
          });
          return { access_token: issued.token, token_type: 'Bearer' as const, expires_in: issued.expiresIn };
        }
        const session = await openSession(db, user.id, Date.now());
        await recordAudit(store, {
          environment: 'live',
          actor,
          action: 'user.login',
          target: `user:${user.id}`,
          after: { via: 'session' },
        });
        reply.header('set-cookie', sessionCookie(session.token, session.expiresAt, secure(request)));
        reply.header('cache-control', 'no-store');
        return { user, csrf_token: session.csrf, expires_at: new Date(session.expiresAt).toISOString() };
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/auth/logout',
      config: { operationId: 'logout' },
      schema: {
        tags,
        summary: 'End this console session (and clear its cookie)',
        response: { 204: NoContent, 403: ProblemSchema },
      },
      handler: async (request, reply) => {
        const token = sessionToken(request);
        // the CSRF check applies: a cross-site page cannot sign a person out either
        const found = token ? await resolveSession(db, request, token) : undefined;
        if (found) {
          await revokeSession(db, found.sessionId, Date.now());
          await recordAudit(store, {
            environment: 'live',
            actor: actorOf(found.principal),
            action: 'user.logout',
            target: `user:${found.principal.id}`,
          });
        }
        reply.header('set-cookie', clearedSessionCookie(secure(request)));
        return reply.code(204).send();
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/auth/session',
      config: { scope: 'audit:read', operationId: 'currentSession' },
      schema: {
        tags,
        summary: 'Who is calling: the actor, role and scopes (a console session also gets a fresh CSRF token)',
        description: 'Requires the `audit:read` scope (an API key must have been issued with it).',
        response: {
          200: Type.Object({
            actor: Type.Object({
              type: StringEnum(['user', 'client'] as const),
              id: Type.String(),
              name: Type.String(),
            }),
            role: Type.String(),
            scopes: Type.Array(Type.String()),
            csrf_token: Type.Optional(Type.String()),
          }),
          ...problems,
        },
      },
      handler: async (request) => {
        const p = request.principal;
        const token = sessionToken(request);
        const csrf = p.kind === 'user' && token ? await rotateCsrf(db, token) : undefined;
        return {
          actor: actorOf(p),
          role: p.personRole ?? p.role,
          scopes: [...p.scopes].sort(),
          ...(csrf ? { csrf_token: csrf } : {}),
        };
      },
    }),
  ];

  async function throttle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const limit = await perIp(request);
    if (limit.isAllowed || !limit.isExceeded) return;
    const reset = String(Math.max(1, limit.ttlInSeconds));
    reply.header('retry-after', reset);
    throw new ApiError(429, 'rate_limited', `Too many sign-in attempts from this address; retry in ${reset} s.`, {
      headers: { 'retry-after': reset },
    });
  }
}
