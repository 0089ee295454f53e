// Issue 29, item 19: a fit without a target moved the thresholds 30/60/85 to 6/36/37: matching the
// base policy's shares on bunched candidate scores put `high` and `critical` one point apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  MIN_LEVEL_GAP,
  shareAtOrAbove,
  thresholdsForTarget,
  type ScoredOutcome,
} from '../../src/policies/operating.ts';

const BASE = { medium: 30, high: 60, critical: 85 };

test('bunched candidate scores with the default target (the base share flagged high): the levels stay at least MIN_LEVEL_GAP apart', () => {
  // No base score between 60 and 85: the share at 60 and at 85 is the same, so "the same share" gives
  // high and critical neighbouring cuts on the candidate.
  const baseScores = [...Array(60).fill(10), ...Array(30).fill(40), ...Array(10).fill(90)];
  const candidate: ScoredOutcome[] = [
    ...Array(60)
      .fill(null)
      .map(() => ({ score: 3, label: 0 as const })),
    ...Array(30)
      .fill(null)
      .map(() => ({ score: 20, label: 0 as const })),
    ...Array(10)
      .fill(null)
      .map(() => ({ score: 36, label: 1 as const })),
  ];
  const target = { level: 'high' as const, max_share_flagged: shareAtOrAbove(baseScores, BASE.high) };
  const { thresholds: t, met } = thresholdsForTarget(candidate, baseScores, BASE, target);
  assert.equal(met, true);
  assert.ok(t.high - t.medium >= MIN_LEVEL_GAP && t.critical - t.high >= MIN_LEVEL_GAP, JSON.stringify(t));
  assert.equal(MIN_LEVEL_GAP, 5);
});

test('for any outcomes, base scores and target, the fitted levels are ordered, MIN_LEVEL_GAP apart, within 1–99', () => {
  const outcome = fc.record({
    score: fc.integer({ min: 0, max: 100 }),
    label: fc.constantFrom(0 as const, 1 as const),
  });
  fc.assert(
    fc.property(
      fc.array(outcome, { minLength: 1, maxLength: 100 }),
      fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 100 }),
      fc.constantFrom('high' as const, 'critical' as const),
      fc.constantFrom('max_false_positive_rate' as const, 'max_share_flagged' as const, 'min_precision' as const),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (rows, baseScores, level, kind, limit) => {
        const { thresholds: t } = thresholdsForTarget(rows, baseScores, BASE, { level, [kind]: limit });
        assert.ok(t.medium >= 1 && t.critical <= 99, JSON.stringify(t));
        assert.ok(t.high - t.medium >= MIN_LEVEL_GAP && t.critical - t.high >= MIN_LEVEL_GAP, JSON.stringify(t));
      },
    ),
  );
});
