// Webhook storage: subscriptions (capped per client), the outbox (enqueueWebhookEvent, called
// inside the transaction of the fact it announces; writeEvents for the fan-out worker), and the
// delivery log. Claiming and recording attempts is in claims.ts.
import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { WebhookDeliveriesTable, WebhooksTable } from '../store/schema-webhooks.ts';
import type { Store } from '../store/db.ts';
import { advisoryXactLock } from '../store/locks.ts';
import { chunks } from '../store/chunks.ts';
import { newId } from '../lib/ids.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import type { Environment } from '../lib/principal.ts';

export const WEBHOOK_EVENT_TYPES = [
  'decision.high_risk',
  'dispute.analyzed',
  'entity.flagged',
  'entity.erased',
  'policy.activated',
  'key.deactivated',
  'decision.review_required',
  'decision.declined',
  'rule.changed',
  'list.changed',
  'review.resolved',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export type WebhookRow = Selectable<WebhooksTable>;
type DeliveryRow = WebhookDeliveriesTable;
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
export async function enqueueWebhookEvent(
  trx: Db,
  environment: Environment,
  type: WebhookEventType,
  data: Record<string, unknown>,
  options: EnqueueOptions = {},
): Promise<string | undefined> {
  const owner = options.owner ?? null;
  const now = options.now ?? Date.now();
  let query = trx
    .selectFrom('webhooks')
    .select(['id', 'events'])
    .where('environment', '=', environment)
    .where('events', 'like', `%${type}%`);
  if (owner !== null) query = query.where('owner_client_id', '=', owner);
  const subscribers = (await query.execute()).filter((w) => w.events.split(' ').includes(type));
  if (subscribers.length === 0) return undefined;
  const [id] = await writeEvents(
    trx,
    environment,
    type,
    owner,
    [data],
    subscribers.map((w) => w.id),
    now,
  );
  return id;
}

/**
 * Several events of one type and owner, each with a pending delivery per given webhook, in
 * multi-row statements (the fan-out worker writes hundreds at a time). Returns the event ids.
 */
export async function writeEvents(
  trx: Db,
  environment: Environment,
  type: WebhookEventType,
  owner: string | null,
  payloads: ReadonlyArray<Record<string, unknown>>,
  webhookIds: readonly string[],
  now: number,
): Promise<string[]> {
  const events = payloads.map((data) => ({
    id: newId('msg'),
    environment,
    type,
    owner_client_id: owner,
    data: JSON.stringify(data),
    created_at: now,
  }));
  for (const rows of chunks(events, 100)) await trx.insertInto('webhook_events').values(rows).execute();
  const deliveries = events.flatMap((e) =>
    webhookIds.map((webhookId) => ({
      id: newId('whd'),
      webhook_id: webhookId,
      event_id: e.id,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_until: 0,
      last_attempt_at: null,
      last_status_code: null,
      last_error: null,
      delivered_at: null,
      created_at: now,
    })),
  );
  for (const rows of chunks(deliveries, 100)) await trx.insertInto('webhook_deliveries').values(rows).execute();
  return events.map((e) => e.id);
}

/** Whether any webhook of `owner` subscribes to `type` (lets ingestion skip the work of building events). */
export async function hasSubscribers(
  db: Db,
  environment: Environment,
  type: WebhookEventType,
  owner: string,
): Promise<boolean> {
  const rows = await db
    .selectFrom('webhooks')
    .select('events')
    .where('environment', '=', environment)
    .where('owner_client_id', '=', owner)
    .where('events', 'like', `%${type}%`)
    .execute();
  return rows.some((r) => r.events.split(' ').includes(type));
}

class AtCap extends Error {}

/**
 * Stores a webhook unless its client already has `max` (VOUCH_WEBHOOKS_PER_CLIENT, 20 by default), counted over
 * both environments: they share the client's delivery capacity. Returns undefined at the cap.
 * The row is written before the count, so the transaction holds the write lock (SQLite) while it
 * counts; where writers run side by side (PostgreSQL), the advisory lock on the client serialises
 * its creations. Two creations at once therefore cannot both take the last place.
 */
export async function insertWebhookCapped(
  store: Store,
  row: Insertable<WebhooksTable>,
  max: number,
  /** writes the audit entry in the same transaction */
  audit?: (trx: Db) => Promise<void>,
): Promise<WebhookRow | undefined> {
  try {
    return await store.db.transaction().execute(async (trx) => {
      await advisoryXactLock(store, trx, `vouch/webhooks/${row.owner_client_id}`);
      await trx.insertInto('webhooks').values(row).execute();
      const { count } = await trx
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('environment', 'in', ['live', 'test'])
        .where('owner_client_id', '=', row.owner_client_id)
        .executeTakeFirstOrThrow();
      if (Number(count) > max) throw new AtCap();
      await audit?.(trx);
      return trx.selectFrom('webhooks').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    });
  } catch (err) {
    if (err instanceof AtCap) return undefined;
    throw err;
  }
}

/**
 * `owner` undefined: an admin, who sees every webhook of its environment. Never another
 * environment's, admins included: a test key must not manage live subscriptions.
 */
export async function findWebhook(
  db: Db,
  environment: Environment,
  id: string,
  owner: string | undefined,
): Promise<WebhookRow | undefined> {
  let query = db.selectFrom('webhooks').selectAll().where('environment', '=', environment).where('id', '=', id);
  if (owner !== undefined) query = query.where('owner_client_id', '=', owner);
  return query.executeTakeFirst();
}

export async function listWebhooks(
  db: Db,
  environment: Environment,
  owner: string | undefined,
  limit: number,
  after: string | undefined,
): Promise<Page<WebhookRow>> {
  let query = db
    .selectFrom('webhooks')
    .selectAll()
    .where('environment', '=', environment)
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (owner !== undefined) query = query.where('owner_client_id', '=', owner);
  if (after !== undefined) query = query.where('id', '<', after);
  return pageOf(await query.execute(), limit);
}

/** Deletes the webhook and its undelivered deliveries; the log of past ones goes with it. */
export async function deleteWebhook(
  db: Kysely<Database>,
  id: string,
  /** writes the audit entry in the same transaction */
  audit?: (trx: Db) => Promise<void>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const deliveries = trx.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id);
    await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
    await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
    await trx.deleteFrom('webhooks').where('id', '=', id).execute();
    await audit?.(trx);
  });
}

