// Deployments as apps with their own stores, talking over loopback (docs/network.md): a large pull
// spreads over several syncs, each resuming at the cursor the last one stored, and a withdrawal
// made meanwhile still arrives; a peer lost in the middle of a pull leaves the cursor for the next
// sync; with the common entity hashing on at A and B, an entity A flagged
// (with no identifier linked) is matched by B's entity of the same id and scored there, while C,
// without the setting, learns nothing of it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { backends, bearer, startApp, testConfig, type TestContext } from '../helpers/app.ts';
import { resolveKeyEncryption } from '../../src/auth/kek.ts';
import { loadIdentity } from '../../src/network/identity.ts';
import { syncAll } from '../../src/network/resolver.ts';
import { networkDb } from '../../src/network/tables.ts';

type App = TestContext & { close(): Promise<void> };
const hash = (n: number) => `${n}`.padStart(4, '0').repeat(16);
const at = () => new Date(Date.now() - 60_000).toISOString();
const X = 'ab'.repeat(32);

for (const backend of backends()) {
  describe(`deployments on loopback [${backend}]`, () => {
    const apps: Record<'A' | 'B' | 'C', App> = {} as never;
    const tokens: Record<string, string> = {};
    const peerAt: Record<string, string> = {};
    let urlOfA = '';
    const call = async (d: 'A' | 'B' | 'C', method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => {
      const res = await apps[d].inject({ method, url, headers: bearer(tokens[d]!), ...(payload ? { payload } : {}) });
      assert.ok(res.statusCode < 300, `${d} ${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const network = (common: boolean) => ({
      network: { ...testConfig().network, allowPrivate: true, commonEntityIds: common },
    });

    before(async () => {
      apps.A = await startApp(backend, network(true));
      apps.B = await startApp(backend, network(true));
      apps.C = await startApp(backend, network(false));
      await apps.A.app.listen({ port: 0, host: '127.0.0.1' });
      urlOfA = `http://127.0.0.1:${(apps.A.app.server.address() as AddressInfo).port}`;
      for (const d of ['A', 'B', 'C'] as const) tokens[d] = await apps[d].token();
      const descriptor = (d: 'A' | 'B' | 'C') =>
        apps[d].inject({ method: 'GET', url: '/network/v1/descriptor' }).then((r) => r.json());
      const a = await descriptor('A');
      for (const d of ['B', 'C'] as const) {
        peerAt[d] = (
          await call(d, 'POST', '/api/v1/network/peers', { name: 'A', url: urlOfA, signing_key: a.signing_key })
        ).id;
        // A budget above what these tests ask: a 429 is reported in the sync's `error` (as `budget`).
        await call('A', 'POST', '/api/v1/network/peers', {
          name: d,
          url: 'https://93.184.216.34',
          signing_key: (await descriptor(d)).signing_key,
          budget_per_day: 100_000,
        });
      }
      assert.equal(a.common_entity_ids, true);
      assert.equal((await descriptor('C')).common_entity_ids, false);
    });
    after(async () => {
      for (const app of Object.values(apps)) await app.close();
    });

    test("a pull larger than a sync's pages resumes at the stored cursor, and a withdrawal made meanwhile arrives", async () => {
      await call('A', 'POST', '/api/v1/trust/events', {
        events: Array.from({ length: 5 }, (_, i) => ({
          event_id: `f-${i}`,
          type: 'fraud.reported',
          entity_id: hash(100 + i),
          occurred_at: at(),
          linked_identifiers: [{ type: 'phone', hash: hash(i) }],
        })),
      });
      // B holds two of A's phones among 600 of its own (matching walks its resolved identifiers in pages of 500).
      await call('B', 'POST', '/api/v1/trust/events', {
        events: [
          {
            event_id: 'b-1',
            type: 'identifier.linked',
            entity_id: hash(200),
            occurred_at: at(),
            linked_identifiers: [
              { type: 'phone', hash: hash(0) },
              { type: 'phone', hash: hash(4) },
            ],
          },
          ...Array.from({ length: 598 }, (_, i) => ({
            event_id: `b-other-${i}`,
            type: 'identifier.linked',
            entity_id: hash(3000 + i),
            occurred_at: at(),
            linked_identifiers: [{ type: 'email', hash: hash(3000 + i) }],
          })),
        ],
      });
      const db = networkDb(apps.B.store.db);
      const identity = await loadIdentity(db, resolveKeyEncryption(apps.B.config, apps.B.store));
      // A publishes ten entries: the five phones (first) and, with the common hashing, the five entity ids.
      // A call's timeout bounds the whole call: A evaluating 1,000 elements on a loaded host may take over 10 s.
      const sync = async () => {
        const [result] = await syncAll({
          db,
          identity,
          urlPolicy: { allowPrivate: true },
          timeoutMs: 60_000,
          commonEntityIds: true,
          paging: { pageSize: 5, pagesPerSync: 1 },
        });
        const row = await db
          .selectFrom('network_peers')
          .select(['flags_cursor', 'flags_since'])
          .where('id', '=', peerAt.B!)
          .executeTakeFirstOrThrow();
        return {
          pulled: result!.flags_pulled,
          error: result!.error,
          cursor: row.flags_cursor !== '',
          since: row.flags_since,
        };
      };
      const matched = async () =>
        (await db.selectFrom('network_matches').select('hash').orderBy('hash').execute()).map((r) => r.hash);
      assert.deepEqual(await sync(), { pulled: 5, error: undefined, cursor: true, since: '' });
      assert.deepEqual(await matched(), [hash(0), hash(4)], 'what was pulled so far is matched at once');
      // A's first entity is erased while B's pull is half-way: the entry B already holds goes at its next pull.
      await call('A', 'DELETE', `/api/v1/trust/entities/${hash(100)}`);
      const done = await sync();
      assert.deepEqual(
        { ...done, since: /^\d+$/.test(done.since) },
        { pulled: 4, error: undefined, cursor: false, since: true },
      );
      assert.deepEqual(await matched(), [hash(0), hash(4)]);
      const next = await sync();
      assert.deepEqual(next.pulled, 2, 'the two tombstones of the erased entity');
      assert.deepEqual(await matched(), [hash(4)]);
      const matches = await call('B', 'GET', `/api/v1/network/matches?entity_id=${hash(200)}`);
      assert.deepEqual(
        matches.peers.map((p: { name: string; kinds: object }) => [p.name, p.kinds]),
        [['A', { fraud_report: 1 }]],
      );
    });

    test('a peer lost in the middle of a pull: the sync reports the error, keeps the cursor, and the next one resumes there', async () => {
      await call('A', 'POST', '/api/v1/trust/events', {
        events: Array.from({ length: 8 }, (_, i) => ({
          event_id: `lost-${i}`,
          type: 'fraud.reported',
          entity_id: hash(500 + i),
          occurred_at: at(),
          linked_identifiers: [{ type: 'phone', hash: hash(600 + i) }],
        })),
      });
      await call('B', 'POST', '/api/v1/trust/events', {
        events: [
          {
            event_id: 'lost-b',
            type: 'identifier.linked',
            entity_id: hash(700),
            occurred_at: at(),
            linked_identifiers: [{ type: 'phone', hash: hash(607) }],
          },
        ],
      });
      const db = networkDb(apps.B.store.db);
      const identity = await loadIdentity(db, resolveKeyEncryption(apps.B.config, apps.B.store));
      const sync = async () =>
        (
          await syncAll({
            db,
            identity,
            urlPolicy: { allowPrivate: true },
            timeoutMs: 60_000,
            commonEntityIds: true,
            paging: { pageSize: 5, pagesPerSync: 1 },
          })
        )[0]!;
      const cursor = async () =>
        (
          await db
            .selectFrom('network_peers')
            .select('flags_cursor')
            .where('id', '=', peerAt.B!)
            .executeTakeFirstOrThrow()
        ).flags_cursor;
      const first = await sync();
      assert.equal(first.flags_pulled, 5);
      const kept = await cursor();
      assert.notEqual(kept, '', 'half-way: a cursor is stored');
      // A stops answering (the discard port): the sync fails and leaves the cursor where it was.
      await db.updateTable('network_peers').set({ url: 'http://127.0.0.1:9' }).where('id', '=', peerAt.B!).execute();
      const lost = await sync();
      assert.equal(lost.flags_pulled, 0);
      assert.ok(lost.error, 'the sync names the failure');
      assert.equal(await cursor(), kept);
      await db.updateTable('network_peers').set({ url: urlOfA }).where('id', '=', peerAt.B!).execute();
      let pulled = 0;
      for (let i = 0; i < 5 && (i === 0 || (await cursor()) !== ''); i++) pulled += (await sync()).flags_pulled;
      assert.equal(await cursor(), '', 'the pull finished');
      assert.ok(pulled >= 3, `the rest of A's entries arrived (${pulled})`);
      const matches = await call('B', 'GET', `/api/v1/network/matches?entity_id=${hash(700)}`);
      assert.deepEqual(
        matches.peers.map((p: { name: string; kinds: object }) => [p.name, p.kinds]),
        [['A', { fraud_report: 1 }]],
      );
    });

    test("entity ids under the common hashing: B matches A's flagged entity by its id; C, without the setting, does not", async () => {
      await call('A', 'POST', '/api/v1/trust/events', {
        events: [{ event_id: 'x-fraud', type: 'fraud.reported', entity_id: X, occurred_at: at() }],
      });
      for (const d of ['B', 'C'] as const) {
        await call(d, 'POST', '/api/v1/trust/events', {
          events: [
            {
              event_id: `x-${d}`,
              type: 'identifier.linked',
              entity_id: X,
              occurred_at: at(),
              linked_identifiers: [{ type: 'email', hash: hash(900) }],
            },
          ],
        });
        const report = await call(d, 'POST', '/api/v1/network/sync');
        assert.equal(report.peers[0].error, undefined);
      }
      const atB = await call('B', 'GET', `/api/v1/network/matches?entity_id=${X}`);
      assert.deepEqual(
        atB.peers.map((p: { name: string; kinds: object }) => [p.name, p.kinds]),
        [['A', { fraud_report: 1 }]],
      );
      const scored = await call('B', 'POST', '/api/v1/trust/score', { entity_id: X, amount: 100, currency: 'USD' });
      assert.equal(scored.signals.find((s: { name: string }) => s.name === 'network_flags')?.value, 0.5);
      assert.deepEqual((await call('C', 'GET', `/api/v1/network/matches?entity_id=${X}`)).peers, []);
      const atC = await call('C', 'POST', '/api/v1/trust/score', { entity_id: X, amount: 100, currency: 'USD' });
      assert.equal(
        atC.signals.find((s: { name: string }) => s.name === 'network_flags'),
        undefined,
      );
      // C asked A about no entity id: its evaluations cover its one email only.
      const resolved = await networkDb(apps.C.store.db).selectFrom('network_resolved').select('id_type').execute();
      assert.deepEqual(
        resolved.map((r) => r.id_type),
        ['email'],
      );
    });
  });
}
