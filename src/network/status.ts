// The network at a glance, for `vouch network status` and GET /api/v1/network/status: this
// deployment's identity and what it publishes, and per peer its state, last sync, what was pulled
// and matched, and the budget it used in the last 24 hours (the budget's window). Counts only.
import type { NetworkIdentity } from './identity.ts';
import { usedInWindow } from './budget-repository.ts';
import { toPeerRecord } from './peers.ts';
import { listPeers } from './peer-repository.ts';
import { countPeerFlags } from './peer-data-repository.ts';
import { countPublished } from './publication-repository.ts';
import { countMatches, countResolved } from './match-repository.ts';
import type { NetworkDb } from './tables.ts';

export async function networkStatus(db: NetworkDb, identity: NetworkIdentity, name: string) {
  const published = await countPublished(db);
  const peers = [];
  for (const peer of await listPeers(db)) {
    peers.push({
      ...toPeerRecord(peer),
      last_error: peer.last_error,
      flags_held: await countPeerFlags(db, peer.id),
      identifiers_resolved: await countResolved(db, peer.id),
      matched: await countMatches(db, peer.id),
      evaluations_today: await usedInWindow(db, peer.id),
    });
  }
  return { name, signing_key: identity.signingKey, oprf_public_key: identity.oprfPublicKey, published, peers };
}
