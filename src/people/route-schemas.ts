// What the people routes share (docs/api.md, "People"): the user's schema, the problems they
// answer with, and how a PeopleError becomes one.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../store/db.ts';
import { problemResponses } from '../http/problem.ts';
import { Conflict, Invalid, Limited, NotFound, Unauthenticated } from '../lib/domain-errors.ts';
import { StringEnum } from '../http/validation.ts';
import type { Principal } from '../lib/principal.ts';
import { PERSON_ROLES } from '../lib/person-roles.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.ts';
import { nullableActor } from '../audit-log/schemas.ts';
import { LOCKOUT_FAILURES, PeopleError } from './service.ts';

export const tags = ['people'];
export const Role = StringEnum(PERSON_ROLES);
export const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Role,
  status: StringEnum(['invited', 'active', 'deactivated'] as const),
  second_factor: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  invited_by: nullableActor(
    'who invited them, named as now (the command line: `vouch cli`); null for a person single sign-on created',
  ),
});
export const Invited = Type.Object({
  ...UserSchema.properties,
  invitation: Type.Object({
    url: Type.String(),
    token: Type.String(),
    expires_at: Type.String({ format: 'date-time' }),
  }),
});
export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
export const Password = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
export const Name = Type.String({ minLength: 1, maxLength: 120, pattern: '^[^\\p{Cc}]*$' });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const problems = problemResponses(400, 401, 403, 404, 409);
export const admin = (scope: 'users:read' | 'users:write') =>
  `Requires the \`${scope}\` scope and role admin (an API key must have been issued with it).`;

/** A 401 names how to authenticate (RFC 9110 §11.6.1), as every other 401 of the API does. */
const CHALLENGE = 'Bearer realm="vouch"';

export function mapPeopleError(err: unknown, reply?: FastifyReply): never {
  if (!(err instanceof PeopleError)) throw err;
  if (err.kind === 'conflict') throw new Conflict(err.message);
  if (err.kind === 'not_found') throw new NotFound(err.message);
  if (err.kind === 'invalid_invitation') throw new Invalid(err.message, [{ field: 'token', message: err.message }]);
  if (err.kind === 'second_factor_required')
    throw new Unauthenticated(err.message, {
      errors: [{ field: 'totp', message: 'required: send the six-digit code, or a recovery_code' }],
      challenge: CHALLENGE,
    });
  if (err.kind === 'locked') {
    const seconds = String(Math.max(1, Math.ceil(((err.retryAt ?? Date.now()) - Date.now()) / 1000)));
    // A 429 carries RateLimit-* as every other does (docs/api.md, "Errors"): the account's allowance is spent.
    reply
      ?.header('retry-after', seconds)
      .header('ratelimit-limit', String(LOCKOUT_FAILURES))
      .header('ratelimit-remaining', '0')
      .header('ratelimit-reset', seconds);
    throw new Limited(err.message, seconds);
  }
  throw new Unauthenticated(err.message, { challenge: CHALLENGE });
}

export interface PeopleRouteOptions {
  store: Store;
  publicUrl: string | undefined;
  createRateLimit: FastifyInstance['createRateLimit'];
  /** sign-in attempts a minute from one address (any account) */
  loginsPerMinute: number;
  /** scrypt's work factor for passwords, log2 N (VOUCH_PASSWORD_COST) */
  passwordCost: number;
  /** seals and opens the second factor's secrets */
  encryption: KeyEncryption;
  /** a person's access token (`"token": true`) */
  issueToken: (principal: Principal, origin: string | undefined) => Promise<{ token: string; expiresIn: number }>;
}

export const secure = (request: FastifyRequest) => request.protocol === 'https';
export const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;
