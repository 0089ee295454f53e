// A peer's pulled data deleted a chunk at a time, each chunk its own short transaction with a
// yield to the event loop between (docs/network.md, "A peer's limits"): a peer that made this
// deployment hold a million rows cannot make their removal hold SQLite's write lock, or the
// process, for seconds. SQLite reuses the freed pages without a VACUUM (docs/operations.md).
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import { DELETE_CHUNK } from './limits.ts';
import type { NetworkDb } from './tables.ts';

/** The key columns of each table a peer's data lives in, beside peer_id. */
const KEYS = {
  network_peer_flags: ['tag'],
  network_resolved: ['id_type', 'hash'],
  network_matches: ['id_type', 'hash'],
} as const;

export type PeerDataTable = keyof typeof KEYS;

/** Deletes the peer's rows of `table` in chunks; returns how many went. */
export async function deletePeerRows(
  db: NetworkDb,
  table: PeerDataTable,
  peerId: string,
  chunk = DELETE_CHUNK,
): Promise<number> {
  const keys = sql.join(KEYS[table].map((k) => sql.ref(k)));
  const from = sql.table(table);
  let deleted = 0;
  for (;;) {
    // A row value against a bounded sub-select: portable (SQLite ≥ 3.15, PostgreSQL) and one index range per chunk.
    const result =
      await sql`delete from ${from} where peer_id = ${peerId} and (${keys}) in (select ${keys} from ${from} where peer_id = ${peerId} limit ${chunk})`.execute(
        db,
      );
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < chunk) return deleted;
    await yieldToLoop();
  }
}

/** Everything pulled from or resolved with the peer, chunk by chunk. */
export async function deletePeerData(db: NetworkDb, peerId: string, chunk = DELETE_CHUNK): Promise<void> {
  for (const table of Object.keys(KEYS) as PeerDataTable[]) await deletePeerRows(db, table, peerId, chunk);
}
