// What the syncing side keeps per peer to bound the peer (migration 025_network_peer_limits;
// docs/network.md, "A peer's limits"). One row per peer, created at its first sync, removed with it.
// This file owns network_peer_sync (issue 41 item 1, one owner per table); each function takes the
// executor: a Kysely instance or a transaction.
import type { Kysely } from 'kysely';
import type { NetworkDb } from './tables.ts';

export interface NetworkPeerSyncTable {
  peer_id: string;
  /** rows of network_peer_flags held for the peer, kept with every page applied */
  flags_held: number;
  /** start (epoch ms) of the 24-hour window in which new flags are counted; 0: none yet */
  growth_since: number;
  /** flags held when the window started: the window allows max(DAILY_GROWTH_FLOOR, this) new ones */
  growth_base: number;
  /** new flags stored in the window */
  growth_added: number;
  /** an OPRF key the descriptor showed that is not adopted yet, and when it was first seen */
  oprf_seen: string | null;
  oprf_seen_at: number;
  /** the peer answered evaluate with 429: no evaluate call before this (epoch ms) */
  evaluate_after: number;
  /** the peer answered another call with 429: no call at all before this (epoch ms) */
  calls_after: number;
}

export type SyncStateDb = Kysely<
  NetworkDb extends Kysely<infer T> ? T & { network_peer_sync: NetworkPeerSyncTable } : never
>;

export const syncStateDb = (db: NetworkDb): SyncStateDb => db.withTables<{ network_peer_sync: NetworkPeerSyncTable }>();

export interface PeerSyncState {
  flagsHeld: number;
  growthSince: number;
  growthBase: number;
  growthAdded: number;
  oprfSeen: string | null;
  oprfSeenAt: number;
  evaluateAfter: number;
  callsAfter: number;
}

/** The peer's state (a fresh one when it has never been synced). */
export async function readSyncState(db: NetworkDb, peerId: string): Promise<PeerSyncState> {
  const row = await syncStateDb(db)
    .selectFrom('network_peer_sync')
    .selectAll()
    .where('peer_id', '=', peerId)
    .executeTakeFirst();
  return {
    flagsHeld: Number(row?.flags_held ?? 0),
    growthSince: Number(row?.growth_since ?? 0),
    growthBase: Number(row?.growth_base ?? 0),
    growthAdded: Number(row?.growth_added ?? 0),
    oprfSeen: row?.oprf_seen ?? null,
    oprfSeenAt: Number(row?.oprf_seen_at ?? 0),
    evaluateAfter: Number(row?.evaluate_after ?? 0),
    callsAfter: Number(row?.calls_after ?? 0),
  };
}

/** Writes the peer's state (all of it: one writer, the sync with that peer). */
export async function writeSyncState(db: NetworkDb | Kysely<never>, peerId: string, s: PeerSyncState): Promise<void> {
  const row = {
    flags_held: s.flagsHeld,
    growth_since: s.growthSince,
    growth_base: s.growthBase,
    growth_added: s.growthAdded,
    oprf_seen: s.oprfSeen,
    oprf_seen_at: s.oprfSeenAt,
    evaluate_after: s.evaluateAfter,
    calls_after: s.callsAfter,
  };
  await syncStateDb(db as NetworkDb)
    .insertInto('network_peer_sync')
    .values({ peer_id: peerId, ...row })
    .onConflict((oc) => oc.column('peer_id').doUpdateSet(row))
    .execute();
}

/** A removed peer's state (peers.ts: removePeer, in its transaction). */
export async function deleteSyncState(trx: NetworkDb, peerId: string): Promise<void> {
  await syncStateDb(trx).deleteFrom('network_peer_sync').where('peer_id', '=', peerId).execute();
}
