import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { curvePoints, scoreHistogram } from '../../src/policies/curves.ts';
import { averagePrecision, rocAuc, type Label } from '../../src/policies/metrics.ts';

describe('curvePoints', () => {
  test('one point per distinct threshold on a hand fixture', () => {
    const points = curvePoints([90, 80, 80, 10], [1, 1, 0, 0]);
    assert.deepEqual(points, [
      { threshold: 101, fpr: 0, tpr: 0, precision: 1, recall: 0 },
      { threshold: 90, fpr: 0, tpr: 0.5, precision: 1, recall: 0.5 },
      { threshold: 80, fpr: 0.5, tpr: 1, precision: 2 / 3, recall: 1 },
      { threshold: 10, fpr: 1, tpr: 1, precision: 0.5, recall: 1 },
    ]);
  });

  test('the trapezoid area under the ROC points is rocAuc, the PR step sum is averagePrecision (property)', () => {
    const arb = fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.constantFrom<Label>(0, 1)), {
      minLength: 2,
      maxLength: 60,
    });
    fc.assert(
      fc.property(arb, (rows) => {
        const scores = rows.map(([s]) => s);
        const labels = rows.map(([, y]) => y);
        const points = curvePoints(scores, labels);
        const auc = rocAuc(scores, labels);
        if (auc === null) return assert.deepEqual(points, []);
        let area = 0;
        let ap = 0;
        for (let i = 1; i < points.length; i++) {
          area += ((points[i]!.fpr - points[i - 1]!.fpr) * (points[i]!.tpr + points[i - 1]!.tpr)) / 2;
          ap += (points[i]!.recall - points[i - 1]!.recall) * points[i]!.precision;
        }
        assert.ok(Math.abs(area - auc) < 1e-9);
        assert.ok(Math.abs(ap - averagePrecision(scores, labels)!) < 1e-9);
      }),
    );
  });
});

describe('scoreHistogram', () => {
  test('counts each label in ten score bins', () => {
    const h = scoreHistogram([0, 9, 10, 55, 100, 99], [0, 1, 0, 1, 1, 0]);
    assert.deepEqual(h.legit, [1, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual(h.fraud, [1, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
  });
});
