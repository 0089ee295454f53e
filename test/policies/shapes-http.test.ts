// Shaped signals over HTTP (docs/api.md, "Policies"): a shaped policy uploads, a non-monotone one is
// a 400 naming the field, and a decision scored under a shaped policy replays to its live score.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { hash, score, postEvents, tradeHistory } from '../helpers/trust.ts';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { replayScore } from '../../src/model/arithmetic.ts';
import { decodeFeatures } from '../../src/model/feature-vector.ts';
import { referenceScoreFromSignals } from '../helpers/reference-model.ts';

const shaped = (version: string, shapes: unknown): Policy =>
  JSON.parse(JSON.stringify({ ...DEFAULT_POLICY, version, shapes })) as Policy;

describeEachBackend('shaped policies over HTTP', (ctx) => {
  let operator = '';
  let scorer = '';
  const call = (method: 'GET' | 'POST', url: string, token: string, payload?: unknown) =>
    ctx().inject({
      method,
      url,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  before(async () => {
    const login = async (scopes: string[], role: 'operator' | 'service') => {
      const c = await ctx().client(scopes, role);
      return (
        await ctx().inject({
          method: 'POST',
          url: '/api/v1/auth/token',
          payload: { client_id: c.id, client_secret: c.secret },
        })
      ).json().access_token as string;
    };
    operator = await login(['policy:read', 'policy:write'], 'operator');
    scorer = await login(['trust:read', 'trust:write'], 'service');
  });

  test('a non-monotone shape is a 400 naming the field', async () => {
    const wrongSign = problem(
      await call(
        'POST',
        '/api/v1/policies',
        operator,
        shaped('bent-bad-1', { velocity_trades: { knots: [0.5, 1.5], slopes: [1, -2] } }),
      ),
      400,
      'validation_failed',
    );
    assert.deepEqual(
      (wrongSign.errors as { field: string }[]).map((e) => e.field),
      ['shapes.velocity_trades.slopes.1'],
    );
    const unsorted = problem(
      await call(
        'POST',
        '/api/v1/policies',
        operator,
        shaped('bent-bad-2', { completed_trades: { knots: [4, 2], slopes: [-0.1, -0.2] } }),
      ),
      400,
      'validation_failed',
    );
    assert.deepEqual(
      (unsorted.errors as { field: string }[]).map((e) => e.field),
      ['shapes.completed_trades.knots.1'],
    );
  });

  test('a shaped policy uploads and scores; the stored decision replays to the live score', async () => {
    const policy = shaped('bent-1', {
      completed_trades: { knots: [2, 4], slopes: [-0.4, -0.05] },
      amount_vs_history: { knots: [1], slopes: [2] },
    });
    const created = await call('POST', '/api/v1/policies', operator, policy);
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().document.shapes, policy.shapes);
    assert.equal((await call('POST', '/api/v1/policies/bent-1/activate', operator)).statusCode, 200);
    try {
      const entity = hash('bent-subject');
      await postEvents(ctx(), scorer, tradeHistory(entity, 12, 30));
      const res = await score(ctx(), scorer, { entity_id: entity, amount: 900, currency: 'USD' });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.policy_version, 'bent-1');
      const signals = body.signals as { name: string; value: number; weight: number }[];
      const trades = signals.find((s) => s.name === 'completed_trades');
      assert.ok(trades && trades.value > 2, 'completed_trades is past its first knot');
      assert.notEqual(trades.weight, DEFAULT_POLICY.weights.completed_trades, 'the effective slope, not the first one');
      assert.equal(referenceScoreFromSignals(policy.bias, signals), body.score, 'the explanation sums to the score');
      const row = await ctx()
        .store.db.selectFrom('decisions')
        .select(['features'])
        .where('id', '=', body.decision_id)
        .executeTakeFirstOrThrow();
      assert.equal(replayScore(policy, decodeFeatures(row.features!)), body.score);
    } finally {
      assert.equal(
        (await call('POST', `/api/v1/policies/${DEFAULT_POLICY.version}/activate`, operator)).statusCode,
        200,
      );
    }
  });
});
