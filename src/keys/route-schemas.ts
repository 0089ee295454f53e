// The keys API's schemas (docs/api.md, "API keys") and the checks of an id and a name the schemas leave open.
import { Type } from 'typebox';
import { problemResponses } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';
import { ENVIRONMENTS, ROLES, SCOPES } from '../lib/principal.ts';
import { KEY_STATUSES } from './repository.ts';
import { nullableActor } from '../audit-log/schemas.ts';

export const KeyRecord = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    scopes: Type.Array(Type.String()),
    role: Type.String(),
    environment: Type.String(),
    status: StringEnum(KEY_STATUSES),
    owner_client_id: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    deactivated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_by: nullableActor(
      'who created the key (a rotation: who rotated its predecessor), named as now; null for keys made before 2026-11-29',
    ),
  },
  { $id: 'ApiKey' },
);

export const CreatedKey = Type.Intersect([
  KeyRecord,
  Type.Object({ key: Type.String({ description: 'the secret; shown once' }) }),
]);

export const ListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(KEY_STATUSES)),
    environment: Type.Optional(StringEnum(ENVIRONMENTS)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ pattern: '^key_[0-9A-HJKMNP-TV-Z]{26}$' })),
  },
  { additionalProperties: false },
);

export const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Array(StringEnum(SCOPES), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    role: Type.Optional(StringEnum(ROLES)),
    environment: Type.Optional(
      StringEnum(ENVIRONMENTS, {
        description: "default: the caller's environment; a test caller may create only test keys",
      }),
    ),
    expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export const RotateBody = Type.Object(
  {
    grace_period_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 604800 })),
  },
  { additionalProperties: false },
);

// Any string: an id that cannot exist is as unknown as one that does not (404, not 400).
export const KeyParams = Type.Object({ key_id: Type.String({ description: 'key_<26-char ULID>' }) });
export const KEY_ID = /^key_[0-9A-HJKMNP-TV-Z]{26}$/;
// C0 controls and DEL: invisible in listings and logs, and PostgreSQL text cannot hold NUL.
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

export const problems = problemResponses(400, 401, 403, 404, 429);
