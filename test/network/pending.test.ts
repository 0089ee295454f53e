// The queue of identifiers named only in score requests (docs/network.md, "Using it"): nothing is
// kept while the deployment has no active peer, test data is never queued, and what is queued is
// written once, refreshed on the next sighting after an hour, and dropped 30 days after the last.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { PENDING_RETENTION_MS, PendingIdentifiers } from '../../src/network/pending.ts';
import { networkDb } from '../../src/network/tables.ts';
import { standInPeer } from './support.ts';

const ENTITY = 'ee'.repeat(32);
const ID = (n: number) => ({ type: 'email', hash: `${n}`.padStart(4, '0').repeat(16) });

describeEachBackend('network_pending', (ctx) => {
  const db = () => networkDb(ctx().store.db);
  const queued = async () =>
    (await db().selectFrom('network_pending').select(['id_type', 'hash']).orderBy('hash').execute()).map((r) => r.hash);

  test('no active peer: the queue writes nothing; test data is never queued', async () => {
    const errors: unknown[] = [];
    const pending = new PendingIdentifiers(db(), (err) => errors.push(err), 60_000);
    pending.add('live', [ID(1), ID(2)], ENTITY);
    await pending.flush();
    assert.deepEqual(await queued(), []);
    pending.add('test', [ID(3)], ENTITY);
    await pending.flush();
    assert.deepEqual(await queued(), []);
    assert.deepEqual(errors, []);
  });

  test('with an active peer: written once, duplicates folded, and expired entries dropped by the sync', async () => {
    const admin = await ctx().token();
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/network/peers',
      headers: bearer(admin),
      payload: { name: 'p', url: 'https://93.184.216.34', signing_key: standInPeer().signingKey },
    });
    assert.equal(res.statusCode, 201, res.body);
    const pending = new PendingIdentifiers(db(), (err) => assert.fail(String(err)), 60_000);
    pending.add('live', [ID(1), ID(2), ID(1)], ENTITY);
    pending.add('test', [ID(3)], ENTITY);
    await pending.flush();
    assert.deepEqual(await queued(), [ID(1).hash, ID(2).hash]);
    // Seen again within the hour: not rewritten (its seen_at stays).
    await db().updateTable('network_pending').set({ seen_at: 1 }).where('hash', '=', ID(1).hash).execute();
    pending.add('live', [ID(1)], ENTITY);
    await pending.flush();
    assert.equal(
      Number(
        (
          await db()
            .selectFrom('network_pending')
            .select('seen_at')
            .where('hash', '=', ID(1).hash)
            .executeTakeFirstOrThrow()
        ).seen_at,
      ),
      1,
    );
    // A sync drops what no score named for the retention period (seen_at 1 is long past it).
    assert.ok(Date.now() - 1 > PENDING_RETENTION_MS);
    await db().deleteFrom('network_peers').execute();
    const sync = await ctx().inject({ method: 'POST', url: '/api/v1/network/sync', headers: bearer(admin) });
    assert.equal(sync.statusCode, 200, sync.body);
    assert.deepEqual(await queued(), [ID(2).hash]);
    pending.stop();
  });
});

describeEachBackend('network_pending and erasure', (ctx) => {
  test("identifiers a score named for an entity are tied to it and go with its erasure; another entity's stay", async () => {
    const admin = await ctx().token();
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/network/peers',
      headers: bearer(admin),
      payload: { name: 'p', url: 'https://93.184.216.34', signing_key: standInPeer().signingKey },
    });
    assert.equal(res.statusCode, 201, res.body);
    const [erased, kept] = ['e1'.repeat(32), 'e2'.repeat(32)];
    for (const [entity, ids] of [
      [erased, [ID(11), ID(12)]],
      [kept, [ID(12), ID(13)]],
    ] as const) {
      const scored = await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        headers: bearer(admin),
        payload: { entity_id: entity, amount: 10, currency: 'USD', context: { linked_identifiers: ids } },
      });
      assert.equal(scored.statusCode, 200, scored.body);
    }
    const db = () => networkDb(ctx().store.db);
    const rows = async () =>
      (
        await db()
          .selectFrom('network_pending')
          .select(['hash', 'entity_id'])
          .orderBy('hash')
          .orderBy('entity_id')
          .execute()
      ).map((r) => `${r.hash.slice(0, 4)}:${r.entity_id.slice(0, 2)}`);
    // The queue writes within a second of the scores, in the background.
    for (let i = 0; i < 100 && (await rows()).length < 4; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await rows(), ['0011:e1', '0012:e1', '0012:e2', '0013:e2']);
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/api/v1/trust/entities/${erased}`, headers: bearer(admin) }))
        .statusCode,
      200,
    );
    assert.deepEqual(await rows(), ['0012:e2', '0013:e2']);
  });
});
