import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  averagePrecision,
  brierScore,
  calibrationBins,
  calibrationError,
  computeMetrics,
  rocAuc,
  type Label,
} from '../../src/policies/metrics.ts';

const close = (actual: number | null, expected: number, eps = 1e-12) =>
  assert.ok(actual !== null && Math.abs(actual - expected) < eps, `${actual} ≠ ${expected}`);

describe('rocAuc', () => {
  test('perfect ranking is 1, reversed is 0', () => {
    assert.equal(rocAuc([10, 20, 80, 90], [0, 0, 1, 1]), 1);
    assert.equal(rocAuc([90, 80, 20, 10], [0, 0, 1, 1]), 0);
  });

  test('matches the hand count of pairs, ties counting one half', () => {
    // positives 50, 70, 70; negatives 30, 50, 70, 90.
    // pairs (pos > neg) + ½ (pos = neg): 50: 1 + ½·1; 70: 2 + ½ each → 2.5, 2.5 → total 6.5 of 12.
    close(rocAuc([50, 70, 70, 30, 50, 70, 90], [1, 1, 1, 0, 0, 0, 0]), 6.5 / 12);
  });

  test('all scores tied gives 0.5', () => {
    assert.equal(rocAuc([40, 40, 40, 40], [1, 0, 1, 0]), 0.5);
  });

  test('one class missing gives null', () => {
    assert.equal(rocAuc([1, 2], [0, 0]), null);
    assert.equal(rocAuc([], []), null);
  });

  test('equals the brute-force pair count on random data (property)', () => {
    const arb = fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.constantFrom<Label>(0, 1)), {
      minLength: 1,
      maxLength: 80,
    });
    fc.assert(
      fc.property(arb, (rows) => {
        const pos = rows.filter(([, y]) => y === 1).map(([s]) => s);
        const neg = rows.filter(([, y]) => y === 0).map(([s]) => s);
        const auc = rocAuc(
          rows.map(([s]) => s),
          rows.map(([, y]) => y),
        );
        if (pos.length === 0 || neg.length === 0) return assert.equal(auc, null);
        let wins = 0;
        for (const p of pos) for (const n of neg) wins += p > n ? 1 : p === n ? 0.5 : 0;
        close(auc, wins / (pos.length * neg.length), 1e-9);
      }),
    );
  });
});

describe('averagePrecision', () => {
  test('matches the hand computation with distinct scores', () => {
    // ranked: 90(1) 80(0) 70(1) 60(0) → precision at each recall step: 1/1, 2/3 → AP = ½·1 + ½·⅔
    close(averagePrecision([90, 80, 70, 60], [1, 0, 1, 0]), 0.5 + 1 / 3);
  });

  test('tied scores enter together', () => {
    // 80, 80 (one fraud, one legit) then 10 (fraud): P=2; step 1: recall ½, precision ½; step 2: recall 1, precision ⅔.
    close(averagePrecision([80, 80, 10], [1, 0, 1]), 0.5 * 0.5 + 0.5 * (2 / 3));
  });

  test('no fraud gives null; perfect ranking gives 1', () => {
    assert.equal(averagePrecision([1, 2], [0, 0]), null);
    assert.equal(averagePrecision([99, 98, 3], [1, 1, 0]), 1);
  });
});

describe('brierScore and calibrationError', () => {
  test('Brier is the mean squared gap with p = score / 100', () => {
    close(brierScore([0, 100, 50, 20], [0, 1, 1, 0]), (0 + 0 + 0.25 + 0.04) / 4);
    assert.equal(brierScore([], []), null);
  });

  test('calibration error follows docs/api.md, "Policies" on a hand-computed fixture', () => {
    // bin 1 (10–19): scores 10, 10, 15 → mean p 0.11(6), fraud 1 of 3; bin 9 (90–100): 95, 100 → mean p 0.975, fraud 2
    // of 2; bin 3: 30 → 0.3, fraud 0 of 1.
    const scores = [10, 10, 15, 95, 100, 30];
    const labels: Label[] = [1, 0, 0, 1, 1, 0];
    const expected = (3 / 6) * Math.abs(35 / 300 - 1 / 3) + (2 / 6) * Math.abs(0.975 - 1) + (1 / 6) * 0.3;
    close(calibrationError(scores, labels), expected);
  });

  test('bin edges: 9 is in the first bin, 10 in the second, 100 in the last', () => {
    const bins = calibrationBins([9, 10, 90, 100], [0, 0, 1, 1]);
    assert.deepEqual(
      bins.map((b) => b.count),
      [1, 1, 0, 0, 0, 0, 0, 0, 0, 2],
    );
    assert.equal(bins[9]!.upper, 100);
    assert.equal(bins[4]!.mean_predicted, null);
  });

  test('a perfectly calibrated fixture has error 0', () => {
    // ten decisions at 20 with two frauds, five at 60 with three frauds
    const scores = [...Array(10).fill(20), ...Array(5).fill(60)] as number[];
    const labels = [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0] as Label[];
    close(calibrationError(scores, labels), 0);
  });
});

describe('computeMetrics', () => {
  test('no decisions give null figures, never NaN', () => {
    const empty = computeMetrics([], []);
    assert.deepEqual(empty, { roc_auc: null, average_precision: null, brier: null, calibration_error: null });
    // and so it survives the JSON it is stored as (a NaN would silently become null)
    assert.deepEqual(JSON.parse(JSON.stringify(empty)), empty);
  });
});
