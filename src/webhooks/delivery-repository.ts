// The delivery side of webhooks in the store (issue 41 item 1, one owner per table): the
// deliveries and their attempts, the endpoint's circuit breaker that each attempt moves, and the
// delivery log routes.ts shows. claims.ts keeps the lease protocol and calls these; the outbox
// writes that create deliveries are repository.ts's (writeEvents). Each takes the executor.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { WebhookDeliveriesTable } from '../store/schema-webhooks.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import type { Environment } from '../lib/principal.ts';

type Db = Kysely<Database> | Transaction<Database>;
type DeliveryRow = WebhookDeliveriesTable;

/**
 * The due deliveries of endpoints whose circuit is closed, oldest first, up to `window`, without
 * the excluded endpoints and owners. Returned unexecuted: the claim applies its row locks first
 * (store/claims.ts).
 */
export function dueDeliveriesQuery(
  db: Db,
  now: number,
  window: number,
  exclude: { webhooks?: readonly string[]; owners?: readonly string[] },
) {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .select(['d.id', 'd.webhook_id', 'd.event_id', 'd.attempts', 'w.owner_client_id', 'w.consecutive_failures'])
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', now)
    .where('d.lease_until', '<', now)
    .where('w.paused_until', '<=', now)
    .orderBy('d.next_attempt_at')
    .limit(window);
  if (exclude.webhooks && exclude.webhooks.length > 0)
    query = query.where('d.webhook_id', 'not in', [...exclude.webhooks]);
  if (exclude.owners && exclude.owners.length > 0)
    query = query.where('w.owner_client_id', 'not in', [...exclude.owners]);
  return query;
}

/** Leases the deliveries still pending and unleased at `now` until `until`; returns those leased. */
export async function leaseDeliveries(db: Db, ids: string[], until: number, now: number): Promise<{ id: string }[]> {
  return db
    .updateTable('webhook_deliveries')
    .set({ lease_until: until })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where('lease_until', '<', now)
    .returning('id')
    .execute();
}

/** What one attempt did, as the delivery and its log record it. */
export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  success: boolean;
}

/** Settles a delivery after an attempt, only while the lease `leaseUntil` still holds it. */
export async function settleDelivery(
  trx: Db,
  id: string,
  leaseUntil: number,
  status: string,
  outcome: AttemptRecord,
  nextAt: number | undefined,
  now: number,
): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status,
      attempts: sql`attempts + 1`,
      next_attempt_at: nextAt ?? now,
      lease_until: 0,
      last_attempt_at: now,
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      delivered_at: outcome.success ? now : null,
    })
    .where('id', '=', id)
    .where('lease_until', '=', leaseUntil)
    .execute();
}

export async function insertAttempt(trx: Db, deliveryId: string, outcome: AttemptRecord, now: number): Promise<void> {
  await trx
    .insertInto('webhook_attempts')
    .values({
      delivery_id: deliveryId,
      attempted_at: now,
      status_code: outcome.statusCode,
      error: outcome.error,
      duration_ms: Math.round(outcome.durationMs),
    })
    .execute();
}

/** A success closes the endpoint's circuit (when it had failures). */
export async function closeCircuit(trx: Db, webhookId: string): Promise<void> {
  await trx
    .updateTable('webhooks')
    .set({ consecutive_failures: 0, paused_until: 0 })
    .where('id', '=', webhookId)
    .where('consecutive_failures', '>', 0)
    .execute();
}

/** A failure counts towards the breaker; at `failures` in a row the endpoint pauses until now + cooldown. */
export async function countFailure(
  trx: Db,
  webhookId: string,
  breaker: { failures: number; cooldownMs: number },
  now: number,
): Promise<void> {
  await trx
    .updateTable('webhooks')
    .set({
      consecutive_failures: sql`consecutive_failures + 1`,
      paused_until: sql`case when consecutive_failures + 1 >= ${breaker.failures} then ${now + breaker.cooldownMs} else paused_until end`,
    })
    .where('id', '=', webhookId)
    .execute();
}

/** What a delivery sends: its webhook's address and sealed secret, and its event. */
export async function deliveryParts(db: Db, webhookId: string, eventId: string) {
  return Promise.all([
    db
      .selectFrom('webhooks')
      .select(['id', 'url', 'secret', 'environment'])
      .where('id', '=', webhookId)
      .executeTakeFirst(),
    db.selectFrom('webhook_events').selectAll().where('id', '=', eventId).executeTakeFirst(),
  ]);
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
