// Request and response schemas of /api/v1/webhooks.
import { Type } from 'typebox';
import { PATTERN_MESSAGE, StringEnum } from '../http/validation.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookRow } from './repository.ts';
import type { DeliveryView } from './delivery-repository.ts';

export const WebhookRecord = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.Union([Type.String(), Type.Null()]),
    owner_client_id: Type.String(),
    environment: StringEnum(['live', 'test'] as const, {
      description: 'the environment whose events it receives: that of the principal that created it',
    }),
    created_at: Type.String({ format: 'date-time' }),
    consecutive_failures: Type.Integer({ description: 'failed attempts in a row; a success resets it' }),
    paused_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'while set, the endpoint failed too often in a row and its deliveries wait (circuit breaker); they keep their attempts, and a manual retry lets one through at once',
    }),
  },
  { $id: 'Webhook' },
);

export const CreatedWebhook = Type.Intersect([
  WebhookRecord,
  Type.Object({ secret: Type.String({ description: 'whsec_…: the signing secret; shown once' }) }),
]);

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    events: Type.Array(StringEnum(WEBHOOK_EVENT_TYPES), {
      minItems: 1,
      maxItems: WEBHOOK_EVENT_TYPES.length,
      uniqueItems: true,
    }),
    description: Type.Optional(
      Type.String({
        maxLength: 500,
        pattern: '^[^\\u0000-\\u001f\\u007f]*$',
        [PATTERN_MESSAGE]: 'must not contain control characters',
      }),
    ),
  },
  { additionalProperties: false },
);

export const DeliveryRecord = Type.Object(
  {
    id: Type.String(),
    webhook_id: Type.String(),
    event_id: Type.String({ description: 'the webhook-id header of every attempt' }),
    event_type: Type.String(),
    status: StringEnum(['pending', 'succeeded', 'failed'] as const),
    attempts: Type.Integer(),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()], {
      description:
        'why the last attempt failed, as a category only: timeout, refused, dns, tls, connection, http_<status>, blocked (the address is not allowed), secret_unavailable, invalid_delivery',
    }),
    delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookDelivery' },
);

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function toWebhookRecord(row: WebhookRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events.split(' ').filter(Boolean),
    description: row.description,
    owner_client_id: row.owner_client_id,
    environment: row.environment === 'test' ? ('test' as const) : ('live' as const),
    created_at: iso(row.created_at)!,
    consecutive_failures: Number(row.consecutive_failures),
    paused_until: Number(row.paused_until) > Date.now() ? iso(row.paused_until) : null,
  };
}

export function toDeliveryRecord(row: DeliveryView) {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status as 'pending' | 'succeeded' | 'failed',
    attempts: Number(row.attempts),
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    last_attempt_at: iso(row.last_attempt_at),
    last_status_code: row.last_status_code === null ? null : Number(row.last_status_code),
    last_error: row.last_error,
    delivered_at: iso(row.delivered_at),
    created_at: iso(row.created_at)!,
  };
}
