// A peer's matches (docs/network.md, "Using it"): the resolved identifiers whose tag is in the flag
// set pulled from the peer and whose label opens under the identifier's key. Scoring reads them.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import { openLabel } from './oprf.ts';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';

/** Labels opened between two yields to the event loop while matching. */
const MATCH_CHUNK = 500;

/**
 * Replaces the peer's matches by the resolved identifiers whose tag is in its set and whose label
 * opens. The resolved identifiers are walked 500 at a time in key order (each page one short
 * indexed read), yielding to the event loop between pages, so that a large set of identifiers or
 * of new flags does not hold the process's scores.
 */
export async function matchResolved(db: NetworkDb, peer: NetworkPeersTable): Promise<number> {
  const now = Date.now();
  const matches: Array<{ peer_id: string; id_type: string; hash: string; label: string; matched_at: number }> = [];
  let after: { id_type: string; hash: string } | undefined;
  for (;;) {
    let page = db
      .selectFrom('network_resolved as r')
      .leftJoin('network_peer_flags as f', (j) => j.onRef('f.peer_id', '=', 'r.peer_id').onRef('f.tag', '=', 'r.tag'))
      .select(['r.id_type', 'r.hash', 'r.tag', 'r.label_key', 'f.sealed'])
      .where('r.peer_id', '=', peer.id);
    const from = after;
    if (from)
      page = page.where((eb) =>
        eb.or([
          eb('r.id_type', '>', from.id_type),
          eb.and([eb('r.id_type', '=', from.id_type), eb('r.hash', '>', from.hash)]),
        ]),
      );
    const rows = await page.orderBy('r.id_type').orderBy('r.hash').limit(MATCH_CHUNK).execute();
    for (const row of rows) {
      const label =
        row.sealed === null ? undefined : openLabel(row.sealed, Buffer.from(row.label_key, 'base64url'), row.tag);
      if (label)
        matches.push({
          peer_id: peer.id,
          id_type: row.id_type,
          hash: row.hash,
          label: JSON.stringify(label),
          matched_at: now,
        });
    }
    if (rows.length < MATCH_CHUNK) break;
    after = rows[rows.length - 1];
    await yieldToLoop();
  }
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('network_matches').where('peer_id', '=', peer.id).execute();
    for (let i = 0; i < matches.length; i += 500)
      await trx
        .insertInto('network_matches')
        .values(matches.slice(i, i + 500))
        .execute();
  });
  return matches.length;
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
