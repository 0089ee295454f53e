import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  cutForTarget,
  levelFigures,
  MOVE_LIMITS,
  operatingMove,
  thresholdsForTarget,
  type ScoredOutcome,
} from '../../src/policies/operating.ts';

const outcome = fc.record({ score: fc.integer({ min: 0, max: 100 }), label: fc.constantFrom(0 as const, 1 as const) });

describe('operating points', () => {
  test('levelFigures: per level, flagged = caught + false positives, and the rates follow from the counts', () => {
    const outcomes: ScoredOutcome[] = [
      { score: 90, label: 1, amount: 500, currency: 'USD' },
      { score: 70, label: 0, amount: 20, currency: 'EUR' },
      { score: 65, label: 1, amount: 0.1, currency: 'BTC' },
      { score: 40, label: 0, amount: 10, currency: 'USD' },
      { score: 10, label: 0 },
    ];
    const [low, medium, high, critical] = levelFigures(outcomes, { medium: 30, high: 60, critical: 85 });
    assert.equal(low!.flagged, 5);
    assert.deepEqual([medium!.flagged, medium!.frauds_caught, medium!.false_positives], [4, 2, 2]);
    assert.deepEqual([high!.flagged, high!.frauds_caught, high!.false_positives], [3, 2, 1]);
    assert.equal(high!.false_positive_rate, 1 / 3);
    assert.equal(high!.precision, 2 / 3);
    assert.equal(high!.recall, 1);
    assert.deepEqual(high!.volume_caught, { USD: 500, BTC: 0.1 });
    assert.deepEqual(high!.volume_held, { EUR: 20 });
    assert.deepEqual([critical!.flagged, critical!.frauds_caught], [1, 1]);
  });

  test('cutForTarget: the lowest cut that meets a ceiling, so one lower would break it', () => {
    fc.assert(
      fc.property(
        fc.array(outcome, { minLength: 1, maxLength: 200 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (rows, limit) => {
          const { cut, met } = cutForTarget(rows, { level: 'high', max_share_flagged: limit });
          const share = (c: number) => rows.filter((r) => r.score >= c).length / rows.length;
          if (met) {
            assert.ok(share(cut) <= limit);
            if (cut > 1) assert.ok(share(cut - 1) > limit);
          } else assert.equal(cut, 99);
        },
      ),
    );
  });

  test('thresholdsForTarget keeps medium < high < critical within 1–99 for any target', () => {
    fc.assert(
      fc.property(
        fc.array(outcome, { minLength: 1, maxLength: 100 }),
        fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 100 }),
        fc.constantFrom('high' as const, 'critical' as const),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (rows, baseScores, level, limit) => {
          const { thresholds: t } = thresholdsForTarget(
            rows,
            baseScores,
            { medium: 30, high: 60, critical: 85 },
            { level, max_false_positive_rate: limit },
          );
          assert.ok(t.medium >= 1 && t.medium < t.high && t.high < t.critical && t.critical <= 99, JSON.stringify(t));
        },
      ),
    );
  });

  test('operatingMove asks for confirmation beyond 2 points or 25 %, and never on too few decisions', () => {
    const scores = (n: number, flagged: number) => Array.from({ length: n }, (_, i) => (i < flagged ? 80 : 10));
    const move = (b: number, a: number, n = 1000) =>
      operatingMove({ version: 'a', high: 60, scores: scores(n, b) }, { version: 'b', high: 60, scores: scores(n, a) });
    assert.equal(move(100, 115).exceeds, false); // 10 % → 11.5 %: 1.5 points, 15 %
    assert.equal(move(100, 125).exceeds, true); // 2.5 points
    assert.equal(move(40, 55).exceeds, true); // 4 % → 5.5 %: 37.5 % of itself
    assert.equal(move(2, 4).exceeds, false); // 0.2 % → 0.4 %: under half a point
    assert.equal(move(10, 300, MOVE_LIMITS.minDecisions - 1).exceeds, false);
    const m = move(100, 200);
    assert.deepEqual([m.before.share_flagged_high, m.after.share_flagged_high, m.decisions], [0.1, 0.2, 1000]);
  });
});
