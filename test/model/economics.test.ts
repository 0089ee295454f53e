// docs/api.md, "Decisions by money": each outcome's expected cost, the least of them (a review only
// when it saves reviewGainMin), amounts put in the cost currency, and p as σ of the log-odds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  costModelOf,
  decideByMoney,
  expectedCosts,
  inCostCurrency,
  leastCost,
  type Economics,
} from '../../src/model/economics.ts';

/** The desk of issue 39's goal: loss 1, decline 1 % + 20, a review 3, a reviewer right 95 % of the time. */
const DESK: Economics = { currency: 'USD', declineCost: { rate: 0.01, fixed: 20 }, reviewCost: 3 };

test('the worked example: p = 0.1 on 1,000 USD costs 100 approved, 27 declined, 9.35 reviewed', () => {
  const c = expectedCosts(0.1, 1000, costModelOf(DESK));
  assert.ok(Math.abs(c.approve - 100) < 1e-9 && Math.abs(c.decline - 27) < 1e-9 && Math.abs(c.review - 9.35) < 1e-9);
  assert.equal(leastCost(c, 0), 'review');
  assert.equal(leastCost(c, 20), 'decline', 'a review that saves less than reviewGainMin is not worth the queue');
  // the same p on 10 USD: approving risks 1, turning away costs 18
  assert.equal(leastCost(expectedCosts(0.1, 10, costModelOf(DESK)), 0), 'approve');
});

test('the least-cost outcome is never dearer than another, and a review saves at least the gain it must', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1e7, noNaN: true }),
      fc.record({
        lossRate: fc.double({ min: 0, max: 1, noNaN: true }),
        rate: fc.double({ min: 0, max: 1, noNaN: true }),
        fixed: fc.double({ min: 0, max: 1000, noNaN: true }),
        reviewCost: fc.double({ min: 0, max: 1000, noNaN: true }),
        reviewerAccuracy: fc.double({ min: 0.5, max: 1, noNaN: true }),
        gain: fc.double({ min: 0, max: 1000, noNaN: true }),
      }),
      (p, a, e) => {
        const model = costModelOf({
          currency: 'USD',
          lossRate: e.lossRate,
          declineCost: { rate: e.rate, fixed: e.fixed },
          reviewCost: e.reviewCost,
          reviewerAccuracy: e.reviewerAccuracy,
        });
        const c = expectedCosts(p, a, model);
        const chosen = leastCost(c, e.gain);
        const other = Math.min(c.approve, c.decline);
        if (chosen === 'review') assert.ok(c.review + e.gain <= other);
        else {
          assert.equal(c[chosen], other);
          assert.ok(!(c.review + e.gain <= other && c.review < other));
        }
      },
    ),
  );
});

test('amounts in the cost currency: the same, by rates, by reference amounts, or not at all', () => {
  const model = costModelOf({ ...DESK, rates: { EUR: 1.08 } });
  const refs = { USD: 1000, NGN: 1_500_000, EUR: 920 };
  assert.equal(inCostCurrency(50, 'USD', model, refs), 50);
  assert.ok(Math.abs(inCostCurrency(100, 'EUR', model, refs)! - 108) < 1e-9, 'a rate wins over reference amounts');
  assert.ok(Math.abs(inCostCurrency(150_000, 'NGN', model, refs)! - 100) < 1e-9);
  assert.equal(inCostCurrency(1, 'XYZ', model, refs), null);
});

test('p is σ of the bias and the signals as scored; an unconvertible amount decides nothing', () => {
  const money = decideByMoney(DESK, -2, [{ weight: 1, value: 2 }], 1000, 'USD', {})!;
  assert.equal(money.fraud_probability, 0.5);
  assert.deepEqual(money.expected_costs, { approve: 500, review: 28.75, decline: 15, currency: 'USD' });
  assert.equal(money.outcome, 'decline');
  assert.equal(decideByMoney(DESK, 0, [], 10, 'XYZ', {}), undefined);
});
