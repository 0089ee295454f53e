// docs/api.md, "Decisions by money": with economics in the active policy, a score is decided by the
// outcome of least expected cost — the same entity approved for a small trade and declined for a
// large one — and carries p and the three costs; safe_amount is the largest amount approved.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';

describeEachBackend('decisions by money', (ctx) => {
  let token = '';
  before(async () => {
    token = await ctx().token();
    const derived = await ctx().inject({
      method: 'POST',
      url: `/api/v1/policies/${DEFAULT_POLICY.version}/derive`,
      headers: bearer(token),
      payload: {
        version: 'by-money',
        changes: { economics: { currency: 'USD', declineCost: { rate: 0.01, fixed: 20 }, reviewCost: 3 } },
      },
    });
    assert.equal(derived.statusCode, 201, derived.body);
    const activated = await ctx().inject({
      method: 'POST',
      url: '/api/v1/policies/by-money/activate',
      headers: bearer(token),
      payload: { confirm: true },
    });
    assert.equal(activated.statusCode, 200, activated.body);
  });

  const score = async (entity: string, amount: number) => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/score',
      headers: bearer(token),
      payload: { entity_id: hash(entity), amount, currency: 'USD' },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as {
      score: number;
      outcome: string;
      safe_amount: number | null;
      fraud_probability: number;
      expected_costs: { approve: number; review: number; decline: number; currency: string };
    };
  };

  test('the same entity: approved for 10 USD, declined for 100,000; p and the costs say why', async () => {
    const small = await score('money-1', 10);
    const large = await score('money-1', 100_000);
    assert.equal(small.outcome, 'approve');
    assert.equal(large.outcome, 'decline');
    for (const s of [small, large]) {
      assert.ok(Math.abs(s.fraud_probability * 100 - s.score) <= 0.5 + 1e-9, `p ${s.fraud_probability} vs ${s.score}`);
      assert.equal(s.expected_costs.currency, 'USD');
      const least = Math.min(s.expected_costs.approve, s.expected_costs.review, s.expected_costs.decline);
      assert.equal(s.expected_costs[s.outcome as 'approve' | 'decline'], least);
    }
  });

  test('safe_amount is the largest amount approved: approved at it, not one cent above', async () => {
    const { safe_amount } = await score('money-2', 50);
    assert.ok(safe_amount !== null && safe_amount > 0, String(safe_amount));
    assert.equal((await score('money-2', safe_amount)).outcome, 'approve');
    assert.notEqual((await score('money-2', Math.round((safe_amount + 0.01) * 100) / 100)).outcome, 'approve');
  });
});
