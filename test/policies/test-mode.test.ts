// Test mode (docs/api.md, "Policies"–§10): each environment has its own policy versions, active and shadow
// policy and fit data. Crossed in both directions with an operator key of each environment.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { bearer, describeEachBackend, problem, type TestContext } from '../helpers/app.ts';
import { event, hash } from '../helpers/trust.ts';

type Env = 'live' | 'test';
const ENVS: Env[] = ['live', 'test'];
const OTHER: Record<Env, Env> = { live: 'test', test: 'live' };

async function operatorKeys(ctx: TestContext): Promise<Record<Env, string>> {
  const admin = await ctx.token();
  const make = async (environment: Env) => {
    const res = await ctx.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(admin),
      payload: {
        name: `pol-${environment}`,
        role: 'operator',
        environment,
        scopes: ['policy:read', 'policy:write', 'trust:read', 'trust:write', 'audit:read', 'labels:write'],
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().key as string;
  };
  return { live: await make('live'), test: await make('test') };
}

const doc = (version: string, overrides: Record<string, unknown> = {}) => ({
  ...DEFAULT_POLICY,
  version,
  ...overrides,
});

describeEachBackend('test mode: policies are partitioned by environment', (ctx) => {
  let key: Record<Env, string>;
  const call = (env: Env, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    ctx().inject({
      method,
      url,
      headers: { 'x-api-key': key[env] },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const scoreVersion = async (env: Env, entity: string) => {
    const res = await call(env, 'POST', '/api/v1/trust/score', { entity_id: entity, amount: 100, currency: 'USD' });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().policy_version as string;
  };

  before(async () => {
    key = await operatorKeys(ctx());
  });

  test('a fresh store has the built-in policy active in each environment', async () => {
    for (const env of ENVS) {
      const res = await call(env, 'GET', `/api/v1/policies/${DEFAULT_POLICY.version}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'active');
    }
  });

  for (const env of ENVS) {
    const other = OTHER[env];
    test(`upload in ${env}: 201, invisible to ${other} (404, not listed); the same version may then be uploaded in ${other}`, async () => {
      const version = `tm-upload-${env}`;
      assert.equal((await call(env, 'POST', '/api/v1/policies', doc(version))).statusCode, 201);
      problem(await call(other, 'GET', `/api/v1/policies/${version}`), 404, 'not_found');
      const listed = (await call(other, 'GET', '/api/v1/policies?limit=100')).json().data as Array<{ version: string }>;
      assert.ok(!listed.some((p) => p.version === version));
      assert.ok(
        ((await call(env, 'GET', '/api/v1/policies?limit=100')).json().data as Array<{ version: string }>).some(
          (p) => p.version === version,
        ),
      );
      problem(await call(env, 'POST', '/api/v1/policies', doc(version)), 409, 'conflict');
      assert.equal((await call(other, 'POST', '/api/v1/policies', doc(version))).statusCode, 201);
    });

    test(`activate and shadow in ${env}: 200 there; ${other}'s scores keep their policy and it cannot activate ${env}'s version (404)`, async () => {
      const version = `tm-activate-${env}`;
      assert.equal((await call(env, 'POST', '/api/v1/policies', doc(version, { bias: -0.5 }))).statusCode, 201);
      problem(await call(other, 'POST', `/api/v1/policies/${version}/activate`), 404, 'not_found');
      problem(await call(other, 'POST', `/api/v1/policies/${version}/shadow`), 404, 'not_found');
      const before = await scoreVersion(other, hash(`tm-act-${env}-a`));
      assert.equal((await call(env, 'POST', `/api/v1/policies/${version}/activate`)).statusCode, 200);
      assert.equal(await scoreVersion(env, hash(`tm-act-${env}-b`)), version);
      assert.equal(await scoreVersion(other, hash(`tm-act-${env}-c`)), before, `${other} scoring is unchanged`);
      // The shadow of one environment is not the other's.
      const shadow = `tm-shadow-${env}`;
      assert.equal((await call(env, 'POST', '/api/v1/policies', doc(shadow))).statusCode, 201);
      assert.equal((await call(env, 'POST', `/api/v1/policies/${shadow}/shadow`)).statusCode, 200);
      const cleared = await call(other, 'DELETE', '/api/v1/policies/shadow');
      assert.equal(cleared.statusCode, 200);
      assert.notEqual(cleared.json().previous, shadow);
      assert.equal((await call(env, 'GET', `/api/v1/policies/${shadow}`)).json().status, 'shadow');
      // Back to the built-in policy so the other direction starts alike.
      assert.equal((await call(env, 'DELETE', '/api/v1/policies/shadow')).json().previous, shadow);
      assert.equal((await call(env, 'POST', `/api/v1/policies/${DEFAULT_POLICY.version}/activate`)).statusCode, 200);
    });
  }

  test('fit: labelled decisions in test feed a test fit (201) and never a live one (422 insufficient_labels)', async () => {
    const events = [];
    for (let i = 0; i < 35; i++) {
      events.push(
        event('trade.completed', hash(`tm-fit-good-${i}`), { amount: 100, currency: 'USD' }, 30 * 86_400_000),
      );
      events.push(event('chargeback', hash(`tm-fit-bad-${i}`), { amount: 50, currency: 'USD' }, 3_600_000));
    }
    assert.equal((await call('test', 'POST', '/api/v1/trust/events', { events })).statusCode, 200);
    for (let i = 0; i < 35; i++) {
      for (const [kind, label] of [
        ['good', 'legit'],
        ['bad', 'fraud'],
      ] as const) {
        const scored = await call('test', 'POST', '/api/v1/trust/score', {
          entity_id: hash(`tm-fit-${kind}-${i}`),
          amount: 100,
          currency: 'USD',
        });
        const labelled = await call('test', 'POST', `/api/v1/decisions/${scored.json().decision_id}/label`, { label });
        assert.equal(labelled.statusCode, 200, labelled.body);
      }
    }
    problem(await call('live', 'POST', '/api/v1/policies/fit', {}), 422, 'insufficient_labels');
    const fit = await call('test', 'POST', '/api/v1/policies/fit', {});
    assert.equal(fit.statusCode, 201, fit.body);
    const version = fit.json().version as string;
    assert.ok(fit.json().report.labels.fraud >= 30);
    problem(await call('live', 'GET', `/api/v1/policies/${version}`), 404, 'not_found');
    problem(await call('live', 'POST', `/api/v1/policies/${version}/backtest`, {}), 404, 'not_found');
    // A live backtest of the built-in policy sees no test decision.
    const liveBacktest = await call('live', 'POST', `/api/v1/policies/${DEFAULT_POLICY.version}/backtest`, {});
    assert.equal(liveBacktest.statusCode, 200, liveBacktest.body);
    assert.equal(liveBacktest.json().labelled, 0);
  });
});
