// A client's quota of identifiers waiting for the peers (docs/network.md, "Order and fairness"):
// beyond it what its requests name is dropped and counted, another client is not affected, a new
// sighting of a queued identifier costs nothing, and once the sync has every active peer resolve
// the client's rows they stop counting and there is room again. The quota is a setting.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { loadConfig } from '../../src/config/env.ts';
import { ConfigError } from '../../src/config/env-values.ts';
import { PendingIdentifiers } from '../../src/network/pending.ts';
import { settleQueue } from '../../src/network/match-repository.ts';
import { networkDb } from '../../src/network/tables.ts';
import { standInPeer } from './support.ts';

const ENTITY = 'd4'.repeat(32);
const ID = (n: number) => ({ type: 'email', hash: `${n}`.padStart(4, '0').repeat(16) });

test('VOUCH_NETWORK_PENDING_PER_CLIENT: 1000 by default, 10 to 1,000,000', () => {
  assert.equal(loadConfig({}).network.pendingPerClient, 1000);
  assert.equal(loadConfig({ VOUCH_NETWORK_PENDING_PER_CLIENT: '50' }).network.pendingPerClient, 50);
  assert.throws(() => loadConfig({ VOUCH_NETWORK_PENDING_PER_CLIENT: '5' }), ConfigError);
});

describeEachBackend("a client's quota of queued identifiers", (ctx) => {
  test('over the quota: dropped and counted; others unaffected; room again once the peers resolved them', async () => {
    const db = networkDb(ctx().store.db);
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/network/peers',
      headers: bearer(await ctx().token()),
      payload: { name: 'p', url: 'https://93.184.216.34', signing_key: standInPeer().signingKey },
    });
    assert.equal(res.statusCode, 201, res.body);
    const peerId = res.json().id as string;
    let dropped = 0;
    const pending = new PendingIdentifiers(db, (err) => assert.fail(String(err)), 60_000, 3);
    pending.onDropped = (n) => (dropped += n);
    const rows = async (client: string) =>
      (
        await db.selectFrom('network_pending').select('hash').where('client_id', '=', client).orderBy('hash').execute()
      ).map((r) => r.hash);

    pending.add('live', [ID(1), ID(2), ID(3), ID(4), ID(5)], ENTITY, 'noisy');
    pending.add('live', [ID(9)], ENTITY, 'quiet');
    await pending.flush();
    assert.deepEqual(await rows('noisy'), [ID(1).hash, ID(2).hash, ID(3).hash]);
    assert.deepEqual(await rows('quiet'), [ID(9).hash]);
    assert.equal(dropped, 2);

    // The queue is full: a new identifier is dropped, a queued one named again is only refreshed.
    await db.updateTable('network_pending').set({ seen_at: 1 }).execute();
    const fresh = new PendingIdentifiers(db, (err) => assert.fail(String(err)), 60_000, 3);
    fresh.onDropped = (n) => (dropped += n);
    fresh.add('live', [ID(1), ID(6)], ENTITY, 'noisy');
    await fresh.flush();
    assert.deepEqual(await rows('noisy'), [ID(1).hash, ID(2).hash, ID(3).hash]);
    assert.equal(dropped, 3);
    assert.ok(
      Number(
        (
          await db
            .selectFrom('network_pending')
            .select('seen_at')
            .where('hash', '=', ID(1).hash)
            .executeTakeFirstOrThrow()
        ).seen_at,
      ) > 1,
    );

    // The sync had the peer resolve two of them: they stop counting, and two new ones fit.
    await db
      .insertInto('network_resolved')
      .values(
        [ID(1), ID(2)].map((id) => ({
          peer_id: peerId,
          id_type: id.type,
          hash: id.hash,
          oprf_public: 'k',
          tag: 't',
          label_key: 'l',
          resolved_at: Date.now(),
        })),
      )
      .execute();
    await settleQueue(db);
    const after = new PendingIdentifiers(db, (err) => assert.fail(String(err)), 60_000, 3);
    after.onDropped = (n) => (dropped += n);
    after.add('live', [ID(6), ID(7), ID(8)], ENTITY, 'noisy');
    await after.flush();
    assert.deepEqual(await rows('noisy'), [ID(1).hash, ID(2).hash, ID(3).hash, ID(6).hash, ID(7).hash]);
    assert.equal(dropped, 4);
    for (const p of [pending, fresh, after]) p.stop();
  });
});
