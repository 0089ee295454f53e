// Test mode (docs/api.md, "Integration"): a vch_test_ key and a live key of the same client share no trust data.
// Each endpoint is crossed in both directions: what one environment writes never shows in, nor
// changes the answers of, the other, even for the same entity and event ids.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend, problem, type TestContext } from '../helpers/app.ts';
import { event, hash } from '../helpers/trust.ts';

type Env = 'live' | 'test';
type Keys = Record<Env, string>;
const OTHER: Record<Env, Env> = { live: 'test', test: 'live' };
const ENVS: Env[] = ['live', 'test'];

/**
 * An admin-role key of the admin client in each environment (erasure needs role admin): the same client, so only the
 * environment separates them.
 */
async function keys(ctx: TestContext): Promise<Keys> {
  const admin = await ctx.token();
  const make = async (environment: Env) => {
    const res = await ctx.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(admin),
      payload: {
        name: `tm-${environment}`,
        role: 'admin',
        environment,
        scopes: ['trust:read', 'trust:write', 'dispute:analyze'],
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().key as string;
  };
  return { live: await make('live'), test: await make('test') };
}

const as = (key: string) => ({ 'x-api-key': key });
const post = (ctx: TestContext, key: string, url: string, payload: Record<string, unknown>) =>
  ctx.inject({ method: 'POST', url, headers: as(key), payload });
const get = (ctx: TestContext, key: string, url: string) => ctx.inject({ method: 'GET', url, headers: as(key) });

async function events(ctx: TestContext, key: string, list: Record<string, unknown>[]) {
  const res = await post(ctx, key, '/api/v1/trust/events', { events: list });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { accepted: number; duplicates: number };
}

async function score(ctx: TestContext, key: string, entity: string, extra: Record<string, unknown> = {}) {
  const res = await post(ctx, key, '/api/v1/trust/score', {
    entity_id: entity,
    amount: 100,
    currency: 'USD',
    ...extra,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as {
    score: number;
    decision_id: string;
    cached: boolean;
    signals: Array<{ name: string; value: number }>;
  };
}

const trades = (entity: string, n = 5) =>
  Array.from({ length: n }, (_, i) =>
    event(
      'trade.completed',
      entity,
      { amount: 100, currency: 'USD', counterparty_id: hash(`tm-cp-${i}`) },
      3 * 86_400_000 + i * 60_000,
    ),
  );

describeEachBackend('test mode: trust and disputes are partitioned by environment', (ctx) => {
  let key: Keys;
  before(async () => {
    key = await keys(ctx());
  });

  test('POST /trust/events: the same event_id in the other environment is neither a duplicate nor a conflict (200 both ways)', async () => {
    const entity = hash('tm-events');
    const live = event('trade.completed', entity, { amount: 50, currency: 'USD' });
    const other = { ...live, type: 'fraud.reported', amount: undefined, currency: undefined };
    assert.deepEqual(await events(ctx(), key.live, [live]), { accepted: 1, duplicates: 0 });
    assert.deepEqual(await events(ctx(), key.test, [other]), { accepted: 1, duplicates: 0 });
    assert.deepEqual(await events(ctx(), key.test, [other]), { accepted: 0, duplicates: 1 });
    assert.deepEqual(await events(ctx(), key.live, [live]), { accepted: 0, duplicates: 1 });
    // Within one environment the reuse is still a conflict.
    problem(await post(ctx(), key.live, '/api/v1/trust/events', { events: [other] }), 409, 'conflict');
    problem(await post(ctx(), key.test, '/api/v1/trust/events', { events: [live] }), 409, 'conflict');
  });

  for (const env of ENVS) {
    const other = OTHER[env];
    test(`POST /trust/score: a ${env} fraud report leaves the ${other} score of the same entity unchanged`, async () => {
      const entity = hash(`tm-score-${env}`);
      await events(ctx(), key.live, trades(entity));
      await events(ctx(), key.test, trades(entity));
      const before = await score(ctx(), key[other], entity, { context: { trade_id: 'before' } });
      await events(ctx(), key[env], [event('fraud.reported', entity), event('chargeback', entity)]);
      const after = await score(ctx(), key[other], entity, { context: { trade_id: 'after' } });
      assert.equal(after.score, before.score);
      assert.ok((await score(ctx(), key[env], entity)).score > before.score, `the ${env} score sees its own report`);
    });

    test(`GET /trust/entities/{id} and /events: an entity known only in ${env} is 404 in ${other}; a shared id shows each its own history`, async () => {
      const only = hash(`tm-only-${env}`);
      await events(ctx(), key[env], trades(only, 2));
      assert.equal((await get(ctx(), key[env], `/api/v1/trust/entities/${only}`)).statusCode, 200);
      problem(await get(ctx(), key[other], `/api/v1/trust/entities/${only}`), 404, 'not_found');
      problem(await get(ctx(), key[other], `/api/v1/trust/entities/${only}/events`), 404, 'not_found');

      const shared = hash(`tm-shared-${env}`);
      const mine = trades(shared, 3);
      const theirs = [event('fraud.reported', shared)];
      await events(ctx(), key[env], mine);
      await events(ctx(), key[other], theirs);
      const entity = (await get(ctx(), key[env], `/api/v1/trust/entities/${shared}`)).json();
      assert.equal(entity.trades_completed, 3);
      assert.equal(entity.fraud_reports, 0);
      const timeline = (await get(ctx(), key[env], `/api/v1/trust/entities/${shared}/events`)).json() as {
        data: Array<{ event_id: string }>;
      };
      assert.deepEqual(timeline.data.map((e) => e.event_id).sort(), mine.map((e) => e.event_id as string).sort());
    });

    test(`DELETE /trust/entities/{id} in ${env} leaves the ${other} entity of the same id, its events and decisions intact`, async () => {
      const entity = hash(`tm-erase-${env}`);
      await events(ctx(), key.live, trades(entity, 2));
      await events(ctx(), key.test, trades(entity, 4));
      await score(ctx(), key[other], entity);
      const erased = await ctx().inject({
        method: 'DELETE',
        url: `/api/v1/trust/entities/${entity}`,
        headers: as(key[env]),
      });
      assert.equal(erased.statusCode, 200, erased.body);
      assert.equal(erased.json().events_deleted, env === 'live' ? 2 : 4);
      problem(await get(ctx(), key[env], `/api/v1/trust/entities/${entity}`), 404, 'not_found');
      const kept = await get(ctx(), key[other], `/api/v1/trust/entities/${entity}`);
      assert.equal(kept.statusCode, 200);
      assert.equal(kept.json().trades_completed, env === 'live' ? 4 : 2);
      const timeline = (await get(ctx(), key[other], `/api/v1/trust/entities/${entity}/events`)).json() as {
        data: unknown[];
      };
      assert.equal(timeline.data.length, env === 'live' ? 4 : 2);
      const decisions = await ctx()
        .store.db.selectFrom('decisions')
        .select('environment')
        .where('subject_id', '=', entity)
        .execute();
      assert.deepEqual(
        decisions.map((d) => d.environment),
        [other],
        `the ${other} decision keeps the entity id`,
      );
    });

    test(`linked identifiers: an ${other} entity sharing a hash with a flagged ${env} entity is not linked to it`, async () => {
      const device = { type: 'device', hash: hash(`tm-device-${env}`) };
      const flagged = hash(`tm-flagged-${env}`);
      const holder = hash(`tm-holder-${env}`);
      await events(ctx(), key[env], [event('fraud.reported', flagged, { linked_identifiers: [device] })]);
      await events(ctx(), key[other], [event('identifier.linked', holder, { linked_identifiers: [device] })]);
      const linked = (await get(ctx(), key[other], `/api/v1/trust/entities/${holder}`)).json() as {
        linked_identifiers: Array<{ entities: number }>;
      };
      assert.deepEqual(
        linked.linked_identifiers.map((l) => l.entities),
        [1],
      );
      const flaggedSignal = (s: { signals: Array<{ name: string; value: number }> }) =>
        s.signals.find((x) => x.name === 'linked_flagged_entities')?.value ?? 0;
      assert.equal(
        flaggedSignal(await score(ctx(), key[other], holder, { context: { linked_identifiers: [device] } })),
        0,
      );
      // The same link in the flagged entity's own environment is seen.
      await events(ctx(), key[env], [event('identifier.linked', holder, { linked_identifiers: [device] })]);
      assert.equal(
        flaggedSignal(await score(ctx(), key[env], holder, { context: { linked_identifiers: [device] } })),
        1,
      );
    });

    test(`POST /trust/events: a ${env} fraud outcome of a trade does not label the ${other} decision of that trade`, async () => {
      const entity = hash(`tm-label-${env}`);
      const tradeId = `tm-label-trade-${env}`;
      const scored = await score(ctx(), key[other], entity, { context: { trade_id: tradeId } });
      await events(ctx(), key[env], [event('fraud.reported', entity, { trade_id: tradeId })]);
      const label = async () =>
        (
          await ctx()
            .store.db.selectFrom('decisions')
            .select('label')
            .where('id', '=', scored.decision_id)
            .executeTakeFirstOrThrow()
        ).label;
      assert.equal(await label(), null);
      await events(ctx(), key[other], [event('fraud.reported', entity, { trade_id: tradeId })]);
      assert.equal(await label(), 'fraud', 'the same outcome in its own environment labels it');
    });

    test(`POST /dispute/analyze in ${other} uses only ${other} history: a ${env} fraud report of the buyer does not change it`, async () => {
      const buyer = hash(`tm-buyer-${env}`);
      const seller = hash(`tm-seller-${env}`);
      const body = (n: number) => ({
        dispute_id: `tm-dsp-${env}-${n}`,
        buyer_id: buyer,
        seller_id: seller,
        opened_by: 'buyer',
        reason: 'asset_not_released',
        trade: {
          trade_id: `tm-trd-${env}-${n}`,
          amount: 100,
          currency: 'USD',
          payment_method: 'bank_transfer',
          created_at: new Date(Date.now() - 3 * 3_600_000).toISOString(),
          paid_at: new Date(Date.now() - 2 * 3_600_000).toISOString(),
        },
      });
      const analyze = async (k: string, n: number) => {
        const res = await post(ctx(), k, '/api/v1/dispute/analyze', body(n));
        assert.equal(res.statusCode, 200, res.body);
        return res.json() as { parties: { buyer: { score: number } } };
      };
      const before = await analyze(key[other], 1);
      await events(ctx(), key[env], [event('fraud.reported', buyer), event('chargeback', buyer)]);
      assert.equal((await analyze(key[other], 2)).parties.buyer.score, before.parties.buyer.score);
      assert.ok((await analyze(key[env], 3)).parties.buyer.score > before.parties.buyer.score);
    });
  }

  test('POST /trust/score: a test key never gets the live decision for the same request (and the reverse), each stored in its own environment', async () => {
    const entity = hash('tm-decision');
    await events(ctx(), key.live, trades(entity));
    await events(ctx(), key.test, trades(entity));
    const live = await score(ctx(), key.live, entity);
    assert.equal(
      (await score(ctx(), key.live, entity)).decision_id,
      live.decision_id,
      'the live caller is served its cached decision',
    );
    const testScore = await score(ctx(), key.test, entity);
    assert.equal(testScore.cached, false);
    assert.notEqual(testScore.decision_id, live.decision_id);
    assert.equal((await score(ctx(), key.live, entity)).decision_id, live.decision_id);
    const rows = await ctx()
      .store.db.selectFrom('decisions')
      .select(['id', 'environment'])
      .where('id', 'in', [live.decision_id, testScore.decision_id])
      .orderBy('environment')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.id, r.environment]),
      [
        [live.decision_id, 'live'],
        [testScore.decision_id, 'test'],
      ],
    );
  });

  test('POST /trust/score/batch: each environment scores the same entity from its own history', async () => {
    const entity = hash('tm-batch');
    await events(ctx(), key.live, trades(entity));
    await events(ctx(), key.test, [...trades(entity), event('fraud.reported', entity)]);
    const batch = async (k: string) => {
      const res = await post(ctx(), k, '/api/v1/trust/score/batch', {
        requests: [{ entity_id: entity, amount: 100, currency: 'USD' }],
      });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { results: Array<{ score: number }> }).results[0]!.score;
    };
    const [live, testScore] = [await batch(key.live), await batch(key.test)];
    assert.equal(live, (await score(ctx(), key.live, entity, { context: { trade_id: 'single' } })).score);
    assert.equal(testScore, (await score(ctx(), key.test, entity, { context: { trade_id: 'single' } })).score);
    assert.ok(testScore > live, 'only the test history holds the fraud report');
  });
});
