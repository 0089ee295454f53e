// Slow peers against the syncing side (docs/network.md, "A peer's limits"): a call's timeout bounds
// the whole call, so a peer dripping its answer a byte at a time cannot hold it; a sync with one
// peer ends at its own deadline; and peers are synced side by side, so a slow peer never delays
// the sync with another. Nothing here measures time: the order of events at the peers says it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveKeyEncryption } from '../../src/auth/kek.ts';
import { loadIdentity } from '../../src/network/identity.ts';
import { syncAll, type SyncDeps } from '../../src/network/resolver.ts';
import { networkDb } from '../../src/network/tables.ts';
import { backends, bearer, startApp, testConfig, type TestContext } from '../helpers/app.ts';
import { hostilePeer, junkEntry, type HostilePeer } from './hostile-peer.ts';

type App = TestContext & { close(): Promise<void> };

for (const backend of backends()) {
  describe(`deadlines towards peers [${backend}]`, () => {
    let B: App;
    const events: string[] = [];
    let slow: HostilePeer;
    let fast: HostilePeer;
    const ids: Record<string, string> = {};
    let deps: SyncDeps;

    before(async () => {
      B = await startApp(backend, { network: { ...testConfig().network, allowPrivate: true } });
      // The slow peer is added first: a sync going through peers in turn would wait on it first.
      slow = await hostilePeer(events, 'slow');
      fast = await hostilePeer(events, 'fast');
      const token = await B.token();
      for (const [name, peer] of [
        ['slow', slow],
        ['fast', fast],
      ] as const) {
        const res = await B.inject({
          method: 'POST',
          url: '/api/v1/network/peers',
          headers: bearer(token),
          payload: { name, url: peer.url, signing_key: peer.identity.signingKey },
        });
        assert.equal(res.statusCode, 201, res.body);
        ids[name] = res.json().id;
      }
      const db = networkDb(B.store.db);
      deps = {
        db,
        identity: await loadIdentity(db, resolveKeyEncryption(B.config, B.store)),
        urlPolicy: { allowPrivate: true },
        timeoutMs: 1000,
        paging: { pageSize: 10, pagesPerSync: 100 },
      };
    });
    after(async () => {
      await slow.close();
      await fast.close();
      await B.close();
    });

    test("a peer dripping its answer a byte at a time is cut off at the call's timeout, while the other peer syncs meanwhile", async () => {
      // A byte every 50 ms: never idle for the 1 s timeout, and 30 s to send the whole of it.
      slow.on.descriptor = () => ({ text: JSON.stringify({ padding: 'x'.repeat(600) }), dripMs: 50 });
      fast.entries = [junkEntry()];
      events.length = 0;
      const results = await syncAll(deps);
      const bySlow = results.find((r) => r.id === ids.slow)!;
      assert.match(bySlow.error ?? '', /no complete answer within 1000 ms/);
      assert.equal(results.find((r) => r.id === ids.fast)!.error, undefined);
      // The slow peer sees its connection go once our side has dropped it.
      for (let i = 0; i < 100 && !events.includes('slow:closed'); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(
        events.indexOf('fast:flags') >= 0 && events.indexOf('fast:flags') < events.indexOf('slow:closed'),
        `the fast peer was synced while the slow one dripped: ${events.join(' ')}`,
      );
    });

    test('a sync with one peer ends at its deadline, however many calls within their own timeout it is made of', async () => {
      slow.on = {};
      // Each page answers within the call's timeout but the pull would take 100 of them.
      slow.on.flags = (q) => ({
        body: {
          epoch: '1.0',
          entries: [junkEntry()],
          next_cursor: `c${Number(q.get('cursor')?.slice(1) ?? 0) + 1}`,
          since: '0',
        },
        delayMs: 100,
      });
      const [bySlow] = (await syncAll({ ...deps, peerDeadlineMs: 1500 })).filter((r) => r.id === ids.slow);
      assert.match(bySlow!.error ?? '', /deadline of the sync with this peer/);
      assert.ok(
        bySlow!.flags_pulled > 0 && slow.calls.flags! < 100,
        `the pull stopped early (${bySlow!.flags_pulled} entries of ${slow.calls.flags} pages)`,
      );
      const row = await deps.db
        .selectFrom('network_peers')
        .select('flags_cursor')
        .where('id', '=', ids.slow!)
        .executeTakeFirstOrThrow();
      assert.notEqual(
        row.flags_cursor,
        '',
        'the pages applied before the deadline stay, and the next sync resumes after them',
      );
    });
  });
}
