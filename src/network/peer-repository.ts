// The peers' reads and writes (issue 41 item 1, one owner per table): network_peers (the peer, its
// pull position and last sync) and network_nonces (the nonces of its signed requests). peers.ts,
// peer-auth.ts, pull.ts and resolver.ts keep the checks and the protocol and call these. What is
// held of a peer's data is peer-data-repository.ts's, its sync state peer-sync-repository.ts's.
// Each takes the executor: a Kysely instance or a transaction.
import type { Updateable } from 'kysely';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';

export async function listPeers(db: NetworkDb, status?: 'active'): Promise<NetworkPeersTable[]> {
  let query = db.selectFrom('network_peers').selectAll().orderBy('created_at').orderBy('id');
  if (status) query = query.where('status', '=', status);
  return query.execute();
}

export const findPeer = (db: NetworkDb, id: string) =>
  db.selectFrom('network_peers').selectAll().where('id', '=', id).executeTakeFirst();

/** The peer whose pinned signing key is `key`. */
export const peerBySigningKey = (db: NetworkDb, key: string) =>
  db.selectFrom('network_peers').selectAll().where('signing_key', '=', key).executeTakeFirst();

/** The id of the peer whose pinned signing key is `key`, if any. */
export const peerIdBySigningKey = (db: NetworkDb, key: string) =>
  db.selectFrom('network_peers').select('id').where('signing_key', '=', key).executeTakeFirst();

/** Some active peer, if there is one. */
export const anyActivePeer = (db: NetworkDb) =>
  db.selectFrom('network_peers').select('id').where('status', '=', 'active').limit(1).executeTakeFirst();

export async function insertPeer(db: NetworkDb, row: NetworkPeersTable): Promise<void> {
  await db.insertInto('network_peers').values(row).execute();
}

export async function updatePeerColumns(
  db: NetworkDb,
  id: string,
  changes: Updateable<NetworkPeersTable>,
): Promise<void> {
  await db.updateTable('network_peers').set(changes).where('id', '=', id).execute();
}

export async function suspendPeer(db: NetworkDb, id: string): Promise<void> {
  await db.updateTable('network_peers').set({ status: 'suspended' }).where('id', '=', id).execute();
}

export async function deletePeerRow(trx: NetworkDb, id: string): Promise<void> {
  await trx.deleteFrom('network_peers').where('id', '=', id).execute();
}

export async function setPeerOprfKey(db: NetworkDb, id: string, oprf: string): Promise<void> {
  await db.updateTable('network_peers').set({ oprf_public: oprf }).where('id', '=', id).execute();
}

export async function setPeerError(db: NetworkDb, id: string, error: string): Promise<void> {
  await db.updateTable('network_peers').set({ last_error: error }).where('id', '=', id).execute();
}

export async function markPeerSynced(db: NetworkDb, id: string, at: number, error: string | null): Promise<void> {
  await db.updateTable('network_peers').set({ last_sync_at: at, last_error: error }).where('id', '=', id).execute();
}

/** Where the pull from the peer stands: since, cursor and the peer's epoch ('' everywhere: from the start). */
export async function setPullPosition(
  trx: NetworkDb,
  id: string,
  position: { flags_since: string; flags_cursor: string; flags_epoch: string },
): Promise<void> {
  await trx.updateTable('network_peers').set(position).where('id', '=', id).execute();
}

/** Records a request's nonce; false when the peer used it already (a replay). */
export async function insertNonce(db: NetworkDb, peerId: string, nonce: string, expiresAt: number): Promise<boolean> {
  const inserted = await db
    .insertInto('network_nonces')
    .values({ peer_id: peerId, nonce, expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['peer_id', 'nonce']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 0;
}

/** Forgets nonces past their window (they can no longer be replayed: the timestamp check refuses them). */
export async function pruneNonces(db: NetworkDb): Promise<void> {
  await db.deleteFrom('network_nonces').where('expires_at', '<', Date.now()).execute();
}

export async function deletePeerNonces(trx: NetworkDb, peerId: string): Promise<void> {
  await trx.deleteFrom('network_nonces').where('peer_id', '=', peerId).execute();
}
