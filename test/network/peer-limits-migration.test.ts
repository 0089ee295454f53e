// 025_network_peer_limits over a store whose peers were pulled before it: the flags already held
// count towards each peer's cap from the first sync on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { syncStateDb } from '../../src/network/peer-sync-repository.ts';
import { networkDb } from '../../src/network/tables.ts';
import { backends } from '../helpers/app.ts';
import { storeMigratedBefore } from '../helpers/migrations.ts';

for (const backend of backends()) {
  test(`025_network_peer_limits counts the flags each peer already has [${backend}]`, async (t) => {
    const { store, drop } = await storeMigratedBefore(backend, '025');
    t.after(drop);
    for (const [peer, n] of [
      ['peer_a', 3],
      ['peer_b', 1],
    ] as const) {
      for (let i = 0; i < n; i++)
        await sql`insert into network_peer_flags (peer_id, tag, sealed) values (${peer}, ${`t${i}`}, 's')`.execute(
          store.db,
        );
    }
    await store.migrate();
    const rows = await syncStateDb(networkDb(store.db))
      .selectFrom('network_peer_sync')
      .select(['peer_id', 'flags_held', 'growth_since'])
      .orderBy('peer_id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.peer_id, Number(r.flags_held), Number(r.growth_since)]),
      [
        ['peer_a', 3, 0],
        ['peer_b', 1, 0],
      ],
    );
  });
}
