// Webhook storage: subscriptions, the outbox (enqueueWebhookEvent, called inside the transaction of
// the fact it announces), deliveries with their lease, and the attempt log.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, WebhookDeliveriesTable, WebhooksTable } from '../store/schema.ts';
import type { Dialect } from '../store/db.ts';
import { newId } from '../lib/ids.ts';
import type { Environment } from '../auth/principal.ts';

export const WEBHOOK_EVENT_TYPES = ['decision.high_risk', 'dispute.analyzed', 'entity.flagged', 'entity.erased', 'policy.activated', 'key.deactivated'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export type WebhookRow = WebhooksTable;
export type DeliveryRow = WebhookDeliveriesTable;
type Db = Kysely<Database> | Transaction<Database>;

export interface EnqueueOptions {
  /**
   * The client whose fact this is: only its webhooks receive the event. Omitted (or null) for
   * deployment-wide facts (policy.activated), which every subscriber of the type receives.
   */
  owner?: string | null;
  now?: number;
}

/**
 * Writes an event to the outbox, with one pending delivery per subscribed webhook, inside the
 * caller's transaction: the event exists exactly when the fact does, and survives any restart.
 * Only webhooks of the fact's environment receive it (test mode).
 * Returns the event id (the webhook-id of its deliveries), or undefined when nobody subscribes.
 */
export async function enqueueWebhookEvent(trx: Db, environment: Environment, type: WebhookEventType, data: Record<string, unknown>, options: EnqueueOptions = {}): Promise<string | undefined> {
  const owner = options.owner ?? null;
  const now = options.now ?? Date.now();
  let query = trx.selectFrom('webhooks').select(['id', 'events']).where('environment', '=', environment).where('events', 'like', `%${type}%`);
  if (owner !== null) query = query.where('owner_client_id', '=', owner);
  const subscribers = (await query.execute()).filter((w) => w.events.split(' ').includes(type));
  if (subscribers.length === 0) return undefined;
  const id = newId('msg');
  await trx.insertInto('webhook_events').values({ id, environment, type, owner_client_id: owner, data: JSON.stringify(data), created_at: now }).execute();
  await trx.insertInto('webhook_deliveries').values(subscribers.map((w) => ({
    id: newId('whd'), webhook_id: w.id, event_id: id, status: 'pending', attempts: 0, next_attempt_at: now, lease_until: 0,
    last_attempt_at: null, last_status_code: null, last_error: null, delivered_at: null, created_at: now,
  }))).execute();
  return id;
}

/** Whether any webhook of `owner` subscribes to `type` (lets ingestion skip the work of building events). */
export async function hasSubscribers(db: Db, environment: Environment, type: WebhookEventType, owner: string): Promise<boolean> {
  const rows = await db.selectFrom('webhooks').select('events').where('environment', '=', environment).where('owner_client_id', '=', owner).where('events', 'like', `%${type}%`).execute();
  return rows.some((r) => r.events.split(' ').includes(type));
}

export async function insertWebhook(db: Db, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

/**
 * `owner` undefined: an admin, who sees every webhook of its environment. Never another
 * environment's, admins included: a test key must not manage live subscriptions.
 */
export async function findWebhook(db: Db, environment: Environment, id: string, owner: string | undefined): Promise<WebhookRow | undefined> {
  let query = db.selectFrom('webhooks').selectAll().where('environment', '=', environment).where('id', '=', id);
  if (owner !== undefined) query = query.where('owner_client_id', '=', owner);
  return query.executeTakeFirst();
}

export async function listWebhooks(db: Db, environment: Environment, owner: string | undefined, limit: number, after: string | undefined): Promise<{ rows: WebhookRow[]; more: boolean }> {
  let query = db.selectFrom('webhooks').selectAll().where('environment', '=', environment).orderBy('id', 'desc').limit(limit + 1);
  if (owner !== undefined) query = query.where('owner_client_id', '=', owner);
  if (after !== undefined) query = query.where('id', '<', after);
  const rows = await query.execute();
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}

/** Deletes the webhook and its undelivered deliveries; the log of past ones goes with it. */
export async function deleteWebhook(db: Kysely<Database>, id: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const deliveries = trx.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id);
    await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
    await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
    await trx.deleteFrom('webhooks').where('id', '=', id).execute();
  });
}

