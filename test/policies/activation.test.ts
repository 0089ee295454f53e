// Operating points over HTTP (docs/api.md, "Policies"): a fit's target sets its thresholds, the
// report and the backtest give per-level counts and money, and an activation that moves the share
// flagged high+ beyond the documented limits answers 409 with the figures until confirmed.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { DEFAULT_POLICY, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';
import { FEATURE_SET } from '../../src/model/feature-vector.ts';
import { mulberry32 } from '../../bench/quality/prng.ts';

const doc = (version: string, changes: Partial<Policy> = {}): Policy =>
  JSON.parse(JSON.stringify({ ...DEFAULT_POLICY, version, ...changes })) as Policy;

describeEachBackend('operating points over HTTP', (ctx) => {
  let token = '';
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    ctx().inject({
      method,
      url,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  before(async () => {
    token = await ctx().token();
    // 800 labelled decisions: fraud where chargebacks and new_account are high.
    const next = mulberry32(20);
    const t0 = Date.parse('2026-11-01T00:00:00Z');
    const rows = Array.from({ length: 800 }, (_, i) => {
      const features = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])) as Record<string, number>;
      features.chargebacks = next() < 0.15 ? 1 + Math.round(next() * 2) : 0;
      features.new_account = Math.round(next() * 1e4) / 1e4;
      features.completed_trades = Math.round(next() * 6e4) / 1e4;
      const fraud = features.chargebacks + features.new_account + 0.5 * next() > 1.6;
      return {
        id: `op-${i}`,
        kind: 'score',
        environment: 'live',
        principal_id: 'p',
        owner_client_id: 'c',
        subject_id: `entity-${i % 400}`,
        request_digest: 'd',
        result: '{}',
        policy_version: DEFAULT_POLICY.version,
        created_at: t0 + i * 1000,
        features: JSON.stringify(features),
        feature_set: FEATURE_SET,
        risk_level: 'low',
        request: JSON.stringify({ amount: 10 + (i % 5), currency: i % 3 === 0 ? 'EUR' : 'USD' }),
        label: fraud ? 'fraud' : 'legit',
        label_source: 'api',
        labelled_at: t0,
      };
    });
    for (let i = 0; i < rows.length; i += 200)
      await ctx()
        .store.db.insertInto('decisions')
        .values(rows.slice(i, i + 200) as never)
        .execute();
  });

  test("fit with a target: the candidate's high threshold meets it on the holdout; the report gives counts and money per level", async () => {
    const res = await call('POST', '/api/v1/policies/fit', {
      target: { level: 'high', max_false_positive_rate: 0.05 },
    });
    assert.equal(res.statusCode, 201, res.body);
    const { report, document } = res.json();
    assert.deepEqual(report.target.target, { level: 'high', max_false_positive_rate: 0.05 });
    assert.equal(report.target.min_score, document.thresholds.high);
    const high = report.thresholds.find((t: { risk_level: string }) => t.risk_level === 'high');
    assert.ok(high.false_positive_rate <= 0.05, JSON.stringify(high));
    assert.equal(high.flagged, high.frauds_caught + high.false_positives);
    assert.ok(Object.keys(report.thresholds[0].volume_held).includes('USD'));
    const byDefault = await call('POST', '/api/v1/policies/fit', {});
    assert.equal(byDefault.statusCode, 201, byDefault.body);
    assert.equal(byDefault.json().report.target.source, 'default');
  });

  test('a target needs exactly one limit and a known level: 400 validation_failed', async () => {
    problem(await call('POST', '/api/v1/policies/fit', { target: { level: 'high' } }), 400, 'validation_failed');
    problem(
      await call('POST', '/api/v1/policies/fit', {
        target: { level: 'high', max_share_flagged: 0.1, min_precision: 0.2 },
      }),
      400,
      'validation_failed',
    );
    problem(
      await call('POST', '/api/v1/policies/fit', { target: { level: 'medium', max_share_flagged: 0.1 } }),
      400,
      'validation_failed',
    );
    problem(
      await call('POST', '/api/v1/policies/fit', { target: { level: 'high', max_false_positive_rate: 2 } }),
      400,
      'validation_failed',
    );
  });

  test('the backtest shows the same per-level figures before activation', async () => {
    const res = await call('POST', `/api/v1/policies/${DEFAULT_POLICY.version}/backtest`, {});
    assert.equal(res.statusCode, 200, res.body);
    const levels = res.json().thresholds as {
      risk_level: string;
      flagged: number;
      frauds_caught: number;
      false_positives: number;
      volume_caught: Record<string, number>;
    }[];
    assert.deepEqual(
      levels.map((l) => l.risk_level),
      ['low', 'medium', 'high', 'critical'],
    );
    assert.equal(levels[0]!.flagged, 800);
    for (const l of levels) assert.equal(l.flagged, l.frauds_caught + l.false_positives);
  });

  test('the cost objective: economics from the capacity, the desk outcomes of base and candidate, a frontier; backtests report outcomes', async () => {
    const economics = {
      currency: 'USD',
      declineCost: { rate: 0.01, fixed: 1 },
      reviewCost: 0.5,
      reviewsPerDay: 100,
    };
    const res = await call('POST', '/api/v1/policies/fit', { objective: 'cost', economics });
    assert.equal(res.statusCode, 201, res.body);
    const { report, document, version } = res.json();
    assert.equal(report.objective, 'cost');
    assert.deepEqual(
      { ...document.economics, reviewGainMin: undefined, reviewerAccuracy: undefined },
      {
        ...economics,
        reviewGainMin: undefined,
        reviewerAccuracy: undefined,
      },
    );
    assert.ok(document.economics.reviewGainMin >= 0);
    assert.equal(document.economics.reviewerAccuracy, 0.95, 'no resolved reviews to measure: the stated default');
    // 800 decisions within a day count as a day: 100 reviews a day is 1/8 of the decisions
    assert.deepEqual(report.capacity, { reviews_per_day: 100, decisions_per_day: 800, review_share: 0.125 });
    for (const side of ['base', 'candidate'])
      for (const k of ['stopped_fraud', 'legit_friction', 'fraud_money_passed', 'reviews_per_1k', 'expected_cost'])
        assert.equal(typeof report.outcomes[side][k], 'number', `${side}.${k}`);
    assert.ok(report.outcomes.candidate.reviews_per_1k <= 125 * 1.5, JSON.stringify(report.outcomes.candidate));
    assert.equal(report.frontier.length, 20);
    const backtest = await call('POST', `/api/v1/policies/${version}/backtest`, {});
    assert.equal(backtest.statusCode, 200, backtest.body);
    assert.equal(backtest.json().outcomes.decisions, 800);
    assert.equal(backtest.json().outcomes.currency, 'USD');
    const byDefault = await call('POST', '/api/v1/policies/fit', { objective: 'cost' });
    assert.equal(byDefault.statusCode, 201, byDefault.body);
    assert.deepEqual(byDefault.json().document.economics.declineCost, { rate: 0.01, fixed: 20 });
    const target = await call('POST', '/api/v1/policies/fit', { objective: 'target' });
    assert.equal(target.json().document.economics, undefined);
    assert.equal(target.json().report.outcomes, undefined);
    const bad = problem(
      await call('POST', '/api/v1/policies/fit', { economics: { ...economics, reviewerAccuracy: 0.3 } }),
      400,
      'validation_failed',
    );
    assert.match(JSON.stringify(bad.errors), /reviewerAccuracy/);
  });

  test('activation: a small move activates at once; a large one answers 409 with before/after until confirmed', async () => {
    assert.equal((await call('POST', '/api/v1/policies', doc('op-same', { cacheTtlSeconds: 31 }))).statusCode, 201);
    const same = await call('POST', '/api/v1/policies/op-same/activate');
    assert.equal(same.statusCode, 200, same.body);
    assert.equal(
      (await call('POST', '/api/v1/policies', doc('op-wide', { thresholds: { medium: 1, high: 2, critical: 3 } })))
        .statusCode,
      201,
    );
    const asked = problem(await call('POST', '/api/v1/policies/op-wide/activate', {}), 409, 'conflict');
    const move = asked.operating_point as {
      decisions: number;
      before: { version: string; share_flagged_high: number };
      after: { share_flagged_high: number };
      exceeds: boolean;
    };
    assert.equal(move.before.version, 'op-same');
    assert.equal(move.after.share_flagged_high, 1);
    assert.ok(move.before.share_flagged_high < 0.5);
    assert.equal(move.decisions, 800);
    assert.equal(move.exceeds, true);
    assert.equal((await call('GET', '/api/v1/policies/op-wide')).json().status, 'candidate');
    problem(await call('POST', '/api/v1/policies/op-wide/activate', { confirm: 'yes' }), 400, 'validation_failed');
    const confirmed = await call('POST', '/api/v1/policies/op-wide/activate', { confirm: true });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(confirmed.json().status, 'active');
    // Back to a narrow policy is also a large move.
    problem(await call('POST', `/api/v1/policies/op-same/activate`), 409, 'conflict');
    assert.equal((await call('POST', '/api/v1/policies/op-same/activate', { confirm: true })).statusCode, 200);
  });
});
