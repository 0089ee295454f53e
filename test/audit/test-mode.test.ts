// Test mode (docs/api.md, "Outcomes and labels", §10): decisions and their labels belong to the environment that made
// them. Crossed in both directions, for an admin-role key too (admins see every client's
// decisions, but only in their own environment).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend, problem, type TestContext } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';

type Env = 'live' | 'test';
const ENVS: Env[] = ['live', 'test'];
const OTHER: Record<Env, Env> = { live: 'test', test: 'live' };

async function adminKeys(ctx: TestContext): Promise<Record<Env, string>> {
  const admin = await ctx.token();
  const make = async (environment: Env) => {
    const res = await ctx.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(admin),
      payload: {
        name: `audit-${environment}`,
        role: 'admin',
        environment,
        scopes: ['trust:read', 'dispute:analyze', 'audit:read', 'labels:write'],
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().key as string;
  };
  return { live: await make('live'), test: await make('test') };
}

describeEachBackend('test mode: decisions and labels are partitioned by environment', (ctx) => {
  let key: Record<Env, string>;
  const call = (env: Env, method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
    ctx().inject({ method, url, headers: { 'x-api-key': key[env] }, ...(payload ? { payload } : {}) });

  before(async () => {
    key = await adminKeys(ctx());
  });

  for (const env of ENVS) {
    const other = OTHER[env];
    test(`a ${env} score and dispute analysis: listed and readable in ${env}, 404 and unlisted in ${other}, and not labellable from ${other}`, async () => {
      const entity = hash(`audit-tm-${env}`);
      const scored = await call(env, 'POST', '/api/v1/trust/score', {
        entity_id: entity,
        amount: 100,
        currency: 'USD',
      });
      assert.equal(scored.statusCode, 200, scored.body);
      const id = scored.json().decision_id as string;
      const analysed = await call(env, 'POST', '/api/v1/dispute/analyze', {
        dispute_id: `d-${env}`,
        trade: { trade_id: `t-${env}`, amount: 100, currency: 'USD' },
        buyer_id: entity,
        seller_id: hash(`audit-tm-seller-${env}`),
        opened_by: 'buyer',
        reason: 'asset_not_released',
      });
      assert.equal(analysed.statusCode, 200, analysed.body);
      const analysisId = analysed.json().analysis_id as string;

      for (const decision of [id, analysisId]) {
        assert.equal((await call(env, 'GET', `/api/v1/decisions/${decision}`)).statusCode, 200);
        problem(await call(other, 'GET', `/api/v1/decisions/${decision}`), 404, 'not_found');
      }
      const mine = (await call(env, 'GET', '/api/v1/decisions?limit=100')).json().data as Array<{ id: string }>;
      const theirs = (await call(other, 'GET', '/api/v1/decisions?limit=100')).json().data as Array<{ id: string }>;
      assert.ok(mine.some((d) => d.id === id) && mine.some((d) => d.id === analysisId));
      assert.ok(!theirs.some((d) => d.id === id || d.id === analysisId));
      const byEntity = (await call(other, 'GET', `/api/v1/decisions?entity_id=${entity}`)).json().data as unknown[];
      assert.equal(byEntity.length, 0, 'the entity filter does not reach across either');

      problem(await call(other, 'POST', `/api/v1/decisions/${id}/label`, { label: 'fraud' }), 404, 'not_found');
      const unlabelled = await call(env, 'GET', `/api/v1/decisions/${id}`);
      assert.equal(unlabelled.json().label, null, `a ${other} caller's label did not land`);
      const labelled = await call(env, 'POST', `/api/v1/decisions/${id}/label`, { label: 'legit' });
      assert.equal(labelled.statusCode, 200, labelled.body);
      const filtered = (await call(other, 'GET', '/api/v1/decisions?label=legit&limit=100')).json().data as Array<{
        id: string;
      }>;
      assert.ok(!filtered.some((d) => d.id === id));
    });
  }
});
