// What a peer refuses is said on the asking side (docs/network.md, "A peer's limits"): its 429 on
// evaluate is `budget` with its Retry-After in the sync's answer and the peer's last_error, and it
// is not asked again before then (flags are still pulled and matched); a new OPRF key is adopted —
// and everything re-sent under it — only once the peer has shown it for a day, so a peer rotating
// its key at every sync gets nothing re-sent.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { syncStateDb } from '../../src/network/peer-sync-repository.ts';
import { networkDb, type NetworkDb } from '../../src/network/tables.ts';
import { backends, bearer, startApp, testConfig, type TestContext } from '../helpers/app.ts';
import { hostilePeer, type HostilePeer } from './hostile-peer.ts';

type App = TestContext & { close(): Promise<void> };
const hash = (n: number) => `${n}`.padStart(4, '0').repeat(16);
const DAY = 86_400_000;

for (const backend of backends()) {
  describe(`a peer's refusals and key changes, as the asking side reports them [${backend}]`, () => {
    let B: App;
    let M: HostilePeer;
    let db: NetworkDb;
    let token = '';
    let peerId = '';
    const sync = async () => {
      const res = await B.inject({ method: 'POST', url: '/api/v1/network/sync', headers: bearer(token) });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().peers as Array<{ id: string; error?: string; matched: number }>).find((p) => p.id === peerId)!;
    };
    const lastError = async () =>
      (await db.selectFrom('network_peers').select('last_error').where('id', '=', peerId).executeTakeFirstOrThrow())
        .last_error;
    const resolvedKeys = async () => [
      ...new Set(
        (await db.selectFrom('network_resolved').select('oprf_public').where('peer_id', '=', peerId).execute()).map(
          (r) => r.oprf_public,
        ),
      ),
    ];

    before(async () => {
      B = await startApp(backend, { network: { ...testConfig().network, allowPrivate: true } });
      M = await hostilePeer();
      token = await B.token();
      const res = await B.inject({
        method: 'POST',
        url: '/api/v1/network/peers',
        headers: bearer(token),
        payload: { name: 'M', url: M.url, signing_key: M.identity.signingKey },
      });
      assert.equal(res.statusCode, 201, res.body);
      peerId = res.json().id;
      db = networkDb(B.store.db);
    });
    after(async () => {
      await M.close();
      await B.close();
    });
    beforeEach(() => {
      M.on = {};
      M.calls = {};
    });

    let n = 0;
    const link = async () => {
      n++;
      const res = await B.inject({
        method: 'POST',
        url: '/api/v1/trust/events',
        headers: bearer(token),
        payload: {
          events: [
            {
              event_id: `e-${n}`,
              type: 'identifier.linked',
              entity_id: hash(n),
              occurred_at: new Date(Date.now() - 60_000).toISOString(),
              linked_identifiers: [{ type: 'phone', hash: hash(1000 + n) }],
            },
          ],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      return hash(1000 + n);
    };

    test('a 429 on evaluate is `budget` with its Retry-After, in the answer and last_error; the peer is not asked again before it, while its flags still match', async () => {
      const phone = await link();
      M.on.evaluate = () => ({
        status: 429,
        body: { type: '/problems/rate_limited', title: 'Too many requests', status: 429, detail: 'budget used up' },
        headers: { 'retry-after': '3600' },
      });
      const first = await sync();
      assert.match(first.error ?? '', /^budget: .*Retry-After: 3600 s/);
      assert.equal(await lastError(), first.error);
      assert.equal(M.calls.evaluate, 1);
      const second = await sync();
      assert.match(second.error ?? '', /^budget: .*none is asked before \d{4}-\d\d-\d\dT/);
      assert.equal(M.calls.evaluate, 1, 'not asked again before its Retry-After');
      assert.equal(M.calls.flags, 2, 'its flags are still pulled');
      // Once the Retry-After has passed, the peer is asked again, and what it flagged matches.
      await syncStateDb(db)
        .updateTable('network_peer_sync')
        .set({ evaluate_after: Date.now() - 1 })
        .where('peer_id', '=', peerId)
        .execute();
      M.on = {};
      M.entries = [M.flag('phone', phone)];
      const third = await sync();
      assert.equal(third.error, undefined);
      assert.equal(third.matched, 1);
      assert.equal(await lastError(), null);
    });

    test('a new OPRF key is adopted only after it has held a day: until then nothing is sent, and the peer shows why', async () => {
      await link();
      assert.equal((await sync()).error, undefined);
      const before = await resolvedKeys();
      assert.deepEqual(before, [M.identity.oprfPublicKey]);
      const evaluations = M.calls.evaluate ?? 0;
      // The peer rotates at every sync: nothing is re-sent, and what was resolved stays as it was.
      for (let i = 0; i < 3; i++) {
        M.rotateOprfKey();
        const result = await sync();
        assert.match(result.error ?? '', /^oprf_key: the peer shows a new OPRF key since .*held a day/);
      }
      assert.equal(M.calls.evaluate ?? 0, evaluations, 'no identifier re-sent');
      assert.deepEqual(await resolvedKeys(), before);
      // The same new key a day later: adopted, and the identifiers are resolved under it.
      await syncStateDb(db)
        .updateTable('network_peer_sync')
        .set({ oprf_seen_at: Date.now() - DAY - 1000 })
        .where('peer_id', '=', peerId)
        .execute();
      const adopted = await sync();
      assert.equal(adopted.error, undefined);
      assert.deepEqual(await resolvedKeys(), [M.identity.oprfPublicKey]);
      assert.equal(
        (await db.selectFrom('network_peers').select('oprf_public').where('id', '=', peerId).executeTakeFirstOrThrow())
          .oprf_public,
        M.identity.oprfPublicKey,
      );
    });

    test('a 429 on another call stops every call to the peer until its Retry-After, and says so', async () => {
      M.on.flags = () => ({
        status: 429,
        body: { type: '/problems/rate_limited', title: 'Too many requests', status: 429 },
        headers: { 'retry-after': '120' },
      });
      const first = await sync();
      assert.match(first.error ?? '', /^rate_limited: the peer refused flags \(HTTP 429, Retry-After: 120 s\)/);
      const calls = { ...M.calls };
      const second = await sync();
      assert.match(second.error ?? '', /^rate_limited: the peer asked not to be called before/);
      assert.deepEqual(M.calls, calls, 'no call before its Retry-After');
      await syncStateDb(db)
        .updateTable('network_peer_sync')
        .set({ calls_after: 0 })
        .where('peer_id', '=', peerId)
        .execute();
    });
  });
}
