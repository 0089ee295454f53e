// The network's queries of tables it does not own: the entity tables (entities, identifiers,
// events, owned by trust/) and settings. They wait here, in one place, for their owner's
// repository (issue 41 item 1, one owner per table); everything else of network/ reads and writes
// only its own tables, through its *-repository.ts files. A query that joins one of the network's
// tables to an entity table is here too. Each takes the executor: a Kysely instance or a transaction.
import { sql } from 'kysely';
import { PUBLISH_EVENT_TYPES } from '../store/migrations/020_network_incremental.ts';
import { ENTITY_TYPE, type NetworkDb } from './tables.ts';

const FLAG_COLUMNS = [
  'e.fraud_reports',
  'e.chargebacks',
  'e.blocklisted',
  'e.disputes_lost',
  'e.flagged_at',
  'e.last_event_at',
] as const;
/** The holder (entities as e) has a flag of a kind a label carries. */
const FLAGGED_HOLDER = sql<boolean>`(e.fraud_reports > 0 or e.chargebacks > 0 or e.blocklisted = 1 or e.disputes_lost > 0)`;

/** The flagged live entities among `entityIds`, with their flag counts (publish-plan.ts, the `entity` type). */
export async function flaggedEntitiesAmong(db: NetworkDb, entityIds: string[]) {
  return db
    .selectFrom('entities as e')
    .select(['e.entity_id', ...FLAG_COLUMNS])
    .where('e.environment', '=', 'live')
    .where('e.entity_id', 'in', entityIds)
    .where(FLAGGED_HOLDER)
    .execute();
}

/** The flagged live holders of the identifiers of `idType` among `hashes`, with their flag counts. */
export async function flaggedHoldersOf(db: NetworkDb, idType: string, hashes: string[]) {
  return db
    .selectFrom('identifiers as i')
    .innerJoin('entities as e', (j) =>
      j.onRef('e.environment', '=', 'i.environment').onRef('e.entity_id', '=', 'i.entity_id'),
    )
    .select(['i.hash', ...FLAG_COLUMNS])
    .where('i.environment', '=', 'live')
    .where('i.id_type', '=', idType)
    .where('i.hash', 'in', hashes)
    .where(FLAGGED_HOLDER)
    .execute();
}

/** The live events of the types a published label counts, ingested at or after `since`. */
export async function publishEventsSince(db: NetworkDb, since: number) {
  // The types as literals: SQLite uses the partial index (020) only when the query names the same list, not parameters.
  return db
    .selectFrom('events')
    .select(['entity_id', 'type', 'payload'])
    .where('environment', '=', 'live')
    .where(sql<boolean>`type in (${sql.join(PUBLISH_EVENT_TYPES.map((t) => sql.lit(t)))})`)
    .where('ingested_at', '>=', since)
    .execute();
}

/** The live identifiers linked at or after `since`. */
export async function identifiersLinkedSince(db: NetworkDb, since: number) {
  return db
    .selectFrom('identifiers')
    .select(['id_type', 'hash'])
    .where('environment', '=', 'live')
    .where('created_at', '>=', since)
    .execute();
}

/** The live identifiers of `entityIds`. */
export async function identifiersOfEntities(db: NetworkDb, entityIds: string[]) {
  return db
    .selectFrom('identifiers')
    .select(['id_type', 'hash'])
    .where('environment', '=', 'live')
    .where('entity_id', 'in', entityIds)
    .execute();
}

/** Every live identifier with a flagged holder. */
export async function flaggedIdentifiers(db: NetworkDb) {
  return db
    .selectFrom('identifiers as i')
    .innerJoin('entities as e', (j) =>
      j.onRef('e.environment', '=', 'i.environment').onRef('e.entity_id', '=', 'i.entity_id'),
    )
    .select(['i.id_type', 'i.hash'])
    .distinct()
    .where('i.environment', '=', 'live')
    .where(FLAGGED_HOLDER)
    .execute();
}

/** Every flagged live entity. */
export async function flaggedEntityIds(db: NetworkDb) {
  return db
    .selectFrom('entities as e')
    .select('e.entity_id')
    .where('e.environment', '=', 'live')
    .where(FLAGGED_HOLDER)
    .execute();
}

/** A setting's stored value (the settings table, one row per name). */
export async function settingValue(db: NetworkDb, name: string) {
  return db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
}

export async function storeSetting(db: NetworkDb, name: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute();
}

