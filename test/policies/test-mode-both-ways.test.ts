// docs/api.md, "Integration" for policies (§9): a test key's policies, fits and activations are its own; live
// scoring never sees them, and a live key's never reach test scoring.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { hash, score } from '../helpers/trust.ts';
import { DEFAULT_POLICY, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';

const SCOPES = ['policy:read', 'policy:write', 'trust:read', 'trust:write', 'audit:read', 'labels:write'];
const doc = (version: string, bias: number): Policy =>
  JSON.parse(JSON.stringify({ ...DEFAULT_POLICY, version, bias })) as Policy;

async function key(ctx: TestContext, admin: string, environment: 'live' | 'test'): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/keys',
    headers: bearer(admin),
    payload: { name: `policies-${environment}`, scopes: SCOPES, role: 'operator', environment },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().key as string;
}

/** Labelled score decisions with stored features, written straight to the store (fit input). */
async function labelledDecisions(
  ctx: TestContext,
  environment: 'live' | 'test',
  prefix: string,
  count: number,
): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => {
    const fraud = i % 2 === 0;
    const features = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0]));
    features.chargebacks = fraud ? 1 + (i % 3) : 0;
    features.completed_trades = fraud ? 0 : 1 + (i % 5);
    return {
      id: `${prefix}-${i}`,
      kind: 'score',
      environment,
      principal_id: 'p',
      owner_client_id: 'c',
      subject_id: hash(`${prefix}-e${i}`),
      request_digest: 'd',
      result: '{}',
      policy_version: DEFAULT_POLICY.version,
      created_at: Date.now() - 1000,
      features: JSON.stringify(features),
      label: fraud ? 'fraud' : 'legit',
      label_source: 'api',
      labelled_at: Date.now(),
    };
  });
  await ctx.store.db
    .insertInto('decisions')
    .values(rows as never)
    .execute();
}

describeEachBackend('policies in test mode', (ctx) => {
  let live = '';
  let testKey = '';
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, payload?: unknown) =>
    ctx().inject({
      method,
      url,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const versionScoredWith = async (token: string) => {
    const res = await score(ctx(), token, {
      entity_id: hash('tm-policy-subject'),
      amount: 100 + Math.random(),
      currency: 'USD',
      context: {},
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().policy_version as string;
  };

  before(async () => {
    const admin = await ctx().token();
    live = await key(ctx(), admin, 'live');
    testKey = await key(ctx(), admin, 'test');
  });

  test('upload: the same version may exist in both environments; each list and GET shows only its own (404 across)', async () => {
    assert.equal((await call('POST', '/api/v1/policies', testKey, doc('tm-both', -1))).statusCode, 201);
    assert.equal((await call('POST', '/api/v1/policies', live, doc('tm-both', -2))).statusCode, 201);
    assert.equal((await call('GET', '/api/v1/policies/tm-both', testKey)).json().document.bias, -1);
    assert.equal((await call('GET', '/api/v1/policies/tm-both', live)).json().document.bias, -2);
    assert.equal((await call('POST', '/api/v1/policies', testKey, doc('tm-test-only', 0))).statusCode, 201);
    assert.equal((await call('POST', '/api/v1/policies', live, doc('tm-live-only', 0))).statusCode, 201);
    problem(await call('GET', '/api/v1/policies/tm-test-only', live), 404, 'not_found');
    problem(await call('GET', '/api/v1/policies/tm-live-only', testKey), 404, 'not_found');
    const versions = async (token: string) =>
      ((await call('GET', '/api/v1/policies?limit=100', token)).json().data as { version: string }[]).map(
        (p) => p.version,
      );
    assert.ok(
      (await versions(testKey)).includes('tm-test-only') && !(await versions(testKey)).includes('tm-live-only'),
    );
    assert.ok((await versions(live)).includes('tm-live-only') && !(await versions(live)).includes('tm-test-only'));
    problem(await call('POST', '/api/v1/policies/tm-live-only/activate', testKey), 404, 'not_found');
    problem(await call('POST', '/api/v1/policies/tm-test-only/shadow', live), 404, 'not_found');
  });

  test('activate in test: test scoring uses it, live scoring keeps its version; and the other way round', async () => {
    assert.equal(await versionScoredWith(live), DEFAULT_POLICY.version);
    assert.equal((await call('POST', '/api/v1/policies/tm-test-only/activate', testKey)).statusCode, 200);
    assert.equal(await versionScoredWith(testKey), 'tm-test-only');
    assert.equal(await versionScoredWith(live), DEFAULT_POLICY.version);
    assert.equal((await call('GET', `/api/v1/policies/${DEFAULT_POLICY.version}`, live)).json().status, 'active');
    assert.equal((await call('POST', '/api/v1/policies/tm-live-only/activate', live)).statusCode, 200);
    assert.equal(await versionScoredWith(live), 'tm-live-only');
    assert.equal(await versionScoredWith(testKey), 'tm-test-only');
    assert.equal((await call('GET', '/api/v1/policies/tm-test-only', testKey)).json().status, 'active');
  });

  test('shadow in one environment is not the shadow in the other; DELETE shadow ends only its own', async () => {
    assert.equal((await call('POST', '/api/v1/policies/tm-both/shadow', testKey)).statusCode, 200);
    assert.equal((await call('GET', '/api/v1/policies/tm-both', live)).json().status, 'candidate');
    const none = await call('DELETE', '/api/v1/policies/shadow', live);
    assert.equal(none.json().previous, null);
    assert.equal((await call('GET', '/api/v1/policies/tm-both', testKey)).json().status, 'shadow');
    assert.equal((await call('DELETE', '/api/v1/policies/shadow', testKey)).json().previous, 'tm-both');
  });

  test('fit: test labels feed only a test fit (live 422), and live labels only a live fit', async () => {
    await labelledDecisions(ctx(), 'test', 'tm-fit-test', 80);
    problem(await call('POST', '/api/v1/policies/fit', live, {}), 422, 'insufficient_labels');
    const fitted = await call('POST', '/api/v1/policies/fit', testKey, {});
    assert.equal(fitted.statusCode, 201, fitted.body);
    assert.deepEqual(fitted.json().report.labels, { fraud: 40, legit: 40 });
    problem(await call('GET', `/api/v1/policies/${fitted.json().version}`, live), 404, 'not_found');
    await labelledDecisions(ctx(), 'live', 'tm-fit-live', 60);
    const liveFit = await call('POST', '/api/v1/policies/fit', live, {});
    assert.equal(liveFit.statusCode, 201, liveFit.body);
    assert.deepEqual(liveFit.json().report.labels, { fraud: 30, legit: 30 });
  });

  test('backtest replays only the caller environment’s decisions', async () => {
    const t = await call('POST', '/api/v1/policies/tm-both/backtest', testKey, {});
    const l = await call('POST', '/api/v1/policies/tm-both/backtest', live, {});
    assert.equal(t.statusCode, 200, t.body);
    assert.equal(l.statusCode, 200, l.body);
    assert.equal(t.json().labelled, 80);
    assert.equal(l.json().labelled, 60);
  });
});
