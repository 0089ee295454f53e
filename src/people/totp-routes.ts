// A person's second factor over HTTP (docs/api.md, "People"): whether it is on, enrol (a secret to
// scan), confirm with a first code (the recovery codes, once), and turn it off with a code. Only a
// person has one: a machine's credentials get 403. Turning it on and off is audited.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/problem.ts';
import { defineRoute, NoContent, type RouteDefinition } from '../http/route.ts';
import { actorOf } from '../lib/principal.ts';
import { recordAudit } from '../audit-log/repository.ts';
import { userById, type UserRow } from './repository.ts';
import { checkSecondFactor, confirmTotp, disableTotp, enrollTotp } from './totp.ts';
import { problems, tags, type PeopleRouteOptions } from './route-schemas.ts';

const Code = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$' }) }, { additionalProperties: false });
const description = 'Requires the `audit:read` scope (every person holds it); a person only, not a machine client.';

export function totpRoutes(options: PeopleRouteOptions): RouteDefinition[] {
  const { store, encryption } = options;
  const { db } = store;

  async function person(request: FastifyRequest): Promise<UserRow> {
    const p = request.principal;
    const row = p.kind === 'user' ? await userById(db, p.id) : undefined;
    if (!row) throw new ApiError('forbidden', 'Only a person has a second factor.');
    return row;
  }
  const audit = (request: FastifyRequest, action: string) =>
    recordAudit(store, {
      environment: 'live',
      actor: actorOf(request.principal),
      action,
      target: `user:${request.principal.id}`,
    });

  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/auth/totp',
      config: { scope: 'audit:read', operationId: 'getTotp' },
      schema: {
        tags,
        summary: "Whether the caller's second factor is on (the console's account page), and since when",
        description,
        response: {
          200: Type.Object({
            enabled: Type.Boolean(),
            enabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
            recovery_codes_left: Type.Integer({ description: 'unused recovery codes; 0 when the factor is off' }),
          }),
          ...problems,
        },
      },
      handler: async (request) => {
        const row = await person(request);
        const on = row.totp_enabled_at !== null;
        return {
          enabled: on,
          enabled_at: on ? new Date(Number(row.totp_enabled_at)).toISOString() : null,
          recovery_codes_left: on ? (JSON.parse(row.recovery_codes ?? '[]') as unknown[]).length : 0,
        };
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/auth/totp',
      config: { scope: 'audit:read', operationId: 'enrollTotp' },
      schema: {
        tags,
        summary: 'Start a second factor: a TOTP secret and its otpauth:// link, to confirm with a first code',
        description,
        response: { 200: Type.Object({ secret: Type.String(), otpauth_url: Type.String() }), ...problems },
      },
      handler: async (request) => {
        const row = await person(request);
        if (row.totp_enabled_at !== null) throw new ApiError('conflict', 'The second factor is already on.');
        return enrollTotp(db, row, encryption);
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/auth/totp/confirm',
      config: { scope: 'audit:read', operationId: 'confirmTotp' },
      schema: {
        tags,
        summary: 'Confirm the second factor with a first code: it is on, and the ten recovery codes are shown once',
        description,
        body: Code,
        response: { 200: Type.Object({ recovery_codes: Type.Array(Type.String()) }), ...problems },
      },
      handler: async (request) => {
        const codes = await confirmTotp(db, await person(request), request.body.code, encryption);
        if (!codes)
          throw new ApiError('validation_failed', 'That code does not match: try the current one.', {
            errors: [{ field: 'code', message: 'does not match the secret being enrolled' }],
          });
        await audit(request, 'user.second_factor_on');
        return { recovery_codes: codes };
      },
    }),

    defineRoute({
      method: 'DELETE',
      url: '/api/v1/auth/totp',
      config: { scope: 'audit:read', operationId: 'disableTotp' },
      schema: {
        tags,
        summary: 'Turn the second factor off, with a current code',
        description,
        body: Code,
        response: { 204: NoContent, ...problems },
      },
      handler: async (request, reply) => {
        const row = await person(request);
        if (
          row.totp_enabled_at === null ||
          !(await checkSecondFactor(db, row, { totp: request.body.code }, encryption))
        )
          throw new ApiError('validation_failed', 'That code does not match.', {
            errors: [{ field: 'code', message: 'does not match' }],
          });
        await disableTotp(db, row.id);
        await audit(request, 'user.second_factor_off');
        return reply.code(204).send();
      },
    }),
  ];
}
