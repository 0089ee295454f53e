// Webhook storage: subscriptions (capped per client) and who subscribes to what, and the outbox
// (enqueueWebhookEvent, called inside the transaction of the fact it announces; writeEvents for
// the fan-out worker). Deliveries, their attempts and the delivery log are delivery-repository.ts's,
// fan-out rows fanout-repository.ts's (issue 41 item 1, one owner per table).
import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { WebhooksTable } from '../store/schema-webhooks.ts';
import type { Store } from '../store/db.ts';
import { advisoryXactLock } from '../store/locks.ts';
import { chunks } from '../store/chunks.ts';
import { newId } from '../lib/ids.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import type { Environment } from '../lib/principal.ts';
import { PreparedQuery } from '../store/prepared.ts';
import { likeEscaped } from '../store/like.ts';

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

/**
 * The webhooks that may subscribe to any of N event types, compiled once per N (at most four): this
 * runs at every commit of scores that announce something, where building and compiling the query
 * cost more than running it on a table of a few rows.
 */
const subscriberQueries = new WeakMap<Kysely<Database>, Map<number, PreparedQuery<string[], SubscriberRow>>>();
interface SubscriberRow {
  environment: string;
  events: string;
}
function subscribersQuery(db: Kysely<Database>, count: number): PreparedQuery<string[], SubscriberRow> {
  let byCount = subscriberQueries.get(db);
  if (!byCount) subscriberQueries.set(db, (byCount = new Map()));
  let query = byCount.get(count);
  if (!query) {
    query = new PreparedQuery<string[], SubscriberRow>(db as never, count, (_db, ...patterns) =>
      db
        .selectFrom('webhooks')
        .select(['environment', 'events'])
        .where((eb) => eb.or(patterns.map((p) => eb('events', 'like', p as string)))),
    );
    byCount.set(count, query);
  }
  return query;
}

/** Every webhook whose events match any of the LIKE `patterns` (a candidate: the caller checks the list). */
export function webhooksMatchingAny(db: Kysely<Database>, patterns: string[]): Promise<SubscriberRow[]> {
  return subscribersQuery(db, patterns.length).execute(...patterns);
}

/** The webhooks of `owner` that existed at `createdAt` and may subscribe to entity.flagged. */
export async function flaggedSubscriberCandidates(
  db: Db,
  environment: Environment,
  owner: string,
  createdAt: number,
): Promise<{ id: string; events: string }[]> {
  return db
    .selectFrom('webhooks')
    .select(['id', 'events'])
    .where('environment', '=', environment)
    .where('owner_client_id', '=', owner)
    .where('created_at', '<=', createdAt)
    .where('events', 'like', '%entity.flagged%')
    .execute();
}

/** Those of `ids` that still exist. */
export async function existingWebhookIds(db: Db, ids: string[]): Promise<{ id: string }[]> {
  return db.selectFrom('webhooks').select('id').where('id', 'in', ids).execute();
}

/** The webhook events whose data matches the LIKE `pattern` (escaped with a backslash), as `text`. */
export function webhookEventsLike(db: Db, environment: Environment, pattern: string) {
  return db
    .selectFrom('webhook_events')
    .select(['id', 'data as text'])
    .where('environment', '=', environment)
    .where(likeEscaped('data', pattern))
    .execute();
}

export async function setWebhookEventData(db: Db, id: string, data: string): Promise<void> {
  await db.updateTable('webhook_events').set({ data }).where('id', '=', id).execute();
}
