// Row types of the webhook tables (008_webhooks, 010_webhook_isolation): subscriptions, the
// outbox, fan-outs waiting to be expanded, deliveries and their attempts. Times are epoch ms.
import type { Generated } from 'kysely';

/** Webhook subscriptions (008_webhooks); the secret is sealed under the key-encryption key. */
export interface WebhooksTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  id: string;
  owner_client_id: string;
  url: string;
  /** event types, space-separated */
  events: string;
  description: string | null;
  secret: string;
  created_at: number;
  /** failed attempts in a row (010_webhook_isolation); reset by a success */
  consecutive_failures: Generated<number>;
  /** the circuit breaker: no delivery is attempted before then (0: closed) */
  paused_until: Generated<number>;
}

/** One ingest request's entity.flagged facts, expanded into the outbox by the worker (010). */
export interface WebhookFanoutsTable {
  id: string;
  environment: string;
  owner_client_id: string;
  type: string;
  /** JSON: the request's flag facts */
  facts: string;
  /** JSON: the expanded event payloads, once computed */
  plan: string | null;
  /** how many events of the plan are already in the outbox */
  progress: Generated<number>;
  lease_until: Generated<number>;
  created_at: number;
}

/** The outbox: one row per event, written in the transaction of the fact it announces. */
export interface WebhookEventsTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  /** the webhook-id header of every delivery of this event */
  id: string;
  type: string;
  /** the client whose fact this is; null for deployment-wide facts (policy.activated) */
  owner_client_id: string | null;
  data: string;
  created_at: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  /** pending | succeeded | failed */
  status: string;
  attempts: number;
  next_attempt_at: number;
  /** a worker holds the delivery until then (0: free) */
  lease_until: number;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
}

export interface WebhookAttemptsTable {
  seq: Generated<number>;
  delivery_id: string;
  attempted_at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}
