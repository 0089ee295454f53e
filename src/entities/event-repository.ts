// The `events` table's owner (docs/architecture.md, "Where things go", a table): the raw events
// ingestion stores (trust/event-ids.ts), the timeline's pages, erasure's deletes and rewrites, and
// the reads of other features — what a client sent (rings/redact.ts), the trades that completed
// (policies/stored.ts), the history the network publishes. Each function takes the executor, a
// Kysely instance or the caller's transaction, so the callers' transactions are unchanged. The
// SQLite direct path's prepared read of stored payloads stays in trust/ingest-direct.ts.
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { PUBLISH_EVENT_TYPES } from '../store/migrations/020_network_incremental.ts';
import { likeEscaped } from '../store/like.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Inserts the rows, skipping ids already stored; returns the ids inserted. */
export function insertNewEvents(trx: Db, rows: Array<Insertable<Database['events']>>) {
  return trx
    .insertInto('events')
    .values(rows)
    .onConflict((oc) => oc.columns(['environment', 'client_id', 'event_id']).doNothing())
    .returning('event_id')
    .execute();
}

/** The stored payloads of the client's events `ids`. */
export function storedPayloads(trx: Db, environment: Environment, clientId: string, ids: string[]) {
  return trx
    .selectFrom('events')
    .select(['event_id', 'payload'])
    .where('environment', '=', environment)
    .where('client_id', '=', clientId)
    .where('event_id', 'in', ids)
    .execute();
}

/** Deletes the entity's events; the result counts them. */
export function deleteEntityEvents(trx: Db, environment: Environment, id: string) {
  return trx.deleteFrom('events').where('environment', '=', environment).where('entity_id', '=', id).executeTakeFirst();
}

/** The events whose payload matches the LIKE `pattern` (escaped with a backslash), as `text`. */
export function eventsLike(trx: Db, environment: Environment, pattern: string) {
  return trx
    .selectFrom('events')
    .select(['client_id', 'event_id', 'payload as text'])
    .where('environment', '=', environment)
    .where(likeEscaped('payload', pattern))
    .execute();
}

export async function setEventPayload(
  trx: Db,
  environment: Environment,
  clientId: string,
  eventId: string,
  payload: string,
): Promise<void> {
  await trx
    .updateTable('events')
    .set({ payload })
    .where('environment', '=', environment)
    .where('client_id', '=', clientId)
    .where('event_id', '=', eventId)
    .execute();
}

/**
 * One page of the entity's events, newest first (occurred_at, event_id, client_id, all descending),
 * after the cursor `after`; only `owner`'s when given. Up to `rows` rows.
 */
export function eventsPage(
  db: Db,
  environment: Environment,
  id: string,
  owner: string | undefined,
  after: { at: number; eventId: string; clientId: string } | undefined,
  rows: number,
) {
  let q = db
    .selectFrom('events')
    .select(['client_id', 'event_id', 'type', 'occurred_at', 'payload'])
    .where('environment', '=', environment)
    .where('entity_id', '=', id);
  if (owner !== undefined) q = q.where('client_id', '=', owner);
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb('occurred_at', '<', after.at),
        eb.and([eb('occurred_at', '=', after.at), eb('event_id', '<', after.eventId)]),
        eb.and([
          eb('occurred_at', '=', after.at),
          eb('event_id', '=', after.eventId),
          eb('client_id', '<', after.clientId),
        ]),
      ]),
    );
  }
  return q
    .orderBy('occurred_at', 'desc')
    .orderBy('event_id', 'desc')
    .orderBy('client_id', 'desc')
    .limit(rows)
    .execute();
}

/** The live events of the types a published label counts, ingested at or after `since`. */
export async function publishEventsSince(db: Db, since: number) {
  // The types as literals: SQLite uses the partial index (020) only when the query names the same list, not parameters.
  return db
    .selectFrom('events')
    .select(['entity_id', 'type', 'payload'])
    .where('environment', '=', 'live')
    .where(sql<boolean>`type in (${sql.join(PUBLISH_EVENT_TYPES.map((t) => sql.lit(t)))})`)
    .where('ingested_at', '>=', since)
    .execute();
}

/** Of `ids`, the entities the client sent events about (each once). */
export function entitiesWithEventsFrom(db: Db, environment: Environment, clientId: string, ids: string[]) {
  return db
    .selectFrom('events')
    .select('entity_id')
    .distinct()
    .where('environment', '=', environment)
    .where('entity_id', 'in', ids)
    .where('client_id', '=', clientId)
    .execute();
}

/** Up to `limit` payloads of the client's events about `entities` that carry linked_identifiers. */
export function linkingPayloadsFrom(
  db: Db,
  environment: Environment,
  clientId: string,
  entities: string[],
  limit: number,
) {
  return db
    .selectFrom('events')
    .select('payload')
    .where('environment', '=', environment)
    .where('entity_id', 'in', entities)
    .where('client_id', '=', clientId)
    .where('payload', 'like', '%"linked_identifiers"%')
    .limit(limit)
    .execute();
}

/** The trade.completed events of `entityIds`. */
export function tradeCompletionsOf(db: Db, environment: Environment, entityIds: string[]) {
  return db
    .selectFrom('events')
    .select(['entity_id', 'payload'])
    .where('environment', '=', environment)
    .where('type', '=', 'trade.completed')
    .where('entity_id', 'in', entityIds)
    .execute();
}
