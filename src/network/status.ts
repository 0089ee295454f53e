// The network at a glance, for `vouch network status` and GET /api/v1/network/status: this
// deployment's identity and what it publishes, and per peer its state, last sync, what was pulled
// and matched, and the budget it used in the last 24 hours (the budget's window). Counts only.
import { sql } from 'kysely';
import type { NetworkIdentity } from './identity.ts';
import { usedInWindow } from './budget.ts';
import { listPeers, toPeerRecord } from './peers.ts';
import type { NetworkDb } from './tables.ts';

const count = async (query: { executeTakeFirst(): Promise<{ n: number | string } | undefined> }) =>
  Number((await query.executeTakeFirst())?.n ?? 0);

export async function networkStatus(db: NetworkDb, identity: NetworkIdentity, name: string) {
  const published = await count(
    db
      .selectFrom('network_published')
      .select(sql<number>`count(*)`.as('n'))
      .where('label', 'is not', null),
  );
  const peers = [];
  for (const peer of await listPeers(db)) {
    peers.push({
      ...toPeerRecord(peer),
      last_error: peer.last_error,
      flags_held: await count(
        db
          .selectFrom('network_peer_flags')
          .select(sql<number>`count(*)`.as('n'))
          .where('peer_id', '=', peer.id),
      ),
      identifiers_resolved: await count(
        db
          .selectFrom('network_resolved')
          .select(sql<number>`count(*)`.as('n'))
          .where('peer_id', '=', peer.id),
      ),
      matched: await count(
        db
          .selectFrom('network_matches')
          .select(sql<number>`count(*)`.as('n'))
          .where('peer_id', '=', peer.id),
      ),
      evaluations_today: await usedInWindow(db, peer.id),
    });
  }
  return { name, signing_key: identity.signingKey, oprf_public_key: identity.oprfPublicKey, published, peers };
}
