// The network's queries over its own queue and answers (network_pending, network_resolved) that
// also read the entity tables (identifiers, entities): which queued or resolved identifiers a live
// entity still holds. The entity tables' owner (src/entities/) sits below the network and cannot
// name the network's tables, so these joins are the network's; its plain reads of the entity
// tables are that owner's (docs/architecture.md, "Where things go", a table). Each takes the
// executor: a Kysely instance or a transaction.
import { sql } from 'kysely';
import { ENTITY_TYPE, type NetworkDb } from './tables.ts';

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
