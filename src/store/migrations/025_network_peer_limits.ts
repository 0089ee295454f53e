// What the syncing side keeps per peer to bound what a peer can make it store and send
// (docs/network.md, "Using it: the sync", and "A peer's limits"): how many of its flags are held
// (so the cap is checked without counting a million rows), the flags it added in the current
// 24-hour window, an OPRF key it showed but that is not adopted yet (a key is adopted only after it
// held a day), and until when it asked not to be called again (its 429s' Retry-After). A table of
// its own, one row per peer, written only by the sync.
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.ts';

export function networkPeerLimits(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('network_peer_sync')
        .addColumn('peer_id', 'text', (c) => c.primaryKey())
        .addColumn('flags_held', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('growth_since', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('growth_base', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('growth_added', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('oprf_seen', 'text')
        .addColumn('oprf_seen_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('evaluate_after', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('calls_after', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      // The flags already pulled count towards the cap from the first sync on.
      await sql`insert into network_peer_sync (peer_id, flags_held) select peer_id, count(*) from network_peer_flags group by peer_id`.execute(
        db,
      );
    },
  };
}
