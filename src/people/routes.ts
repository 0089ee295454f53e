// People over HTTP (docs/api.md, "People"): users by invitation, their roles, deactivation. The
// sign-in routes are sign-in-routes.ts, the second factor's totp-routes.ts; this is the table's entry.
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { actorOf } from '../lib/principal.ts';
import { listUsers, userById } from './repository.ts';
import { changeUser, inviteUser, inviterId, namedUserView, userViewWith } from './service.ts';
import { resolveActors } from '../audit-log/actors.ts';
import {
  admin,
  IdParams,
  Invited,
  mapPeopleError,
  Name,
  origin,
  problems,
  Role,
  tags,
  UserSchema,
  Email,
  type PeopleRouteOptions,
} from './route-schemas.ts';
import { signInRoutes } from './sign-in-routes.ts';
import { totpRoutes } from './totp-routes.ts';

export function peopleRoutes(options: PeopleRouteOptions): RouteDefinition[] {
  const { store } = options;
  const { db } = store;
  const invitationUrl = (request: FastifyRequest, token: string) =>
    `${options.publicUrl ?? origin(request)}/console/?invitation=${token}`;

  return [
    ...signInRoutes(options),
    ...totpRoutes(options),
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
        const actors = await resolveActors(db, page.map(inviterId));
        return {
          data: page.map((row) => userViewWith(row, actors)),
          next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
        };
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
        if (!row) throw new ApiError('not_found', 'No such user.');
        return namedUserView(db, row);
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
            second_factor: Type.Optional(Type.Literal('off', { description: 'reset a lost second factor' })),
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
  ];
}