export interface DeliveryView extends DeliveryRow {
  event_type: string;
}

/**
 * A webhook's deliveries. `environment` is the webhook's: enqueueing never pairs a webhook with
 * another environment's event, and this read does not rely on it.
 */
export async function listDeliveries(
  db: Db,
  environment: Environment,
  webhookId: string,
  limit: number,
  after: string | undefined,
): Promise<Page<DeliveryView>> {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type as event_type')
    .where('e.environment', '=', environment)
    .where('d.webhook_id', '=', webhookId)
    .orderBy('d.id', 'desc')
    .limit(limit + 1);
  if (after !== undefined) query = query.where('d.id', '<', after);
  return pageOf(await query.execute(), limit);
}

export async function findDelivery(
  db: Db,
  environment: Environment,
  webhookId: string,
  id: string,
): Promise<DeliveryView | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type as event_type')
    .where('e.environment', '=', environment)
    .where('d.webhook_id', '=', webhookId)
    .where('d.id', '=', id)
    .executeTakeFirst();
}

/**
 * Manual retry: due now, whatever its state; false while a worker holds it (in flight). An
 * operator retrying by hand has likely fixed the endpoint, so an open circuit lets one probe
 * through now (the failure count stays: a failed probe pauses the endpoint again).
 */
export async function scheduleRetry(db: Kysely<Database>, id: string, now = Date.now()): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: now })
      .where('id', '=', id)
      .where('lease_until', '<', now)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    await trx
      .updateTable('webhooks')
      .set({ paused_until: 0 })
      .where('id', '=', (eb) => eb.selectFrom('webhook_deliveries').select('webhook_id').where('id', '=', id))
      .where('paused_until', '>', 0)
      .execute();
    return true;
  });
}
