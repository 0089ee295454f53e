// The score's arithmetic is one function (src/model/arithmetic.ts, scoreValues): the live
// score, the feature vector it stores, the shadow score stored beside it and the backtest's
// replay of the stored vector all agree to the last bit, for any profile, request and policies.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import { modelValue, replayScore, riskLevelFor, scoreValues } from '../../src/model/arithmetic.ts';
import { backtest } from '../../src/policies/backtest.ts';
import { decodeFeatures, learningColumns, type FeatureRecord } from '../../src/model/feature-vector.ts';
import { evaluate } from '../../src/model/signal-model.ts';
import { anyPolicy, NOW, policyArb, profileArb, requestArb } from '../helpers/profiles.ts';

describe('one arithmetic for the live score and every replay', () => {
  test('a stored decision replays to the live score and level, under the deciding policy and any other (property)', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, policyArb, (profile, request, deciding, other) => {
        const { result, values } = evaluate(profile, request, deciding, NOW);
        // What the decision row keeps, read back as the backtest reads it.
        const columns = learningColumns(values, request, result, other);
        const stored = decodeFeatures(columns.features) as FeatureRecord;

        assert.equal(replayScore(deciding, stored), result.score);
        const tally = backtest(deciding, [{ features: stored, riskLevel: result.riskLevel }]);
        assert.equal(tally.levels[result.riskLevel][result.riskLevel], 1);

        // The shadow score stored now, and a later backtest of the same policy, are its live score.
        const live = evaluate(profile, request, other, NOW).result;
        assert.equal(columns.shadow_score, live.score);
        assert.equal(replayScore(other, stored), live.score);
        const replayed = backtest(other, [{ features: stored, riskLevel: result.riskLevel }]);
        assert.equal(replayed.levels[result.riskLevel][riskLevelFor(live.score, other.thresholds)], 1);
        assert.deepEqual(
          scoreValues(other, stored).signals,
          live.signals.map(({ name, value, weight }) => ({ name, value, weight })),
        );
      }),
      { numRuns: 400 },
    );
  });

  test('any stored values, raw or rounded, replay the same: rounding is idempotent, non-finite counts as 0 (property)', () => {
    // Signal values are bounded (logarithms, rates, caps); far beyond any of them value·10⁴ would overflow.
    const raw = fc.oneof(
      fc.double({ min: -1e6, max: 1e6 }),
      fc.constantFrom(undefined, Number.NaN, Infinity, -Infinity),
    );
    const record = fc.record(
      Object.fromEntries(SIGNAL_NAMES.map((n) => [n, raw])) as Record<
        (typeof SIGNAL_NAMES)[number],
        fc.Arbitrary<number | undefined>
      >,
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(record, anyPolicy, (values, policy) => {
        const rounded = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, modelValue(values[n])])) as FeatureRecord;
        for (const n of SIGNAL_NAMES) assert.equal(modelValue(rounded[n]), rounded[n]);
        assert.deepEqual(scoreValues(policy, values), scoreValues(policy, rounded));
        const { signals, score } = scoreValues(policy, values);
        assert.ok(signals.every((s) => Number.isFinite(s.value) && s.weight * s.value !== 0));
        assert.ok(Number.isInteger(score) && score >= 0 && score <= 100);
      }),
      { numRuns: 400 },
    );
  });
});