/** Whether a live entity still holds the identifier, or a score request still names it (network_pending). */
export async function identifierStillHeld(db: NetworkDb, idType: string, hash: string) {
  return db
    .selectFrom('identifiers')
    .select(sql`1`.as('one'))
    .where('environment', '=', 'live')
    .where('id_type', '=', idType)
    .where('hash', '=', hash)
    .union(
      db
        .selectFrom('network_pending')
        .select(sql`1`.as('one'))
        .where('id_type', '=', idType)
        .where('hash', '=', hash),
    )
    .executeTakeFirst();
}

/** The live identifiers of an entity, as the network's signal names them. */
export async function liveIdentifiersOf(db: NetworkDb, entityId: string) {
  return db
    .selectFrom('identifiers')
    .select(['id_type as type', 'hash'])
    .where('environment', '=', 'live')
    .where('entity_id', '=', entityId)
    .execute();
}

/**
 * Forgets the peer's resolutions (other than entity ids) of identifiers no live entity holds and
 * no score request names any more.
 */
export async function forgetUnheldResolutions(db: NetworkDb, peerId: string): Promise<void> {
  await db
    .deleteFrom('network_resolved')
    .where('peer_id', '=', peerId)
    .where('id_type', '<>', ENTITY_TYPE)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('identifiers as i')
            .select(sql`1`.as('one'))
            .where('i.environment', '=', 'live')
            .whereRef('i.id_type', '=', 'network_resolved.id_type')
            .whereRef('i.hash', '=', 'network_resolved.hash'),
        ),
      ),
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('network_pending as q')
            .select(sql`1`.as('one'))
            .whereRef('q.id_type', '=', 'network_resolved.id_type')
            .whereRef('q.hash', '=', 'network_resolved.hash'),
        ),
      ),
    )
    .execute();
}

/**
 * Forgets the peer's resolutions of entity ids: all of them without the common hashing, else those
 * of no live entity.
 */
export async function forgetStaleEntityResolutions(db: NetworkDb, peerId: string, entityIds: boolean): Promise<void> {
  let stale = db.deleteFrom('network_resolved').where('peer_id', '=', peerId).where('id_type', '=', ENTITY_TYPE);
  if (entityIds) {
    stale = stale.where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('entities as e')
            .select(sql`1`.as('one'))
            .where('e.environment', '=', 'live')
            .whereRef('e.entity_id', '=', 'network_resolved.hash'),
        ),
      ),
    );
  }
  await stale.execute();
}

const unresolved = (peerId: string, type: string, hash: string) =>
  sql<boolean>`not exists (select 1 from network_resolved r where r.peer_id = ${peerId} and r.id_type = ${sql.ref(type)} and r.hash = ${sql.ref(hash)})`;

/**
 * The first `limit` identifiers events linked (live) that `peerId` has not resolved, with the
 * common entity hashing each live entity's own id, in key order.
 */
export async function linkedUnresolved(
  db: NetworkDb,
  peerId: string,
  entityIds: boolean,
  limit: number,
): Promise<Array<{ id_type: string; hash: string }>> {
  const linked = db.selectFrom('identifiers as i').select(['i.id_type', 'i.hash']).where('i.environment', '=', 'live');
  const held = entityIds
    ? linked.union(
        db
          .selectFrom('entities as e')
          .select([sql<string>`${ENTITY_TYPE}`.as('id_type'), 'e.entity_id as hash'])
          .where('e.environment', '=', 'live'),
      )
    : linked;
  return db
    .selectFrom(held.as('h'))
    .select(['h.id_type', 'h.hash'])
    .where(unresolved(peerId, 'h.id_type', 'h.hash'))
    .orderBy('h.id_type')
    .orderBy('h.hash')
    .limit(limit)
    .execute();
}

/**
 * Up to `limit` identifiers only score requests named (no live entity holds them) that `peerId`
 * has not resolved, the clients taking turns, each client's most recently named first.
 */
export async function namedUnresolvedInTurns(
  db: NetworkDb,
  peerId: string,
  limit: number,
): Promise<Array<{ id_type: string; hash: string }>> {
  const turns = await sql<{ id_type: string; hash: string }>`select t.id_type, t.hash from (
      select q.id_type, q.hash, q.client_id, row_number() over (partition by q.client_id order by max(q.seen_at) desc, q.id_type, q.hash) as turn
      from network_pending q
      where ${unresolved(peerId, 'q.id_type', 'q.hash')}
        and not exists (select 1 from identifiers i where i.environment = 'live' and i.id_type = q.id_type and i.hash = q.hash)
      group by q.client_id, q.id_type, q.hash) t
    order by t.turn, t.client_id, t.id_type, t.hash
    limit ${limit}`.execute(db);
  return turns.rows;
}
