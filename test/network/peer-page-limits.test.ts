// A malicious peer's flag pages against the syncing side (docs/network.md, "A peer's limits"): a
// page with more entries than asked, labels not of a label's size, an answer of megabytes or nested
// thousands deep are refused and store nothing; the flags held per peer stop at the cap, and a peer
// adding more than its history allows in 24 hours is held back with an alert (metric and log line
// naming the peer id).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { resolveKeyEncryption } from '../../src/auth/kek.ts';
import { loadIdentity, type NetworkIdentity } from '../../src/network/identity.ts';
import { networkMetrics } from '../../src/network/metrics.ts';
import { syncAll, type SyncDeps } from '../../src/network/resolver.ts';
import { syncStateDb } from '../../src/network/peer-sync-repository.ts';
import { networkDb, type NetworkDb } from '../../src/network/tables.ts';
import { backends, bearer, startApp, testConfig, type TestContext } from '../helpers/app.ts';
import { hostilePeer, junkEntry, type HostilePeer } from './hostile-peer.ts';

type App = TestContext & { close(): Promise<void> };
const hash = (n: number) => `${n}`.padStart(4, '0').repeat(16);

for (const backend of backends()) {
  describe(`a peer's flag pages are bounded [${backend}]`, () => {
    let B: App;
    let M: HostilePeer;
    let db: NetworkDb;
    let identity: NetworkIdentity;
    let peerId = '';
    const warnings: Array<Record<string, unknown>> = [];
    let deps: SyncDeps;
    const held = async () =>
      (await db.selectFrom('network_peer_flags').select('tag').where('peer_id', '=', peerId).execute()).length;
    const sync = async (extra: Partial<SyncDeps> = {}) => (await syncAll({ ...deps, ...extra }))[0]!;

    before(async () => {
      B = await startApp(backend, { network: { ...testConfig().network, allowPrivate: true } });
      M = await hostilePeer();
      const token = await B.token();
      const res = await B.inject({
        method: 'POST',
        url: '/api/v1/network/peers',
        headers: bearer(token),
        payload: { name: 'M', url: M.url, signing_key: M.identity.signingKey },
      });
      assert.equal(res.statusCode, 201, res.body);
      peerId = res.json().id;
      const linked = await B.inject({
        method: 'POST',
        url: '/api/v1/trust/events',
        headers: bearer(token),
        payload: {
          events: [
            {
              event_id: 'e-1',
              type: 'identifier.linked',
              entity_id: hash(1),
              occurred_at: new Date(Date.now() - 60_000).toISOString(),
              linked_identifiers: [{ type: 'phone', hash: hash(2) }],
            },
          ],
        },
      });
      assert.equal(linked.statusCode, 200, linked.body);
      db = networkDb(B.store.db);
      identity = await loadIdentity(db, resolveKeyEncryption(B.config, B.store));
      deps = {
        db,
        identity,
        urlPolicy: { allowPrivate: true },
        timeoutMs: 10_000,
        paging: { pageSize: 10, pagesPerSync: 5 },
        metrics: networkMetrics(B.app.metrics),
        log: { warn: (obj) => warnings.push(obj as Record<string, unknown>) },
      };
    });
    after(async () => {
      await M.close();
      await B.close();
    });
    beforeEach(async () => {
      M.on = {};
      M.entries = [];
      warnings.length = 0;
      await db.deleteFrom('network_peer_flags').execute();
      await syncStateDb(db).deleteFrom('network_peer_sync').execute();
      await db.updateTable('network_peers').set({ flags_since: '', flags_cursor: '', flags_epoch: '' }).execute();
    });

    test('a page with more entries than were asked is refused whole', async () => {
      M.on.flags = () => ({
        body: { epoch: '1.0', entries: Array.from({ length: 25 }, () => junkEntry()), next_cursor: null, since: '1' },
      });
      const result = await sync();
      assert.match(result.error ?? '', /25 entries where at most 10 were asked/);
      assert.equal(await held(), 0);
    });

    test('a sealed label longer than any label, or shorter, or a tag not of 32 bytes, is refused whole', async () => {
      for (const entry of [junkEntry(4096), junkEntry(20), { tag: 'x'.repeat(40), sealed: junkEntry().sealed }]) {
        M.on.flags = () => ({ body: { epoch: '1.0', entries: [junkEntry(), entry], next_cursor: null, since: '1' } });
        const result = await sync();
        assert.match(result.error ?? '', /flags: an entry/);
        assert.equal(await held(), 0);
      }
    });

    test("an answer of megabytes is cut off at the page's size; one nested thousands deep is refused before it is parsed", async () => {
      M.on.flags = () => ({
        text: JSON.stringify({
          epoch: '1.0',
          entries: [junkEntry()],
          next_cursor: null,
          since: '1',
          padding: 'x'.repeat(16 * 1024 * 1024),
        }),
      });
      assert.match((await sync()).error ?? '', /larger than the \d+ bytes this call allows/);
      // Within the page's size (7.6 KB for 10 entries), but 3,000 deep.
      M.on.flags = () => ({
        text: `{"epoch":"1.0","since":"1","next_cursor":null,"entries":[${'['.repeat(3000)}${']'.repeat(3000)}]}`,
      });
      assert.match((await sync()).error ?? '', /nested deeper than 8/);
      assert.equal(await held(), 0);
    });

    test('the flags held per peer stop at the cap: the page that would pass it waits, and the operator is told', async () => {
      M.entries = Array.from({ length: 10 }, () => junkEntry());
      assert.equal((await sync({ maxFlagsPerPeer: 15 })).error, undefined);
      M.entries = Array.from({ length: 10 }, () => junkEntry());
      M.on.flags = (q) => ({
        body: { epoch: '1.0', entries: M.entries.slice(0, Number(q.get('limit'))), next_cursor: null, since: '2' },
      });
      const result = await sync({ maxFlagsPerPeer: 15 });
      assert.match(result.error ?? '', /would pass the 15 flags held per peer \(VOUCH_NETWORK_MAX_FLAGS_PER_PEER\)/);
      assert.equal(await held(), 10);
      assert.deepEqual(
        warnings.map((w) => [w.event, w.peer_id, w.reason]),
        [['network_peer_growth', peerId, 'cap']],
      );
      assert.match(await B.app.metrics.registry.metrics(), /vouch_network_peer_growth_refused_total\{reason="cap"\} 1/);
    });

    test('a peer adding more flags in 24 hours than max(10,000, its set) is held back; updates of flags it has are not growth', async () => {
      M.entries = Array.from({ length: 6 }, () => junkEntry());
      assert.equal((await sync()).error, undefined);
      // The window already counts 9,996 new flags: six updates pass, four new ones pass, the fifth waits.
      await syncStateDb(db)
        .updateTable('network_peer_sync')
        .set({ growth_added: 9_996 })
        .where('peer_id', '=', peerId)
        .execute();
      M.entries = [
        ...M.entries.map((e) => ({ ...e, sealed: junkEntry().sealed })),
        ...Array.from({ length: 4 }, () => junkEntry()),
      ];
      M.on.flags = () => ({ body: { epoch: '1.0', entries: M.entries, next_cursor: null, since: '2' } });
      assert.equal((await sync()).error, undefined);
      assert.equal(await held(), 10);
      M.on.flags = () => ({ body: { epoch: '1.0', entries: [junkEntry()], next_cursor: null, since: '3' } });
      const result = await sync();
      assert.match(result.error ?? '', /the peer added more than 10000 flags in 24 hours/);
      assert.equal(await held(), 10);
      assert.equal(warnings.at(-1)?.reason, 'growth');
      assert.equal(warnings.at(-1)?.peer_id, peerId);
      const state = await syncStateDb(db)
        .selectFrom('network_peer_sync')
        .selectAll()
        .where('peer_id', '=', peerId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(state.flags_held), 10);
    });
  });
}
