// What the people routes share (docs/api.md, "People"): the user's schema, the problems they
// answer with, and how a PeopleError becomes one.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../store/db.ts';
import { ApiError, ProblemSchema } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';
import type { Principal } from '../lib/principal.ts';
import { PERSON_ROLES } from '../lib/person-roles.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.ts';
import { PeopleError } from './service.ts';

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
export const problems = {
  400: ProblemSchema,
  401: ProblemSchema,
  403: ProblemSchema,
  404: ProblemSchema,
  409: ProblemSchema,
};
export const admin = (scope: 'users:read' | 'users:write') =>
  `Requires the \`${scope}\` scope and role admin (an API key must have been issued with it).`;

export function mapPeopleError(err: unknown, reply?: FastifyReply): never {
  if (!(err instanceof PeopleError)) throw err;
  if (err.kind === 'conflict') throw new ApiError(409, 'conflict', err.message);
  if (err.kind === 'not_found') throw new ApiError(404, 'not_found', err.message);
  if (err.kind === 'invalid_invitation')
    throw new ApiError(400, 'validation_failed', err.message, { errors: [{ field: 'token', message: err.message }] });
  if (err.kind === 'second_factor_required')
    throw new ApiError(401, 'unauthenticated', err.message, {
      errors: [{ field: 'totp', message: 'required: send the six-digit code, or a recovery_code' }],
    });
  if (err.kind === 'locked') {
    const seconds = String(Math.max(1, Math.ceil(((err.retryAt ?? Date.now()) - Date.now()) / 1000)));
    reply?.header('retry-after', seconds);
    throw new ApiError(429, 'rate_limited', err.message, { headers: { 'retry-after': seconds } });
  }
  throw new ApiError(401, 'unauthenticated', err.message);
}

export interface PeopleRouteOptions {
  store: Store;
  publicUrl: string | undefined;
  createRateLimit: FastifyInstance['createRateLimit'];
  /** sign-in attempts a minute from one address (any account) */
  loginsPerMinute: number;
  /** seals and opens the second factor's secrets */
  encryption: KeyEncryption;
  /** a person's access token (`"token": true`) */
  issueToken: (principal: Principal, origin: string | undefined) => Promise<{ token: string; expiresIn: number }>;
}

export const secure = (request: FastifyRequest) => request.protocol === 'https';
export const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;
