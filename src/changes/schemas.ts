// Four eyes on the wire (docs/api.md, "Four eyes"): the setting, and a change waiting for a second
// person. The kinds of change and the areas of the setting they fall under are fixed here.
import { Type, type Static } from 'typebox';
import { StringEnum } from '../http/validation.ts';
import type { Scope } from '../lib/principal.ts';
import { ActorSchema, nullableActor } from '../audit-log/schemas.ts';

/** What four eyes may hold back, as PUT /api/v1/settings names it. */
export const FOUR_EYES_AREAS = ['rules', 'policies', 'lists'] as const;
export type FourEyesArea = (typeof FOUR_EYES_AREAS)[number];

const CHANGE_KINDS = ['rule_activation', 'policy_activation', 'list_deletion'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export const AREA_OF: Record<ChangeKind, FourEyesArea> = {
  rule_activation: 'rules',
  policy_activation: 'policies',
  list_deletion: 'lists',
};

/**
 * The scope the change's own route needs: deciding on a change needs it too, so approving is
 * never a way around it (the route of the decision declares rules:write; a policy's needs policy:write as well).
 */
export const SCOPE_OF: Record<ChangeKind, Scope> = {
  rule_activation: 'rules:write',
  policy_activation: 'policy:write',
  list_deletion: 'rules:write',
};

const CHANGE_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];

/** A pending change lives this long; then it is expired and can no longer be approved. */
export const PENDING_TTL_MS = 72 * 3600 * 1000;

export const SettingsSchema = Type.Object(
  {
    four_eyes: Type.Array(StringEnum(FOUR_EYES_AREAS), {
      uniqueItems: true,
      maxItems: FOUR_EYES_AREAS.length,
      description:
        'what needs a second person: rules (activating a rule), policies (activating a policy), lists (deleting a list)',
    }),
  },
  { additionalProperties: false },
);

/** The setting as read (GET and PUT answer it): the areas, and who last changed them and when. */
export const SettingsAnswerSchema = Type.Object({
  four_eyes: SettingsSchema.properties.four_eyes,
  updated_by: nullableActor('who last changed the setting, named as now; null if no one has since 2026-11-29'),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'when the setting last changed; null if it has not since 2026-11-29',
  }),
});

export const ChangeSchema = Type.Object({
  id: Type.String({ description: 'chg_<26-char ULID>' }),
  kind: StringEnum(CHANGE_KINDS),
  status: StringEnum(CHANGE_STATUSES),
  target: Type.String({ description: 'what the change acts on: rule:<id>, policy:<version> or list:<name>' }),
  payload: Type.Unknown({ description: 'what approving applies: the fields of the request that asked for it' }),
  requested_by: ActorSchema,
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time', description: 'after this, the change can no longer be approved' }),
  decided_by: Type.Union([ActorSchema, Type.Null()]),
  decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  note: Type.Union([Type.String(), Type.Null()], { description: "the decider's note" }),
});
export type ChangeView = Static<typeof ChangeSchema>;

export const ChangeQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(CHANGE_STATUSES)),
    kind: Type.Optional(StringEnum(CHANGE_KINDS)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ pattern: '^chg_[0-9A-HJKMNP-TV-Z]{26}$' })),
  },
  { additionalProperties: false },
);

export const ChangeParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'chg_<26-char ULID>' }) });

export const DecideBody = Type.Object(
  {
    note: Type.Optional(
      Type.String({ maxLength: 500, description: 'why (kept with the change and in the audit log)' }),
    ),
  },
  { additionalProperties: false },
);
