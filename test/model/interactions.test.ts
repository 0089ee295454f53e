// The interactions of issue 20 (docs/signals.md, "Interactions"): monotone products of stored
// signals, replayed from their parts for vectors stored before them, described in plain words.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, type Policy, type SignalName } from '../../src/model/policy.ts';
import { replayScore } from '../../src/model/arithmetic.ts';
import { FEATURE_SET, replayableFeatures } from '../../src/model/feature-vector.ts';
import { INTERACTIONS } from '../../src/model/features.ts';
import { evaluate } from '../../src/model/signal-model.ts';
import { freshProfile, NOW, policyArb, profileArb, requestArb } from '../helpers/profiles.ts';

const NAMES = Object.keys(INTERACTIONS) as (keyof typeof INTERACTIONS)[];

describe('interactions', () => {
  test('each is 0 … 1 and non-decreasing in each of its parts', () => {
    const part = fc.double({ min: 0, max: 1, noNaN: true });
    const parts = fc.record({
      new_counterparty: fc.constantFrom(0, 1),
      payment_method_risk: part,
      cross_border: fc.constantFrom(0, 1),
    });
    fc.assert(
      fc.property(
        parts,
        fc.constantFrom('new_counterparty' as const, 'payment_method_risk' as const, 'cross_border' as const),
        part,
        (p, key, up) => {
          for (const n of NAMES) {
            const v = INTERACTIONS[n](p);
            assert.ok(v >= 0 && v <= 1, `${n} = ${v}`);
            const raised = { ...p, [key]: Math.max(p[key], key === 'payment_method_risk' ? up : 1) };
            assert.ok(INTERACTIONS[n](raised) >= v, `${n}: raising ${key} lowered it`);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test('a vector stored before them replays them from its parts: the live value and the live score', () => {
    const weighted = policyArb.map((p): Policy => ({
      ...p,
      weights: { ...p.weights, reversible_new_counterparty: 1.3, cross_border_new_counterparty: 0.7 },
    }));
    fc.assert(
      fc.property(profileArb, requestArb, weighted, (profile, request, policy) => {
        const live = evaluate(profile, request, policy, NOW);
        const stored: Partial<Record<SignalName, number>> = JSON.parse(JSON.stringify(live.values));
        for (const n of NAMES) delete stored[n];
        const replayed = replayableFeatures(stored, FEATURE_SET, policy.disputePrior);
        for (const n of NAMES) assert.equal(replayed[n], live.values[n], n);
        assert.equal(replayScore(policy, replayed), live.result.score);
      }),
      { numRuns: 400 },
    );
  });

  test('a card payment to a new counterparty abroad: both interactions, in words an operator reads', () => {
    const r = evaluate(
      { ...freshProfile(), counterpartyTrades: 0 },
      {
        entity_id: 'e1',
        amount: 50,
        currency: 'USD',
        context: { payment_method: 'card', country: 'NG', counterparty_country: 'GB' },
      },
      {
        ...DEFAULT_POLICY,
        weights: { ...DEFAULT_POLICY.weights, reversible_new_counterparty: 1, cross_border_new_counterparty: 1 },
      },
      NOW,
    );
    assert.equal(r.values.reversible_new_counterparty, 0.7143); // (0.8 − 0.3) / 0.7
    assert.equal(r.values.cross_border_new_counterparty, 1);
    const words = Object.fromEntries(r.result.signals.map((s) => [s.name, s.description]));
    assert.equal(words.reversible_new_counterparty, 'a first trade with this counterparty, paid by card (reversible)');
    assert.equal(
      words.cross_border_new_counterparty,
      'a first trade with this counterparty, who is in another country',
    );
  });

  test('a stored policy document older than a signal weighs it 0, never NaN', () => {
    const { reversible_new_counterparty: _a, cross_border_new_counterparty: _b, ...older } = DEFAULT_POLICY.weights;
    const values = { chargebacks: 1, reversible_new_counterparty: 1, cross_border_new_counterparty: 1 };
    const score = replayScore({ bias: DEFAULT_POLICY.bias, weights: older as Policy['weights'] }, values);
    assert.equal(score, replayScore(DEFAULT_POLICY, values));
    assert.ok(Number.isInteger(score));
  });
});
