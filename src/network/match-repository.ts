// What the network says about this deployment's identifiers (issue 41 item 1, one owner per
// table): those queued for resolution (network_pending), the peers' resolutions of them
// (network_resolved) and the matches scoring reads (network_matches). pending.ts, resolver.ts,
// matches.ts, signal.ts and erasure.ts keep the rules and call these; the queries that join these
// tables to the entity tables are in entity-join-repository.ts. Each takes the executor: a Kysely instance or
// a transaction.
import { sql, type Insertable, type RawBuilder } from 'kysely';
import type { Store } from '../store/db.ts';
import { jsonRowsSql } from '../store/json-rows.ts';
import { ENTITY_TYPE, type NetworkDb, type NetworkTables } from './tables.ts';

type MatchRow = Insertable<NetworkTables['network_matches']>;

/** The active peers' matches of `identifiers` (one statement: the caller bounds their number). */
export async function activeMatchesOf(db: NetworkDb, identifiers: Array<{ type: string; hash: string }>) {
  return db
    .selectFrom('network_matches as m')
    .innerJoin('network_peers as p', 'p.id', 'm.peer_id')
    .select(['m.peer_id', 'm.label', 'p.name', 'p.weight'])
    .where('p.status', '=', 'active')
    .where((eb) => eb.or(identifiers.map((id) => eb.and([eb('m.id_type', '=', id.type), eb('m.hash', '=', id.hash)]))))
    .execute();
}

/** The identifiers score requests named for the entity. */
export async function pendingIdentifiersOf(db: NetworkDb, entityId: string) {
  return db
    .selectFrom('network_pending')
    .select(['id_type as type', 'hash'])
    .where('entity_id', '=', entityId)
    .distinct()
    .execute();
}

/**
 * One page of the peer's resolved identifiers in key order, after `after` when given, each with
 * the sealed label the peer's set holds for its tag (null when none).
 */
export async function resolvedWithFlags(
  db: NetworkDb,
  peerId: string,
  after: { id_type: string; hash: string } | undefined,
  limit: number,
) {
  let page = db
    .selectFrom('network_resolved as r')
    .leftJoin('network_peer_flags as f', (j) => j.onRef('f.peer_id', '=', 'r.peer_id').onRef('f.tag', '=', 'r.tag'))
    .select(['r.id_type', 'r.hash', 'r.tag', 'r.label_key', 'f.sealed'])
    .where('r.peer_id', '=', peerId);
  const from = after;
  if (from)
    page = page.where((eb) =>
      eb.or([
        eb('r.id_type', '>', from.id_type),
        eb.and([eb('r.id_type', '=', from.id_type), eb('r.hash', '>', from.hash)]),
      ]),
    );
  return page.orderBy('r.id_type').orderBy('r.hash').limit(limit).execute();
}

/** Replaces the peer's matches by `matches`, in one transaction. */
export async function replaceMatches(db: NetworkDb, peerId: string, matches: MatchRow[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('network_matches').where('peer_id', '=', peerId).execute();
    for (let i = 0; i < matches.length; i += 500)
      await trx
        .insertInto('network_matches')
        .values(matches.slice(i, i + 500))
        .execute();
  });
}

export const countMatches = async (db: NetworkDb, peerId: string) =>
  Number(
    (
      await db
        .selectFrom('network_matches')
        .select(sql<number>`count(*)`.as('n'))
        .where('peer_id', '=', peerId)
        .executeTakeFirst()
    )?.n ?? 0,
  );

