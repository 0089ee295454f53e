// The desk's figures (docs/api.md, "Decisions by money"): what a policy's decisions do on labelled
// decisions after review, the reviewGainMin a capacity allows, and the frontier of other settings.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { costModelOf, expectedCosts, probabilityOf, type CostModel } from '../../src/model/economics.ts';
import {
  byLevel,
  byMoney,
  deskOutcomes,
  frontier,
  gainForCapacity,
  type Decide,
  type DeskRow,
} from '../../src/policies/desk-outcomes.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';

const model: CostModel = costModelOf({
  currency: 'USD',
  declineCost: { rate: 0.01, fixed: 20 },
  reviewCost: 3,
  reviewerAccuracy: 0.9,
});
const logit = (p: number) => Math.log(p / (1 - p));
const row = (p: number, label: 0 | 1, amount: number | null, weight = 1): DeskRow => ({
  z: logit(p),
  label,
  amount,
  weight,
});

describe('deskOutcomes', () => {
  test('counts each action after review, money by amount, cost by what each decision turned out to cost', () => {
    const actions = ['approve', 'review', 'decline', 'approve', 'review', 'decline'] as const;
    const rows = [
      row(0.1, 1, 100), // fraud approved: 100 lost
      row(0.5, 1, 300), // fraud reviewed: caught 90 %, 10 % of 300 passes
      row(0.9, 1, 600), // fraud declined
      row(0.1, 0, 1000), // honest approved
      row(0.5, 0, 1000), // honest reviewed: 10 % wrongly declined
      row(0.9, 0, 1000), // honest declined
    ];
    let i = 0;
    const scripted: Decide = () => actions[i++ % actions.length]!;
    const o = deskOutcomes(rows, scripted, model);
    assert.equal(o.decisions, 6);
    assert.equal(o.stopped_fraud, Math.round(((0 + 0.9 + 1) / 3) * 1e4) / 1e4);
    assert.equal(o.legit_friction, Math.round(((0 + 0.1 + 1) / 3) * 1e4) / 1e4);
    assert.equal(o.legit_not_approved, Math.round((2 / 3) * 1e4) / 1e4);
    assert.equal(o.legit_declined, Math.round((1 / 3) * 1e4) / 1e4);
    assert.equal(o.fraud_money_passed, Math.round(((100 + 30) / 1000) * 1e4) / 1e4);
    assert.equal(o.reviews_per_1k, Math.round((2 / 6) * 1e5) / 100);
    assert.equal(o.decline_precision, 0.5);
    const turnedAway = 0.01 * 1000 + 20;
    const cost = 100 + (3 + 0.1 * 300) + 0 + 0 + (3 + 0.1 * turnedAway) + turnedAway;
    assert.equal(o.expected_cost, Math.round((cost / 6) * 100) / 100);
    assert.equal(o.currency, 'USD');
  });

  test('sample weights count as that many decisions; a row without an amount counts but is not priced', () => {
    const once = deskOutcomes([row(0.9, 1, 10, 3), row(0.1, 0, null)], () => 'decline', model);
    assert.equal(once.stopped_fraud, 1);
    assert.equal(once.legit_friction, 1);
    assert.equal(once.decline_precision, 0.75);
    assert.equal(once.expected_cost, 0);
    assert.equal(deskOutcomes([], () => 'approve', model).stopped_fraud, null);
  });

  test('byMoney takes the least expected cost and falls back to the level map without an amount', () => {
    const decide = byMoney(model, byLevel(DEFAULT_POLICY));
    assert.equal(decide(logit(0.001), 100), 'approve');
    assert.equal(decide(logit(0.9), 10_000), 'decline');
    const costs = expectedCosts(0.2, 200, model);
    assert.ok(costs.review < Math.min(costs.approve, costs.decline));
    assert.equal(decide(logit(0.2), 200), 'review');
    assert.equal(decide(logit(0.999), null), 'decline', 'critical → decline by the default map');
  });
});

describe('gainForCapacity', () => {
  const rows = Array.from({ length: 400 }, (_, i) => row(0.02 + (i % 40) / 50, i % 7 === 0 ? 1 : 0, 50 + i * 3));
  const reviewsAt = (gainMin: number) =>
    rows.filter((r) => byMoney({ ...model, reviewGainMin: gainMin }, () => 'approve')(r.z, r.amount) === 'review')
      .length / rows.length;

  test('keeps the reviews within the share, and takes the most saving ones', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 0.5, noNaN: true }), (share) => {
        const g = gainForCapacity(rows, model, share);
        assert.ok(reviewsAt(g) <= share + 1e-12, `share ${share}: ${reviewsAt(g)}`);
      }),
      { numRuns: 60 },
    );
    const unlimited = reviewsAt(0);
    assert.ok(unlimited > 0.05, 'some reviews pay on these rows');
    assert.equal(gainForCapacity(rows, model, 1), 0, 'every paying review fits: no minimum');
    assert.equal(reviewsAt(gainForCapacity(rows, model, 0)), 0);
    // a tighter capacity keeps the reviews that save the most: every one kept saves more than any one dropped
    const g = gainForCapacity(rows, model, unlimited / 2);
    const gain = (r: DeskRow) => {
      const c = expectedCosts(probabilityOf(r.z), r.amount!, model);
      return Math.min(c.approve, c.decline) - c.review;
    };
    const kept = rows.filter((r) => gain(r) >= g && gain(r) > 0).map(gain);
    const dropped = rows.filter((r) => gain(r) < g && gain(r) > 0).map(gain);
    assert.ok(kept.length > 0 && dropped.length > 0);
    assert.ok(Math.min(...kept) > Math.max(...dropped));
  });
});

describe('frontier', () => {
  const rows = Array.from({ length: 300 }, (_, i) => row(0.01 + (i % 30) / 31, i % 5 === 0 ? 1 : 0, 100 + i));

  test('five decline costs by four capacities; a dearer decline turns fewer honest trades away', () => {
    const points = frontier(rows, rows, model, { reviewsPerDay: 10, decisionsPerDay: 100 }, byLevel(DEFAULT_POLICY));
    assert.equal(points.length, 20);
    assert.deepEqual([...new Set(points.map((p) => p.reviews_per_day))], [0, 5, 10, 20]);
    for (const p of points.filter((q) => q.reviews_per_day === 0)) assert.equal(p.outcomes.reviews_per_1k, 0);
    for (const p of points.filter((q) => q.reviews_per_day !== 0 && q.reviews_per_day !== null))
      assert.ok(p.outcomes.reviews_per_1k! <= (p.reviews_per_day! / 100) * 1000 + 1e-9);
    const declined = points.filter((p) => p.reviews_per_day === 0).map((p) => p.outcomes.legit_declined!);
    for (let i = 1; i < declined.length; i++) assert.ok(declined[i]! <= declined[i - 1]!, declined.join(' '));
    assert.deepEqual(points[0]!.decline_cost, { rate: 0.0025, fixed: 5 });
  });

  test('without a stated capacity: reviews per 1,000 of 0, 25, 50, 100 and unlimited', () => {
    const points = frontier(rows, rows, model, { reviewsPerDay: null, decisionsPerDay: 200 }, byLevel(DEFAULT_POLICY));
    assert.equal(points.length, 25);
    assert.deepEqual([...new Set(points.map((p) => p.reviews_per_day))], [0, 5, 10, 20, null]);
  });
});
