// 020_network_incremental over a store with network rows from before it: queued context identifiers
// are kept (tied to no entity), published rows have no type,
// and the identity's watermark is 0, so the first refresh starts from the whole flagged set; after
// 027_network_fairness such a row belongs to no client ('') and counts as waiting for a peer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { backends } from '../helpers/app.ts';
import { storeMigratedBefore } from '../helpers/migrations.ts';
import { networkDb } from '../../src/network/tables.ts';

for (const backend of backends()) {
  test(`020_network_incremental keeps what was queued and published before it [${backend}]`, async (t) => {
    const { store, drop } = await storeMigratedBefore(backend, '020');
    t.after(drop);
    await sql`insert into network_pending (id_type, hash, seen_at) values ('email', ${'ab'.repeat(32)}, 5)`.execute(
      store.db,
    );
    await sql`insert into network_published (tag, source, label, label_key, seq, updated_at) values ('t', 's', '{}', 'k', 1, 1)`.execute(
      store.db,
    );
    await sql`insert into network_identity (id, signing_private, signing_public, oprf_secret, oprf_public, sync_lease_until, state_version, created_at) values ('self', 'x', 'x', 'x', 'x', 0, 0, 1)`.execute(
      store.db,
    );
    await store.migrate();
    const db = networkDb(store.db);
    const pending = await db.selectFrom('network_pending').selectAll().execute();
    assert.deepEqual(
      pending.map((p) => ({ ...p, seen_at: Number(p.seen_at) })),
      [{ id_type: 'email', hash: 'ab'.repeat(32), entity_id: '', seen_at: 5, client_id: '', queued: 1 }],
    );
    assert.equal((await db.selectFrom('network_published').select('id_type').executeTakeFirstOrThrow()).id_type, null);
    assert.equal(
      Number(
        (await db.selectFrom('network_identity').select('published_through').executeTakeFirstOrThrow())
          .published_through,
      ),
      0,
    );
    // The same identifier queued for two entities is two rows now.
    await db
      .insertInto('network_pending')
      .values({ id_type: 'email', hash: 'ab'.repeat(32), entity_id: 'e1', seen_at: 6 })
      .execute();
    assert.equal((await db.selectFrom('network_pending').selectAll().execute()).length, 2);
  });
}
