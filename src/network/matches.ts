// A peer's matches (docs/network.md, "Using it"): the resolved identifiers whose tag is in the flag
// set pulled from the peer and whose label opens under the identifier's key. Scoring reads them.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { openLabel } from './oprf.ts';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';
import { replaceMatches, resolvedWithFlags } from './match-repository.ts';

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
    const rows = await resolvedWithFlags(db, peer.id, after, MATCH_CHUNK);
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
  await replaceMatches(db, peer.id, matches);
  return matches.length;
}
