// Signing in (docs/api.md, "People"): accepting an invitation, the login to a console session or
// an access token (with the second factor where a person has one), signing out, and who is calling.
// Login and accepting are public: they check their own credentials, behind a per-address limit.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError, ProblemSchema } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';
import { defineRoute, NoContent, type RouteDefinition } from '../http/route.ts';
import { actorOf } from '../lib/principal.ts';
import { limitSource } from '../lib/source.ts';
import { recordAudit } from '../audit-log/repository.ts';
import { revokeSession } from './repository.ts';
import { acceptInvitation, checkLogin, userView } from './service.ts';
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
            }),
          ]),
          429: ProblemSchema,
          ...problems,
        },
      },
      handler: async (request, reply) => {
        await throttle(request, reply);
        const { totp, recovery_code } = request.body;
        const row = await checkLogin(store, request.body.email, request.body.password, async (user) =>
          totp === undefined && recovery_code === undefined
            ? 'missing'
            : (await checkSecondFactor(db, user, { totp, recovery_code }, options.encryption))
              ? 'ok'
              : 'wrong',
        ).catch((err: unknown) => mapPeopleError(err, reply));
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
