// docs/api.md, "Integration" for the audit trail (§6, §8): decisions and their labels belong to the environment
// of the key that made them; the other environment's keys see "not found" and cannot label them.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_ID, describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { hash, score } from '../helpers/trust.ts';
import { labelFromEvents } from '../../src/audit/labels.ts';

const SCOPES = ['trust:read', 'trust:write', 'audit:read', 'labels:write'];

async function key(ctx: TestContext, admin: string, environment: 'live' | 'test'): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/keys',
    headers: bearer(admin),
    payload: { name: `audit-${environment}`, scopes: SCOPES, environment },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().key as string;
}

describeEachBackend('audit in test mode', (ctx) => {
  let live = '';
  let testKey = '';
  let liveId = '';
  let testId = '';
  const entity = hash('tm-audit-subject');
  const get = (token: string, id: string) =>
    ctx().inject({ method: 'GET', url: `/api/v1/decisions/${id}`, headers: bearer(token) });
  const ids = async (token: string) =>
    (
      (
        await ctx().inject({
          method: 'GET',
          url: `/api/v1/decisions?entity_id=${entity}&limit=100`,
          headers: bearer(token),
        })
      ).json().data as { id: string }[]
    ).map((d) => d.id);
  const label = (token: string, id: string, value: string) =>
    ctx().inject({
      method: 'POST',
      url: `/api/v1/decisions/${id}/label`,
      headers: bearer(token),
      payload: { label: value },
    });

  before(async () => {
    // One owner for both keys, so only the environment separates them.
    const admin = await ctx().token();
    live = await key(ctx(), admin, 'live');
    testKey = await key(ctx(), admin, 'test');
    const scored = async (token: string) => {
      const res = await score(ctx(), token, {
        entity_id: entity,
        amount: 100 + Math.random(),
        currency: 'USD',
        context: { trade_id: 'tm-trade' },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().decision_id as string;
    };
    liveId = await scored(live);
    testId = await scored(testKey);
  });

  test('GET /decisions/{id}: 200 in its own environment, 404 from the other, both directions', async () => {
    assert.equal((await get(live, liveId)).statusCode, 200);
    assert.equal((await get(testKey, testId)).statusCode, 200);
    problem(await get(testKey, liveId), 404, 'not_found');
    problem(await get(live, testId), 404, 'not_found');
  });

  test('GET /decisions lists only the caller environment’s decisions, both directions', async () => {
    assert.deepEqual(await ids(live), [liveId]);
    assert.deepEqual(await ids(testKey), [testId]);
  });

  test("labels: 404 across environments and the other environment's decision keeps no label; own label 200", async () => {
    problem(await label(testKey, liveId, 'fraud'), 404, 'not_found');
    problem(await label(live, testId, 'legit'), 404, 'not_found');
    assert.equal((await get(live, liveId)).json().label, null);
    assert.equal((await get(testKey, testId)).json().label, null);
    assert.equal((await label(testKey, testId, 'fraud')).statusCode, 200);
    assert.equal((await get(live, liveId)).json().label, null, 'a test label leaves the live decision alone');
    assert.equal((await label(live, liveId, 'legit')).statusCode, 200);
    assert.equal(
      (await get(testKey, testId)).json().label.label,
      'fraud',
      'a live label leaves the test decision alone',
    );
  });

  test('event labels reach only decisions of the event’s environment', async () => {
    const db = ctx().store.db;
    await db
      .updateTable('decisions')
      .set({ label: null, label_source: null })
      .where('id', 'in', [liveId, testId])
      .execute();
    const outcome = [{ type: 'chargeback', entity_id: entity, trade_id: 'tm-trade' }];
    assert.equal(await labelFromEvents(db, 'test', outcome, ADMIN_ID, Date.now()), 1);
    assert.equal((await get(live, liveId)).json().label, null);
    assert.equal((await get(testKey, testId)).json().label.source, 'event');
    await db.updateTable('decisions').set({ label: null, label_source: null }).where('id', '=', testId).execute();
    assert.equal(await labelFromEvents(db, 'live', outcome, ADMIN_ID, Date.now()), 1);
    assert.equal((await get(testKey, testId)).json().label, null);
    assert.equal((await get(live, liveId)).json().label.source, 'event');
  });
});