/** Every peer's matches. */
export async function countAllMatches(db: NetworkDb): Promise<number> {
  return Number(
    (
      await db
        .selectFrom('network_matches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst()
    )?.n ?? 0,
  );
}

export async function countResolved(db: NetworkDb, peerId: string): Promise<number> {
  return Number(
    (
      await db
        .selectFrom('network_resolved')
        .select(sql<number>`count(*)`.as('n'))
        .where('peer_id', '=', peerId)
        .executeTakeFirst()
    )?.n ?? 0,
  );
}

export async function insertResolved(
  db: NetworkDb,
  rows: Array<Insertable<NetworkTables['network_resolved']>>,
): Promise<void> {
  await db
    .insertInto('network_resolved')
    .values(rows)
    .onConflict((oc) => oc.columns(['peer_id', 'id_type', 'hash']).doNothing())
    .execute();
}

/** Forgets what every peer said about an identifier: its resolutions, then its matches. */
export async function forgetIdentifier(trx: NetworkDb, idType: string, hash: string): Promise<void> {
  await trx.deleteFrom('network_resolved').where('id_type', '=', idType).where('hash', '=', hash).execute();
  await trx.deleteFrom('network_matches').where('id_type', '=', idType).where('hash', '=', hash).execute();
}

/** Deletes what score requests queued for the entity; returns the identifiers deleted. */
export async function deletePendingOf(trx: NetworkDb, entityId: string) {
  return trx.deleteFrom('network_pending').where('entity_id', '=', entityId).returning(['id_type', 'hash']).execute();
}

/** Forgets the queued identifiers last seen before `before`. */
export async function deletePendingSeenBefore(db: NetworkDb, before: number): Promise<void> {
  await db.deleteFrom('network_pending').where('seen_at', '<', before).execute();
}

/** Queues identifiers; a row another client queued first stays that client's: only its sighting is refreshed. */
export async function upsertPending(
  db: NetworkDb,
  rows: Array<{ id_type: string; hash: string; entity_id: string; client_id: string; seen_at: number }>,
  now: number,
): Promise<void> {
  await db
    .insertInto('network_pending')
    .values(rows)
    .onConflict((oc) => oc.columns(['id_type', 'hash', 'entity_id']).doUpdateSet({ seen_at: now }))
    .execute();
}

/** The client's rows still waiting for a peer. */
export async function waitingCount(db: NetworkDb, clientId: string): Promise<number> {
  return Number(
    (
      await db
        .selectFrom('network_pending')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('client_id', '=', clientId)
        .where('queued', '=', 1)
        .executeTakeFirst()
    )?.n ?? 0,
  );
}

/** Which of `ids` are queued already (one statement: the caller bounds their number). */
export async function queuedAmong(db: NetworkDb, ids: Array<{ type: string; hash: string; entityId: string }>) {
  return db
    .selectFrom('network_pending')
    .select(['id_type', 'hash', 'entity_id'])
    .where((eb) =>
      eb.or(
        ids.map((id) =>
          eb.and([eb('id_type', '=', id.type), eb('hash', '=', id.hash), eb('entity_id', '=', id.entityId)]),
        ),
      ),
    )
    .execute();
}

/**
 * After a sync: a queued row stops counting against its client's quota once every active peer has
 * resolved it. Only rows still counted are looked at (at most the quota per client); a peer added
 * later resolves the others too, in turn, but they no longer hold their client's room.
 */
export async function settleQueue(db: NetworkDb): Promise<void> {
  await db
    .updateTable('network_pending')
    .set({ queued: 0 })
    .where('queued', '=', 1)
    .where(
      sql<boolean>`not exists (select 1 from network_peers p where p.status = 'active' and not exists (
      select 1 from network_resolved r where r.peer_id = p.id and r.id_type = network_pending.id_type and r.hash = network_pending.hash))`,
    )
    .execute();
}

/**
 * The score's read of the network, folded into the profile query (src/entities/profile-repository.ts,
 * composed by src/trust/profile.ts): the matches of the active peers for the identifiers `keys`
 * selects (rows of id_type, hash) and for the entity's own id under the `entity` type (matched
 * only with the common entity hashing on: nothing is resolved under it otherwise), as one JSON
 * array text — or null / '[]' when there are none. Only the live environment takes part.
 */
export function networkMatchesSql(
  store: Store,
  env: unknown,
  keys: RawBuilder<unknown>,
  entityId: unknown,
): RawBuilder<string | null> {
  const from = sql`from (${keys} union select cast(${sql.lit(ENTITY_TYPE)} as text), cast(${entityId} as text)) k
      join network_matches nm on nm.id_type = k.id_type and nm.hash = k.hash
      join network_peers np on np.id = nm.peer_id
      where np.status = 'active' and ${env} = 'live'`;
  const fields = { peer_id: sql`nm.peer_id`, name: sql`np.name`, weight: sql`np.weight`, label: sql`nm.label` };
  return jsonRowsSql(store, fields, from);
}
