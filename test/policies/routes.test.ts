// docs/api.md, "Policies" over HTTP: policy versions (list, show, upload), activation, shadow, fit, backtest and
// the report, with their errors; fuzzed bodies never 5xx.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { hash, score, postEvents, event, tradeHistory } from '../helpers/trust.ts';
import { bodies, JSON_TYPE, wellBehaved } from '../helpers/fuzz.ts';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { backtest } from '../../src/policies/backtest.ts';
import { decodeFeatures } from '../../src/model/feature-vector.ts';
import type { Role } from '../../src/lib/principal.ts';

async function login(ctx: TestContext, scopes: string[], role: Role = 'service') {
  const c = await ctx.client(scopes, role);
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/auth/token',
    payload: { client_id: c.id, client_secret: c.secret },
  });
  assert.equal(res.statusCode, 200, res.body);
  return { id: c.id, token: res.json().access_token as string };
}

const doc = (version: string, changes: Partial<Policy> = {}): Policy =>
  JSON.parse(JSON.stringify({ ...DEFAULT_POLICY, version, ...changes })) as Policy;

describeEachBackend('policies API', (ctx) => {
  let operator = '';
  let reader = '';
  let scorer = '';
  let admin = '';
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, payload?: unknown) =>
    ctx().inject({
      method,
      url,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  before(async () => {
    operator = (
      await login(
        ctx(),
        ['policy:read', 'policy:write', 'trust:read', 'trust:write', 'audit:read', 'labels:write'],
        'operator',
      )
    ).token;
    reader = (await login(ctx(), ['policy:read'])).token;
    scorer = (await login(ctx(), ['trust:read', 'trust:write', 'audit:read', 'labels:write'])).token;
    admin = await ctx().token();
  });

  test('the built-in policy is stored and active at first start: GET list and show 200', async () => {
    const res = await call('GET', '/api/v1/policies', reader);
    assert.equal(res.statusCode, 200, res.body);
    const builtin = res.json().data.find((p: { version: string }) => p.version === DEFAULT_POLICY.version);
    assert.equal(builtin.status, 'active');
    assert.equal(builtin.source, 'builtin');
    assert.equal(typeof builtin.summary, 'string');
    assert.ok('next_cursor' in res.json());
    const one = await call('GET', `/api/v1/policies/${DEFAULT_POLICY.version}`, reader);
    assert.equal(one.statusCode, 200, one.body);
    assert.deepEqual(one.json().document, JSON.parse(JSON.stringify(DEFAULT_POLICY)));
    assert.equal(one.json().report, null);
    problem(await call('GET', '/api/v1/policies/no-such-version', reader), 404, 'not_found');
  });

  test('upload: 201 candidate; invalid 400 validation_failed naming fields; same version 409; role service 403; 401', async () => {
    const created = await call('POST', '/api/v1/policies', operator, doc('upload-1'));
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().status, 'candidate');
    assert.equal(created.json().source, 'upload');
    assert.equal(created.headers.location, '/api/v1/policies/upload-1');
    problem(await call('POST', '/api/v1/policies', operator, doc('upload-1')), 409, 'conflict');
    const bad = problem(
      await call('POST', '/api/v1/policies', operator, {
        ...doc('upload-bad'),
        weights: { ...DEFAULT_POLICY.weights, chargebacks: -1 },
        extra: 1,
      }),
      400,
      'validation_failed',
    );
    const fields = (bad.errors as { field: string }[]).map((e) => e.field);
    assert.ok(fields.includes('extra') || fields.includes('weights.chargebacks'), JSON.stringify(bad.errors));
    const badSign = problem(
      await call('POST', '/api/v1/policies', operator, {
        ...doc('upload-bad2'),
        weights: { ...DEFAULT_POLICY.weights, chargebacks: -1 },
      }),
      400,
      'validation_failed',
    );
    assert.deepEqual(
      (badSign.errors as { field: string }[]).map((e) => e.field),
      ['weights.chargebacks'],
    );
    const service = (await login(ctx(), ['policy:read', 'policy:write'], 'service')).token;
    problem(await call('POST', '/api/v1/policies', service, doc('upload-2')), 403, 'insufficient_scope');
    // The role is checked before the body: a service principal learns nothing from validation.
    problem(await call('POST', '/api/v1/policies', service, { version: '' }), 403, 'insufficient_scope');
    problem(await call('POST', '/api/v1/policies/fit', service, { holdout_fraction: 5 }), 403, 'insufficient_scope');
    problem(await call('DELETE', '/api/v1/policies/shadow', service), 403, 'insufficient_scope');
    problem(await ctx().inject({ method: 'DELETE', url: '/api/v1/policies/shadow' }), 401, 'unauthenticated');
    problem(await call('POST', '/api/v1/policies', reader, doc('upload-2')), 403, 'insufficient_scope');
    problem(
      await ctx().inject({ method: 'POST', url: '/api/v1/policies', payload: doc('upload-2') }),
      401,
      'unauthenticated',
    );
    problem(await ctx().inject({ method: 'GET', url: '/api/v1/policies' }), 401, 'unauthenticated');
    problem(await call('GET', '/api/v1/policies', scorer), 403, 'insufficient_scope');
  });

  test('activate: 200 active, the previous retired; the next score uses it and never a cached result of the old policy', async () => {
    const entity = hash('activate-subject');
    const body = { entity_id: entity, amount: 50, currency: 'USD' };
    const first = await score(ctx(), scorer, body);
    assert.equal(first.json().policy_version, DEFAULT_POLICY.version);
    assert.equal((await score(ctx(), scorer, body)).json().cached, true);
    assert.equal((await call('POST', '/api/v1/policies', operator, doc('activate-1', { bias: -1 }))).statusCode, 201);
    const activated = await call('POST', '/api/v1/policies/activate-1/activate', operator);
    assert.equal(activated.statusCode, 200, activated.body);
    assert.equal(activated.json().status, 'active');
    assert.equal((await call('GET', `/api/v1/policies/${DEFAULT_POLICY.version}`, reader)).json().status, 'retired');
    const after = await score(ctx(), scorer, body);
    assert.equal(after.json().cached, false);
    assert.equal(after.json().policy_version, 'activate-1');
    assert.notEqual(after.json().decision_id, first.json().decision_id);
    problem(await call('POST', '/api/v1/policies/nope/activate', operator), 404, 'not_found');
    problem(await call('POST', '/api/v1/policies/activate-1/activate', reader), 403, 'insufficient_scope');
    // The activated policy's cache TTL applies to the entries made under it (here: none kept).
    assert.equal(
      (await call('POST', '/api/v1/policies', operator, doc('activate-ttl0', { cacheTtlSeconds: 0 }))).statusCode,
      201,
    );
    assert.equal((await call('POST', '/api/v1/policies/activate-ttl0/activate', operator)).statusCode, 200);
    assert.equal((await score(ctx(), scorer, body)).json().cached, false);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await score(ctx(), scorer, body)).json().cached, false);
    // Back to the built-in policy for the tests that follow.
    assert.equal((await call('POST', `/api/v1/policies/${DEFAULT_POLICY.version}/activate`, operator)).statusCode, 200);
  });

  test('derive: a new candidate from a version with a few fields changed (merge patch); invalid 400 naming changes.<field>; 409 on a taken version', async () => {
    const base = DEFAULT_POLICY.version;
    const made = await call('POST', `/api/v1/policies/${base}/derive`, operator, {
      version: 'sampled-5pc',
      changes: { reviewSampleRate: 0.05, reviewHours: { hold: 2 } },
    });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal(made.headers.location, '/api/v1/policies/sampled-5pc');
    const body = made.json();
    assert.deepEqual([body.status, body.source, body.parent_version], ['candidate', 'derived', base]);
    const expected = { ...DEFAULT_POLICY, version: 'sampled-5pc', reviewSampleRate: 0.05 } as Record<string, unknown>;
    expected.reviewHours = { ...((DEFAULT_POLICY as { reviewHours?: object }).reviewHours ?? {}), hold: 2 };
    assert.deepEqual(body.document, expected, 'everything else as the base');
    const invalid = problem(
      await call('POST', `/api/v1/policies/${base}/derive`, operator, {
        version: 'bad-rate',
        changes: { reviewSampleRate: 2 },
      }),
      400,
      'validation_failed',
    );
    assert.deepEqual(
      (invalid.errors as Array<{ field: string }>).map((e) => e.field),
      ['changes.reviewSampleRate'],
    );
    problem(
      await call('POST', `/api/v1/policies/${base}/derive`, operator, {
        version: 'proto',
        changes: JSON.parse('{"__proto__": {}}'),
      }),
      400,
      'invalid_request', // refused by the body parser before any merge
    );
    problem(
      await call('POST', `/api/v1/policies/${base}/derive`, operator, { version: 'sampled-5pc', changes: {} }),
      409,
      'conflict',
    );
    problem(
      await call('POST', '/api/v1/policies/nope/derive', operator, { version: 'x', changes: {} }),
      404,
      'not_found',
    );
    problem(
      await call('POST', `/api/v1/policies/${base}/derive`, reader, { version: 'x', changes: {} }),
      403,
      'insufficient_scope',
    );
  });

  test('shadow: every score also stores the shadow score, never returned; DELETE ends it', async () => {
    assert.equal((await call('POST', '/api/v1/policies', operator, doc('shadow-1', { bias: 1 }))).statusCode, 201);
    const set = await call('POST', '/api/v1/policies/shadow-1/shadow', operator);
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().status, 'shadow');
    problem(await call('POST', `/api/v1/policies/${DEFAULT_POLICY.version}/shadow`, operator), 409, 'conflict');
    const res = await score(ctx(), scorer, { entity_id: hash('shadow-subject'), amount: 70, currency: 'USD' });
    assert.equal(res.statusCode, 200);
    assert.ok(!JSON.stringify(res.json()).includes('shadow'), 'the response never carries the shadow score');
    const id = res.json().decision_id as string;
    const row = await ctx()
      .store.db.selectFrom('decisions')
      .select(['shadow_version', 'shadow_score'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.shadow_version, 'shadow-1');
    assert.equal(typeof Number(row.shadow_score), 'number');
    assert.ok(Number(row.shadow_score) > res.json().score, 'bias +1 scores higher');
    const shown = await call('GET', `/api/v1/decisions/${id}`, admin);
    // (its shadow_rules are the rules' shadow matches, docs/rules.md: not the shadow policy)
    assert.ok(
      !/shadow_version|shadow_score|shadow-1/.test(shown.body),
      'the stored decision view never shows it either',
    );
    assert.deepEqual(shown.json().shadow_rules, []);
    // A backtest of the shadow policy includes its live scores.
    const bt = await call('POST', '/api/v1/policies/shadow-1/backtest', operator, {});
    assert.equal(bt.statusCode, 200, bt.body);
    assert.ok(bt.json().live.decisions >= 1);
    const ended = await call('DELETE', '/api/v1/policies/shadow', operator);
    assert.equal(ended.statusCode, 200, ended.body);
    assert.equal(ended.json().previous, 'shadow-1');
    const later = await score(ctx(), scorer, { entity_id: hash('shadow-subject-2'), amount: 70, currency: 'USD' });
    const row2 = await ctx()
      .store.db.selectFrom('decisions')
      .select(['shadow_version'])
      .where('id', '=', later.json().decision_id)
      .executeTakeFirstOrThrow();
    assert.equal(row2.shadow_version, null);
    problem(await call('POST', '/api/v1/policies/nope/shadow', operator), 404, 'not_found');
  });

  test('fit: 422 insufficient_labels below 30 of a label; then 201 candidate (source fit) with its report; backtest equals a replay by hand', async () => {
    problem(await call('POST', '/api/v1/policies/fit', operator, {}), 422, 'insufficient_labels');
    // 40 fraudsters (chargebacks and reports) and 40 honest traders, each scored once and labelled.
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 40; i++) {
      events.push(...tradeHistory(hash(`fit-good-${i}`), 5 + (i % 7), 60));
      events.push(...tradeHistory(hash(`fit-bad-${i}`), 1 + (i % 3), 10));
      events.push(event('chargeback', hash(`fit-bad-${i}`), { amount: 50, currency: 'USD' }, 3_600_000));
      if (i % 2 === 0) events.push(event('fraud.reported', hash(`fit-bad-${i}`), {}, 3_600_000));
    }
    for (let i = 0; i < events.length; i += 500) await postEvents(ctx(), scorer, events.slice(i, i + 500));
    for (let i = 0; i < 40; i++) {
      for (const [kind, label] of [
        ['good', 'legit'],
        ['bad', 'fraud'],
      ] as const) {
        const res = await score(ctx(), scorer, {
          entity_id: hash(`fit-${kind}-${i}`),
          amount: 100,
          currency: 'USD',
          context: { payment_method: kind === 'bad' ? 'card' : 'bank_transfer', trade_id: `t-${kind}-${i}` },
        });
        assert.equal(res.statusCode, 200, res.body);
        const l = await call('POST', `/api/v1/decisions/${res.json().decision_id}/label`, scorer, { label });
        assert.equal(l.statusCode, 200, l.body);
      }
    }
    problem(await call('POST', '/api/v1/policies/fit', operator, { base_version: 'nope' }), 404, 'not_found');
    problem(await call('POST', '/api/v1/policies/fit', operator, { holdout_fraction: 2 }), 400, 'validation_failed');
    problem(await call('POST', '/api/v1/policies/fit', reader, {}), 403, 'insufficient_scope');
    const fit = await call('POST', '/api/v1/policies/fit', operator, { holdout_fraction: 0.3 });
    assert.equal(fit.statusCode, 201, fit.body);
    const body = fit.json();
    assert.equal(body.status, 'candidate');
    assert.equal(body.source, 'fit');
    assert.equal(body.parent_version, DEFAULT_POLICY.version);
    const report = body.report;
    assert.ok(report.labels.fraud >= 40 && report.labels.legit >= 40, JSON.stringify(report.labels));
    for (const m of ['base', 'candidate'])
      for (const k of ['roc_auc', 'average_precision', 'brier', 'calibration_error']) assert.ok(k in report.metrics[m]);
    assert.ok(Array.isArray(report.thresholds) && report.thresholds.length === 4);
    assert.ok(
      report.weights.chargebacks.candidate >= 0 && report.weights.completed_trades.candidate <= 0,
      'signs kept',
    );
    assert.equal(report.holdout.decisions + report.train.decisions, report.labels.fraud + report.labels.legit);
    // the same fit again, with no new labels: the same candidate, not a second copy
    const again = await call('POST', '/api/v1/policies/fit', operator, { holdout_fraction: 0.3 });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().version, body.version);
    assert.equal(again.headers.location, `/api/v1/policies/${encodeURIComponent(body.version)}`);

    // Backtest of the candidate equals the pure replay over the stored features.
    const bt = await call('POST', `/api/v1/policies/${body.version}/backtest`, operator, {});
    assert.equal(bt.statusCode, 200, bt.body);
    const stored = await ctx()
      .store.db.selectFrom('decisions')
      .select(['features', 'label', 'risk_level'])
      .where('environment', '=', 'live')
      .where('kind', '=', 'score')
      .where('features', 'is not', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const expected = backtest(
      body.document,
      stored.map((r) => ({
        features: decodeFeatures(r.features!),
        label: r.label === 'fraud' ? 1 : r.label === 'legit' ? 0 : null,
        riskLevel: r.risk_level as 'low',
      })),
    );
    assert.equal(bt.json().decisions, expected.decisions);
    assert.equal(bt.json().labelled, expected.labelled);
    assert.deepEqual(bt.json().levels, expected.levels);
    assert.deepEqual(bt.json().metrics, expected.metrics);
    problem(await call('POST', '/api/v1/policies/nope/backtest', operator, {}), 404, 'not_found');
    problem(
      await call('POST', `/api/v1/policies/${body.version}/backtest`, operator, { since: 'yesterday' }),
      400,
      'validation_failed',
    );

    // The report: JSON, and a self-contained HTML page with inline SVG plots.
    const json = await call('GET', `/api/v1/policies/${body.version}/report`, reader);
    assert.equal(json.statusCode, 200, json.body);
    assert.deepEqual(json.json().report.metrics, report.metrics);
    const html = await ctx().inject({
      method: 'GET',
      url: `/api/v1/policies/${body.version}/report`,
      headers: { ...bearer(reader), accept: 'text/html' },
    });
    assert.equal(html.statusCode, 200, html.body.slice(0, 300));
    assert.match(String(html.headers['content-type']), /^text\/html/);
    assert.ok((html.body.match(/<svg/g) ?? []).length >= 5, 'five plots');
    assert.ok(
      !/<script|https?:\/\/(?!www\.w3\.org)/i.test(html.body.replace(/xmlns(:\w+)?="[^"]*"/g, '')),
      'no script and no network reference',
    );
    problem(await call('GET', `/api/v1/policies/${DEFAULT_POLICY.version}/report`, reader), 404, 'not_found');
  });

  test('fuzzed bodies on upload, fit, backtest and activate never get a 5xx', async () => {
    const cases: [string, string[]][] = [
      ['/api/v1/policies', Object.keys(DEFAULT_POLICY)],
      ['/api/v1/policies/fit', ['since', 'until', 'base_version', 'assume_legit_after_days', 'holdout_fraction']],
      [`/api/v1/policies/${DEFAULT_POLICY.version}/backtest`, ['since', 'until']],
      [`/api/v1/policies/${DEFAULT_POLICY.version}/activate`, ['version']],
      [`/api/v1/policies/${DEFAULT_POLICY.version}/derive`, ['version', 'changes']],
    ];
    for (const [url, keys] of cases) {
      await fc.assert(
        fc.asyncProperty(bodies(keys), async (text) => {
          const res = await ctx().inject({
            method: 'POST',
            url,
            headers: { ...bearer(operator), ...JSON_TYPE },
            payload: text,
          });
          wellBehaved(res, `${url} ${text}`);
        }),
        { numRuns: 40 },
      );
    }
  });
});
