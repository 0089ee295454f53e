// Signing in (docs/api.md, "People"): accepting an invitation, the login to a console session or
// an access token (with the second factor where a person has one), signing out, and who is calling.
// Login and accepting are public: they check their own credentials, behind a per-address limit on
// failures (docs/api.md, "People": a desk signing many people in from one office address is never
// refused for succeeding).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError, problemResponses } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';
import { defineRoute, NoContent, type RouteDefinition } from '../http/route.ts';
import { actorOf } from '../lib/principal.ts';
import { LRUCache } from 'lru-cache';
import { limitSource } from '../lib/source.ts';
import { PERSON_ROLES, personScopes } from '../lib/person-roles.ts';
import { recordAudit } from '../audit-log/repository.ts';
import { revokeSession } from './repository.ts';
import { acceptInvitation, checkLogin, namedUserView } from './service.ts';
import {
  clearedSessionCookie,
  openSession,
  personPrincipal,
  resolveSession,
  sessionCookie,
  sessionToken,
} from './sessions.ts';
import { rotateCsrf } from './csrf.ts';
import { checkSecondFactor } from './totp.ts';
import { PASSWORD_MAX } from './passwords.ts';
import {
  mapPeopleError,
  origin,
  Password,
  problems,
  secure,
  tags,
  UserSchema,
  type PeopleRouteOptions,
} from './route-schemas.ts';

export function signInRoutes(options: PeopleRouteOptions): RouteDefinition[] {
  const { store } = options;
  const { db } = store;
  /** addresses over the failure limit → until when (bounded: a flood of addresses evicts the oldest) */
  const blocked = new LRUCache<string, number>({ max: 10_000 });
  const perIp = options.createRateLimit({
    max: options.loginsPerMinute,
    timeWindow: 60_000,
    keyGenerator: (r) => `login-ip:${limitSource(r.ip)}`,
  });

  return [
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
        response: { 200: UserSchema, ...problemResponses(429), ...problems },
      },
      handler: async (request, reply) => {
        refuseIfBlocked(request, reply);
        return acceptInvitation(store, request.body.token, request.body.password, options.passwordCost).catch(
          async (err: unknown) => {
            await countFailure(request, reply);
            return mapPeopleError(err);
          },
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
            totp: Type.Optional(Type.String({ pattern: '^[0-9]{6}$' })),
            recovery_code: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
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
              scopes: Type.Array(Type.String(), { description: "the person's scopes, from their role" }),
              role: StringEnum(PERSON_ROLES, { description: "the person's role" }),
              scope: Type.String({ description: 'the scopes, space-separated (RFC 6749 §5.1)' }),
            }),
          ]),
          ...problemResponses(429),
          ...problems,
        },
      },
      handler: async (request, reply) => {
        refuseIfBlocked(request, reply);
        const { totp, recovery_code } = request.body;
        const row = await checkLogin(
          store,
          request.body.email,
          request.body.password,
          options.passwordCost,
          async (user) =>
            totp === undefined && recovery_code === undefined
              ? 'missing'
              : (await checkSecondFactor(db, user, { totp, recovery_code }, options.encryption))
                ? 'ok'
                : 'wrong',
        ).catch(async (err: unknown) => {
          await countFailure(request, reply);
          return mapPeopleError(err, reply);
        });
        const user = await namedUserView(db, row);
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
          // As the token endpoint answers (docs/api.md, "Tokens"): never cached.
          reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
          const scopes = personScopes(user.role);
          return {
            access_token: issued.token,
            token_type: 'Bearer' as const,
            expires_in: issued.expiresIn,
            scopes,
            role: user.role,
            scope: scopes.join(' '),
          };
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
        response: { 204: NoContent, ...problemResponses(403) },
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

  /**
   * Only failures count towards the address's limit. Once over it, the address is refused here
   * until its window ends, right password or not (the failure that crossed it says when); another
   * instance refuses it at its own next failure, as the count is shared where the limiter's store is.
   */
  function refuseIfBlocked(request: FastifyRequest, reply: FastifyReply): void {
    const until = blocked.get(limitSource(request.ip));
    if (until === undefined || until <= Date.now()) return;
    tooMany(reply, Math.ceil((until - Date.now()) / 1000));
  }

  async function countFailure(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const limit = await perIp(request);
    if (limit.isAllowed || !limit.isExceeded) return;
    const seconds = Math.max(1, limit.ttlInSeconds);
    blocked.set(limitSource(request.ip), Date.now() + seconds * 1000);
    tooMany(reply, seconds);
  }

  function tooMany(reply: FastifyReply, seconds: number): never {
    const reset = String(Math.max(1, seconds));
    reply
      .header('retry-after', reset)
      .header('ratelimit-limit', String(options.loginsPerMinute))
      .header('ratelimit-remaining', '0')
      .header('ratelimit-reset', reset);
    throw new ApiError('rate_limited', `Too many failed sign-ins from this address; retry in ${reset} s.`, {
      headers: { 'retry-after': reset },
    });
  }
}
