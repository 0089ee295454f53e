// The reads and writes of this deployment's side of the network (issue 41 item 1, one owner per
// table): its identity row (network_identity: keys, the sync lease, the state version, the publish
// watermark) and the set it publishes (network_published). identity.ts, publisher.ts,
// flags-page.ts and page-cache.ts keep the keys, the planning and the paging and call these. Each
// takes the executor: a Kysely instance or a transaction.
import { sql, type Insertable } from 'kysely';
import type { Store } from '../store/db.ts';
import { lockForUpdate } from '../store/locks.ts';
import type { NetworkDb, NetworkTables } from './tables.ts';

type IdentityRow = Insertable<NetworkTables['network_identity']>;
type PublishedRow = Insertable<NetworkTables['network_published']>;

export async function identityRow(db: NetworkDb) {
  return db.selectFrom('network_identity').selectAll().where('id', '=', 'self').executeTakeFirst();
}

export async function identityRowOrThrow(db: NetworkDb) {
  return db.selectFrom('network_identity').selectAll().where('id', '=', 'self').executeTakeFirstOrThrow();
}

/** Stores the identity unless another process stored one first. */
export async function insertIdentityIfAbsent(db: NetworkDb, row: IdentityRow): Promise<void> {
  await db
    .insertInto('network_identity')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** Replaces the sealed private halves (sealed again under the current KEK). */
export async function resealIdentity(db: NetworkDb, signingPrivate: string, oprfSecret: string): Promise<void> {
  await db
    .updateTable('network_identity')
    .set({ signing_private: signingPrivate, oprf_secret: oprfSecret })
    .where('id', '=', 'self')
    .execute();
}

/**
 * What scores read from the network may have changed (a sync ran, a peer was changed or removed):
 * bumps the version every instance's cached scores and profiles are checked against
 * (src/entities/profile-repository.ts), in whichever process made the change — the API's or the CLI's.
 */
export async function announceNetworkChange(db: NetworkDb): Promise<void> {
  await db
    .updateTable('network_identity')
    .set((eb) => ({ state_version: eb('state_version', '+', 1) }))
    .where('id', '=', 'self')
    .execute();
}

/** Stores the descriptor's name this deployment serves under, so another process (the CLI) shows the same. */
export async function recordName(db: NetworkDb, name: string): Promise<void> {
  await db.updateTable('network_identity').set({ name }).where('id', '=', 'self').where('name', '<>', name).execute();
}

/** The name the serving deployment last started with; `fallback` (the caller's configuration) before any did. */
export async function servedName(db: NetworkDb, fallback: string): Promise<string> {
  const row = await db.selectFrom('network_identity').select('name').where('id', '=', 'self').executeTakeFirst();
  return row?.name || fallback;
}

/** Takes the scheduled sync's lease until `until` if nobody holds it at `now`; whether it was taken. */
export async function takeSyncLease(db: NetworkDb, now: number, until: number): Promise<boolean> {
  const lease = await db
    .updateTable('network_identity')
    .set({ sync_lease_until: until })
    .where('id', '=', 'self')
    .where('sync_lease_until', '<', now)
    .executeTakeFirst();
  return Number(lease.numUpdatedRows) !== 0;
}

/**
 * The identity row orders the writers of the set, so sequence numbers commit in order (a store that
 * runs one write transaction at a time orders them without it).
 */
export const lockPublishedSet = (trx: NetworkDb, store: Store) =>
  lockForUpdate(store, trx.selectFrom('network_identity').select('id').where('id', '=', 'self')).execute();

/** The ingestion time through which the history is published (0: never). */
export async function publishedThrough(db: NetworkDb) {
  return db
    .selectFrom('network_identity')
    .select('published_through')
    .where('id', '=', 'self')
    .executeTakeFirstOrThrow();
}

export async function markPublishedThrough(db: NetworkDb, through: number): Promise<void> {
  await db.updateTable('network_identity').set({ published_through: through }).where('id', '=', 'self').execute();
}

/** The head of the published set: its highest sequence number (0 when empty). */
export async function publishedHead(db: NetworkDb): Promise<number> {
  return Number(
    (
      await db
        .selectFrom('network_published')
        .select(sql<number | string | null>`max(seq)`.as('m'))
        .executeTakeFirst()
    )?.m ?? 0,
  );
}

/** Entries published now (tombstones left out). */
export async function countPublished(db: NetworkDb): Promise<number> {
  return Number(
    (
      await db
        .selectFrom('network_published')
        .select(sql<number>`count(*)`.as('n'))
        .where('label', 'is not', null)
        .executeTakeFirst()
    )?.n ?? 0,
  );
}

/** The stored entries of `sources`. */
export async function publishedBySource(db: NetworkDb, sources: string[]) {
  return db.selectFrom('network_published').select(['tag', 'source', 'label']).where('source', 'in', sources).execute();
}

/** The entries (not tombstones) last changed before `before`. */
export async function publishedBefore(db: NetworkDb, before: number) {
  return db
    .selectFrom('network_published')
    .select(['tag', 'source'])
    .where('source', 'is not', null)
    .where('updated_at', '<', before)
    .execute();
}

/** Makes the entry a tombstone at sequence `seq`. */
export async function withdrawPublished(trx: NetworkDb, tag: string, seq: number, now: number): Promise<void> {
  await trx
    .updateTable('network_published')
    .set({ source: null, id_type: null, label: null, label_key: null, seq, updated_at: now })
    .where('tag', '=', tag)
    .execute();
}

export async function relabelPublished(
  trx: NetworkDb,
  tag: string,
  label: string,
  seq: number,
  now: number,
): Promise<void> {
  await trx.updateTable('network_published').set({ label, seq, updated_at: now }).where('tag', '=', tag).execute();
}

/** Adds entries; a tombstone of the same tag (flagged again after a withdrawal) is brought back. */
export async function upsertPublished(trx: NetworkDb, rows: PublishedRow[], now: number): Promise<void> {
  await trx
    .insertInto('network_published')
    .values(rows)
    .onConflict((oc) =>
      oc.column('tag').doUpdateSet((eb) => ({
        source: eb.ref('excluded.source'),
        id_type: eb.ref('excluded.id_type'),
        label: eb.ref('excluded.label'),
        label_key: eb.ref('excluded.label_key'),
        seq: eb.ref('excluded.seq'),
        updated_at: now,
      })),
    )
    .execute();
}

/**
 * Up to `limit` entries changed after `since`, in (seq, tag) order, after `cursor` when given;
 * `entriesOnly` leaves tombstones out (a pull from the start).
 */
export async function publishedPage(
  db: NetworkDb,
  since: number,
  cursor: { seq: number; tag: string } | undefined,
  entriesOnly: boolean,
  limit: number,
) {
  let query = db.selectFrom('network_published').select(['tag', 'label', 'label_key', 'seq']).where('seq', '>', since);
  if (cursor)
    query = query.where((eb) =>
      eb.or([eb('seq', '>', cursor.seq), eb.and([eb('seq', '=', cursor.seq), eb('tag', '>', cursor.tag)])]),
    );
  if (entriesOnly) query = query.where('label', 'is not', null);
  return query.orderBy('seq').orderBy('tag').limit(limit).execute();
}

/**
 * What scores read from the network changes with this number (bumped at every sync and peer
 * change): a cached score checks it with the store's versions (src/entities/profile-repository.ts).
 */
export const networkVersionSql = sql`(select max(ni.state_version) from network_identity ni)`;