export interface DeliveryView extends DeliveryRow {
  event_type: string;
}

/**
 * A webhook's deliveries. `environment` is the webhook's: enqueueing never pairs a webhook with
 * another environment's event, and this read does not rely on it.
 */
export async function listDeliveries(db: Db, environment: Environment, webhookId: string, limit: number, after: string | undefined): Promise<{ rows: DeliveryView[]; more: boolean }> {
  let query = db.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d').select('e.type as event_type').where('e.environment', '=', environment).where('d.webhook_id', '=', webhookId).orderBy('d.id', 'desc').limit(limit + 1);
  if (after !== undefined) query = query.where('d.id', '<', after);
  const rows = await query.execute();
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}

export async function findDelivery(db: Db, environment: Environment, webhookId: string, id: string): Promise<DeliveryView | undefined> {
  return db.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d').select('e.type as event_type').where('e.environment', '=', environment).where('d.webhook_id', '=', webhookId).where('d.id', '=', id).executeTakeFirst();
}

/** Manual retry: due now, whatever its state; false while a worker holds it (in flight). */
export async function scheduleRetry(db: Db, id: string, now = Date.now()): Promise<boolean> {
  const result = await db.updateTable('webhook_deliveries').set({ status: 'pending', next_attempt_at: now })
    .where('id', '=', id).where('lease_until', '<', now).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  lease_until: number;
}

/**
 * Claims up to `limit` due deliveries for `leaseMs`: no other worker (thread, process or server)
 * takes them until the lease ends. PostgreSQL: one statement, rows locked with SKIP LOCKED so
 * concurrent workers claim disjoint sets. SQLite: each row by a conditional update, which one
 * writer at a time makes atomic.
 */
export async function claimDue(db: Kysely<Database>, dialect: Dialect, limit: number, leaseMs: number, now = Date.now()): Promise<ClaimedDelivery[]> {
  const until = now + leaseMs;
  if (dialect === 'postgres') {
    const result = await sql<ClaimedDelivery>`
      update webhook_deliveries set lease_until = ${until}
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ${now} and lease_until < ${now}
        order by next_attempt_at limit ${limit}
        for update skip locked)
      returning id, webhook_id, event_id, attempts, lease_until`.execute(db);
    return result.rows.map((r) => ({ ...r, attempts: Number(r.attempts), lease_until: Number(r.lease_until) }));
  }
  const due = await db.selectFrom('webhook_deliveries').select(['id', 'webhook_id', 'event_id', 'attempts'])
    .where('status', '=', 'pending').where('next_attempt_at', '<=', now).where('lease_until', '<', now)
    .orderBy('next_attempt_at').limit(limit).execute();
  const claimed: ClaimedDelivery[] = [];
  for (const row of due) {
    const result = await db.updateTable('webhook_deliveries').set({ lease_until: until })
      .where('id', '=', row.id).where('status', '=', 'pending').where('lease_until', '<', now).executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) claimed.push({ ...row, attempts: Number(row.attempts), lease_until: until });
  }
  return claimed;
}

export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  success: boolean;
}

/**
 * Records one attempt and settles the delivery: succeeded, retried at `nextAt`, or failed when
 * `nextAt` is undefined. Only while this worker's lease holds (`leaseUntil`): a worker whose lease
 * ran out must not overwrite what the next holder did.
 */
export async function recordAttempt(db: Kysely<Database>, claim: ClaimedDelivery, outcome: AttemptOutcome, nextAt: number | undefined, now = Date.now()): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('webhook_attempts').values({ delivery_id: claim.id, attempted_at: now, status_code: outcome.statusCode, error: outcome.error, duration_ms: Math.round(outcome.durationMs) }).execute();
    const status = outcome.success ? 'succeeded' : nextAt === undefined ? 'failed' : 'pending';
    await trx.updateTable('webhook_deliveries').set({
      status,
      attempts: sql`attempts + 1`,
      next_attempt_at: nextAt ?? now,
      lease_until: 0,
      last_attempt_at: now,
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      delivered_at: outcome.success ? now : null,
    }).where('id', '=', claim.id).where('lease_until', '=', claim.lease_until).execute();
  });
}
