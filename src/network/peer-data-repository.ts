// What this deployment holds of a peer (issue 41 item 1, one owner per table): the flag set pulled
// from it (network_peer_flags; pull.ts applies the pages through these), and the removal of
// everything held of it — flags, resolutions, matches — a chunk at a time, each chunk its own short
// transaction with a yield to the event loop between (docs/network.md, "A peer's limits"): a peer
// that made this deployment hold a million rows cannot make their removal hold SQLite's write lock,
// or the process, for seconds. SQLite reuses the freed pages without a VACUUM (docs/operations.md).
// Each function takes the executor: a Kysely instance or a transaction.
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

/** Which of `tags` the peer's stored set holds (indexed lookups, 500 at a time). */
export async function storedTags(db: NetworkDb, peerId: string, tags: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < tags.length; i += 500) {
    const rows = await db
      .selectFrom('network_peer_flags')
      .select('tag')
      .where('peer_id', '=', peerId)
      .where('tag', 'in', tags.slice(i, i + 500))
      .execute();
    for (const row of rows) found.add(row.tag);
  }
  return found;
}

/** Deletes the withdrawn `tags` from the peer's set, 500 at a time. */
export async function deletePeerFlags(trx: NetworkDb, peerId: string, tags: string[]): Promise<void> {
  for (let i = 0; i < tags.length; i += 500)
    await trx
      .deleteFrom('network_peer_flags')
      .where('peer_id', '=', peerId)
      .where('tag', 'in', tags.slice(i, i + 500))
      .execute();
}

/** Stores the peer's flags (a tag already held takes the new sealed label), 500 at a time. */
export async function upsertPeerFlags(
  trx: NetworkDb,
  rows: Array<{ peer_id: string; tag: string; sealed: string }>,
): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await trx
      .insertInto('network_peer_flags')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.columns(['peer_id', 'tag']).doUpdateSet((eb) => ({ sealed: eb.ref('excluded.sealed') })))
      .execute();
  }
}

/** Flags held for the peer. */
export async function countPeerFlags(db: NetworkDb, peerId: string): Promise<number> {
  return Number(
    (
      await db
        .selectFrom('network_peer_flags')
        .select(sql<number>`count(*)`.as('n'))
        .where('peer_id', '=', peerId)
        .executeTakeFirst()
    )?.n ?? 0,
  );
}
