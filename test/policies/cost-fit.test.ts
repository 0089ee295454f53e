// The fit's cost objective (docs/api.md, "Decisions by money"): the economics it optimises for,
// reviewGainMin from the capacity, the reviewers' measured accuracy, and the report's desk figures.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';
import type { Economics } from '../../src/model/economics.ts';
import { DEFAULT_ECONOMICS, fitEconomics, MIN_REVIEWER_CHECKS, replayedOutcomes } from '../../src/policies/cost-fit.ts';
import { fitCandidate, type LabelledDecision } from '../../src/policies/report.ts';
import { mulberry32 } from '../../bench/quality/prng.ts';

const economics: Economics = {
  currency: 'USD',
  declineCost: { rate: 0.01, fixed: 20 },
  reviewCost: 3,
  reviewsPerDay: 50,
};

/** 3,000 decisions of 600 entities: fraud where chargebacks and new_account are high, amounts 20–5,000. */
function decisions(seed: number): LabelledDecision[] {
  const next = mulberry32(seed);
  return Array.from({ length: 3000 }, (_, i) => {
    const features = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])) as Record<string, number>;
    features.chargebacks = next() < 0.1 ? 1 + Math.round(next() * 2) : 0;
    features.new_account = Math.round(next() * 1e4) / 1e4;
    features.completed_trades = Math.round(next() * 6e4) / 1e4;
    const fraud = features.chargebacks + features.new_account + 0.8 * next() > 1.5;
    return {
      entityId: `e-${i % 600}`,
      features: features as LabelledDecision['features'],
      label: fraud ? 1 : 0,
      amount: Math.round(20 + next() * 4980),
      currency: i % 4 === 0 ? 'EUR' : 'USD',
    };
  });
}

describe('the cost objective', () => {
  const rows = decisions(7);

  test('sets reviewGainMin so that the reviews fit the capacity, and reports both sides and the frontier', () => {
    const tight = fitCandidate(rows, DEFAULT_POLICY, {
      version: 'cost-tight',
      cost: { economics, decisionsPerDay: 1000 },
    });
    const loose = fitCandidate(rows, DEFAULT_POLICY, {
      version: 'cost-loose',
      cost: { economics: { ...economics, reviewsPerDay: 1000 }, decisionsPerDay: 1000 },
    });
    assert.ok(tight.policy.economics!.reviewGainMin! > loose.policy.economics!.reviewGainMin!);
    assert.equal(loose.policy.economics!.reviewGainMin, 0, 'every paying review fits when all may be reviewed');
    const t = tight.report.outcomes!.candidate;
    assert.ok(t.reviews_per_1k! <= 50 * 1.5, `capacity 5 %: ${t.reviews_per_1k} per 1,000 on the holdout`);
    assert.ok(loose.report.outcomes!.candidate.reviews_per_1k! >= t.reviews_per_1k!);
    assert.deepEqual(tight.report.capacity, { reviews_per_day: 50, decisions_per_day: 1000, review_share: 0.05 });
    assert.equal(tight.report.frontier!.length, 20);
    // the hand-set base decides by its level map; the fitted candidate by money: it costs the desk less
    assert.ok(
      tight.report.outcomes!.candidate.expected_cost! < tight.report.outcomes!.base.expected_cost!,
      JSON.stringify(tight.report.outcomes),
    );
  });

  test("the reviewers' agreement with later labels replaces the stated accuracy once there are enough", () => {
    const few = fitCandidate(rows, DEFAULT_POLICY, {
      version: 'few',
      cost: { economics, decisionsPerDay: 1000, reviewerChecks: { reviews: MIN_REVIEWER_CHECKS - 1, agreed: 30 } },
    });
    assert.equal(few.policy.economics!.reviewerAccuracy, 0.95);
    assert.deepEqual(few.report.reviewer_accuracy, { reviews: 49, measured: 0.6122, used: 0.95 });
    const many = fitCandidate(rows, DEFAULT_POLICY, {
      version: 'many',
      cost: { economics, decisionsPerDay: 1000, reviewerChecks: { reviews: 200, agreed: 170 } },
    });
    assert.equal(many.policy.economics!.reviewerAccuracy, 0.85);
    const worse = fitCandidate(rows, DEFAULT_POLICY, {
      version: 'worse',
      cost: { economics, decisionsPerDay: 1000, reviewerChecks: { reviews: 200, agreed: 20 } },
    });
    assert.equal(worse.policy.economics!.reviewerAccuracy, 0.5, 'a coin flip at worst: the schema floor');
  });

  test('a base with economics in another currency is judged by its own money decisions', () => {
    const base: Policy = {
      ...DEFAULT_POLICY,
      economics: { ...economics, currency: 'EUR', rates: { USD: 0.5 }, reviewGainMin: 0 },
    };
    const fitted = fitCandidate(rows, base, { version: 'eur-base', cost: { economics, decisionsPerDay: 1000 } });
    const o = fitted.report.outcomes!;
    assert.equal(o.base.currency, 'USD');
    assert.ok(o.base.reviews_per_1k! > 0, 'the base reviews by money, not by its level map');
  });
});

describe('fitEconomics', () => {
  test("the request's, else the base's, else the defaults only when cost is asked for", () => {
    const base = { economics: { ...economics, reviewCost: 9 } };
    assert.equal(fitEconomics({ economics }, base), economics);
    assert.equal(fitEconomics({}, base), base.economics);
    assert.equal(fitEconomics({ objective: 'target' }, base), undefined);
    assert.equal(fitEconomics({}, {}), undefined);
    assert.equal(fitEconomics({ objective: 'cost' }, {}), DEFAULT_ECONOMICS);
  });
});

describe('replayedOutcomes', () => {
  test('by money with economics, by the level map without; priced either way', () => {
    const rows = [
      { z: 4, label: 1 as const, amount: 1000, currency: 'USD' },
      { z: -4, label: 0 as const, amount: 1000, currency: 'USD' },
      { z: 0.5, label: 0 as const, amount: 10, currency: 'USD' },
    ];
    const levels = replayedOutcomes(DEFAULT_POLICY, rows);
    assert.equal(levels.currency, 'USD');
    assert.equal(levels.stopped_fraud, 1);
    const money = replayedOutcomes(
      { ...DEFAULT_POLICY, economics: { ...economics, declineCost: { rate: 0.05, fixed: 5 }, reviewGainMin: 100 } },
      rows,
    );
    assert.equal(
      money.legit_declined,
      0.5,
      'p ≈ 0.62 on a 10 USD trade: turning it away (2.08) costs less than the loss (6.22)',
    );
  });
});
