// network_flags in scoring (docs/network.md, "The signal network_flags"): a score reads the stored
// matches with its profile, carries the signal with its description and weight, stores the
// contributing peers on the decision and the value in the feature vector; suspending a peer takes
// it out of the very next score (cached or not); test mode never matches; identifiers named only in
// a score's context are queued for the next sync without the score waiting.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { networkDb } from '../../src/network/tables.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { standInPeer } from './support.ts';

const PHONE = '5e1f'.repeat(16);
const EMAIL = 'e3a1'.repeat(16);
const ENTITY = 'f7'.repeat(32);
const month = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 7);

interface Signal {
  name: string;
  value: number;
  weight: number;
  description: string;
}

describeEachBackend('network_flags in scoring', (ctx) => {
  let admin: string;
  let testKey: string;
  const peers: Record<string, string> = {};
  const db = () => networkDb(ctx().store.db);
  const score = async (payload: Record<string, unknown>, headers: Record<string, string> = bearer(admin)) => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/score',
      headers,
      payload: { entity_id: ENTITY, amount: 100, currency: 'USD', ...payload },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { decision_id: string; cached: boolean; signals: Signal[]; policy_version: string };
  };
  const networkSignal = (body: { signals: Signal[] }) => body.signals.find((s) => s.name === 'network_flags');
  const patch = (name: string, payload: object) =>
    ctx().inject({ method: 'PATCH', url: `/api/v1/network/peers/${peers[name]}`, headers: bearer(admin), payload });
  /** What a sync stores on a match, and its version bump (every instance's cached scores go stale). */
  const bump = async () => {
    await db()
      .updateTable('network_identity')
      .set((eb) => ({ state_version: eb('state_version', '+', 1) }))
      .execute();
    ctx().store.changes.localWrite();
  };
  const match = async (peer: string, type: string, hash: string, label: object) => {
    await db()
      .insertInto('network_matches')
      .values({ peer_id: peers[peer]!, id_type: type, hash, label: JSON.stringify(label), matched_at: Date.now() })
      .execute();
    await bump();
  };

  before(async () => {
    admin = await ctx().token();
    for (const name of ['alpha', 'beta']) {
      // Public addresses that are never contacted here: no sync runs in this suite.
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/network/peers',
        headers: bearer(admin),
        payload: {
          name,
          url: `https://93.184.216.${name === 'alpha' ? 34 : 35}`,
          signing_key: standInPeer().signingKey,
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      peers[name] = res.json().id;
    }
    const key = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(admin),
      payload: { name: 'net-test', environment: 'test', scopes: ['trust:read', 'trust:write'] },
    });
    assert.equal(key.statusCode, 201, key.body);
    testKey = key.json().key;
    const events = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/events',
      headers: bearer(admin),
      payload: {
        events: [
          {
            event_id: 'net-1',
            type: 'identifier.linked',
            entity_id: ENTITY,
            occurred_at: new Date(Date.now() - 60_000).toISOString(),
            linked_identifiers: [{ type: 'phone', hash: PHONE }],
          },
        ],
      },
    });
    assert.equal(events.statusCode, 200, events.body);
  });

  test('no match: no network_flags; the default policy weighs it 1.9', async () => {
    const body = await score({});
    assert.equal(networkSignal(body), undefined);
    assert.equal(body.policy_version, DEFAULT_POLICY.version);
    assert.equal(DEFAULT_POLICY.weights.network_flags, 1.9);
  });

  test("a lone peer's flag: the signal, its description, the peer on the decision, the value in the features", async () => {
    await match('alpha', 'phone', PHONE, { kinds: { fraud_report: 1, chargeback: 2 }, latest_month: month(0) });
    const body = await score({});
    assert.equal(body.cached, false, 'the score cached by the previous test is stale once the network changed');
    const signal = networkSignal(body);
    assert.deepEqual(signal && { ...signal, description: undefined }, {
      name: 'network_flags',
      value: 0.5,
      weight: 1.9,
      description: undefined,
    });
    assert.equal(
      signal!.description,
      'an identifier it uses was flagged by 1 other marketplace in the last 90 days (chargeback, fraud report)',
    );
    const decision = await ctx().inject({
      method: 'GET',
      url: `/api/v1/decisions/${body.decision_id}`,
      headers: bearer(admin),
    });
    assert.equal(decision.statusCode, 200, decision.body);
    assert.deepEqual(decision.json().network_peers, [{ id: peers.alpha, name: 'alpha', contribution: 0.5 }]);
    assert.equal(decision.json().features.network_flags, 0.5);
  });

  test('two agreeing peers reach the full value; a lower weight counts less', async () => {
    await match('beta', 'phone', PHONE, { kinds: { blocklisted: 1 }, latest_month: month(0) });
    const both = networkSignal(await score({ amount: 101 }));
    assert.equal(both?.value, 1);
    assert.match(both!.description, /flagged by 2 other marketplaces/);
    assert.equal((await patch('beta', { weight: 0.5 })).statusCode, 200);
    assert.equal(networkSignal(await score({ amount: 101 }))?.value, 0.75);
    assert.equal((await patch('beta', { weight: 1 })).statusCode, 200);
  });

  test('suspending a peer removes its contribution from the next score on, cached or not; active again brings it back', async () => {
    const first = await score({ amount: 102 });
    assert.equal(networkSignal(first)?.value, 1);
    assert.equal((await score({ amount: 102 })).cached, true);
    assert.equal((await patch('alpha', { status: 'suspended' })).statusCode, 200);
    const after = await score({ amount: 102 });
    assert.equal(after.cached, false);
    assert.equal(networkSignal(after)?.value, 0.5);
    const decision = await ctx().inject({
      method: 'GET',
      url: `/api/v1/decisions/${after.decision_id}`,
      headers: bearer(admin),
    });
    assert.deepEqual(
      decision.json().network_peers.map((p: { name: string }) => p.name),
      ['beta'],
    );
    assert.equal((await patch('beta', { status: 'suspended' })).statusCode, 200);
    assert.equal(networkSignal(await score({ amount: 102 })), undefined);
    assert.equal((await patch('alpha', { status: 'active' })).statusCode, 200);
    assert.equal((await patch('beta', { status: 'active' })).statusCode, 200);
    assert.equal(networkSignal(await score({ amount: 102 }))?.value, 1);
  });

  test('a cached score is recomputed once the network version moved (a sync or a peer change in any instance)', async () => {
    const body = await score({ amount: 103 });
    const row = await ctx()
      .store.db.selectFrom('decisions')
      .select('cache_state')
      .where('id', '=', body.decision_id)
      .executeTakeFirstOrThrow();
    const before = row.cache_state!;
    await bump();
    const again = await score({ amount: 103 });
    assert.equal(again.cached, false, 'a score cached before the network changed is recomputed');
    const now = await ctx()
      .store.db.selectFrom('decisions')
      .select('cache_state')
      .where('id', '=', again.decision_id)
      .executeTakeFirstOrThrow();
    assert.notEqual(now.cache_state, before);
  });

  test('test mode never matches the network', async () => {
    const body = await score({}, { 'x-api-key': testKey });
    assert.equal(networkSignal(body), undefined);
    const withContext = await score(
      { context: { linked_identifiers: [{ type: 'phone', hash: PHONE }] } },
      { 'x-api-key': testKey },
    );
    assert.equal(networkSignal(withContext), undefined);
  });

  test('an identifier named only in the context: matched when known, queued for the next sync without the score waiting', async () => {
    const other = 'a9'.repeat(32);
    const body = await score({ entity_id: other, context: { linked_identifiers: [{ type: 'email', hash: EMAIL }] } });
    assert.equal(networkSignal(body), undefined);
    let queued: unknown[] = [];
    for (let i = 0; i < 50 && queued.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      queued = await db().selectFrom('network_pending').select(['id_type', 'hash']).where('hash', '=', EMAIL).execute();
    }
    assert.deepEqual(queued, [{ id_type: 'email', hash: EMAIL }]);
    // What the next sync finds for it, the next score reads through the request's identifiers.
    await match('alpha', 'email', EMAIL, { kinds: { chargeback: 1 }, latest_month: month(0) });
    const matched = await score({
      entity_id: other,
      amount: 104,
      context: { linked_identifiers: [{ type: 'email', hash: EMAIL }] },
    });
    assert.equal(networkSignal(matched)?.value, 0.5);
    const test = await score(
      { entity_id: other, amount: 104, context: { linked_identifiers: [{ type: 'email', hash: 'ee'.repeat(32) }] } },
      { 'x-api-key': testKey },
    );
    assert.equal(networkSignal(test), undefined);
    await new Promise((r) => setTimeout(r, 1200));
    assert.deepEqual(
      await db().selectFrom('network_pending').select('hash').where('hash', '=', 'ee'.repeat(32)).execute(),
      [],
      'test mode queues nothing',
    );
  });

  test('removing a peer removes its matches and its contribution', async () => {
    const res = await ctx().inject({
      method: 'DELETE',
      url: `/api/v1/network/peers/${peers.beta}`,
      headers: bearer(admin),
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(networkSignal(await score({ amount: 105 }))?.value, 0.5);
  });
});
