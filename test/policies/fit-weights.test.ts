// Sample weights in the optimiser (src/policies/fit.ts; the policy fit weights only the bias with
// them, intercept.ts and fit-two-stage.test.ts): the inverse-probability weights of sampled
// review labels (docs/learning.md, "Labels from reviews") reach the optimiser as sᵢ·logloss. The
// oracle here is independent of fit.ts: a weight of 2 must fit exactly like a duplicated row, and
// the optimum must be the minimum of a weighted log-likelihood written out below and searched by
// brute force on a grid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitLogistic, fitSamples } from '../../src/policies/fit.ts';
import { LabelledSplit } from '../../src/policies/samples.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

// Not separable (each x has both labels), so the unpenalised optimum is finite.
const X = [[0], [0], [1], [1], [2], [2], [3], [3], [0.5], [2.5]];
const y: (0 | 1)[] = [0, 1, 0, 0, 1, 0, 1, 1, 0, 1];

test('a weight of 2 fits exactly like the row given twice', () => {
  const weights = X.map((_, i) => (i === 4 || i === 8 ? 2 : 1));
  const weighted = fitLogistic(X, y, { sampleWeights: weights, lambda: 0.5 });
  const Xd = [...X, X[4]!, X[8]!];
  const yd = [...y, y[4]!, y[8]!];
  const duplicated = fitLogistic(Xd, yd, { lambda: 0.5 });
  assert.ok(weighted.converged && duplicated.converged);
  assert.ok(Math.abs(weighted.bias - duplicated.bias) < 1e-9, `${weighted.bias} vs ${duplicated.bias}`);
  assert.ok(Math.abs(weighted.weights[0]! - duplicated.weights[0]!) < 1e-9);
  // and the weights change the answer: a fit that ignored them would fail here
  const plain = fitLogistic(X, y, { lambda: 0.5 });
  assert.ok(Math.abs(plain.weights[0]! - weighted.weights[0]!) > 1e-3, `${plain.weights[0]} ≈ ${weighted.weights[0]}`);
});

test('the weighted optimum is the minimum of the weighted log-likelihood (brute force on a grid)', () => {
  const s = [1, 3, 0.5, 1, 2, 1, 1, 4, 1, 0.25];
  const lambda = 0.2;
  // Σ sᵢ·[log(1 + e^{b + w·xᵢ}) − yᵢ·(b + w·xᵢ)] + (λ/2)·w², written out independently of fit.ts.
  const nll = (b: number, w: number) =>
    X.reduce((sum, [x], i) => {
      const z = b + w * x!;
      return sum + s[i]! * (Math.log(1 + Math.exp(z)) - y[i]! * z);
    }, 0) +
    (lambda / 2) * w * w;
  let best = { b: 0, w: 0, f: Infinity };
  for (let b = -4; b <= 4; b += 0.01)
    for (let w = -4; w <= 4; w += 0.01) {
      const f = nll(b, w);
      if (f < best.f) best = { b, w, f };
    }
  const fit = fitLogistic(X, y, { sampleWeights: s, lambda });
  assert.ok(Math.abs(fit.bias - best.b) < 0.02, `bias ${fit.bias} vs grid ${best.b}`);
  assert.ok(Math.abs(fit.weights[0]! - best.w) < 0.02, `weight ${fit.weights[0]} vs grid ${best.w}`);
  // no point of the grid is better than the fit's, and the fit reports the loss it reached
  assert.ok(nll(fit.bias, fit.weights[0]!) <= best.f + 1e-9);
  assert.ok(Math.abs(fit.loss - nll(fit.bias, fit.weights[0]!)) < 1e-9);
});

test('weights pushed through the compact columns (samples.ts) fit as the array rows do', () => {
  const rows = Array.from({ length: 80 }, (_, i) => {
    const v = (i % 10) / 4; // 4 decimals: the columns keep values as the model sums them
    return { v, label: (i % 3 === 0 ? 1 : i % 7 === 0 ? 1 : 0) as 0 | 1, weight: i % 5 === 0 ? 50 : 1 };
  });
  const name = SIGNAL_NAMES[0]!;
  const split = LabelledSplit.of(
    rows.map((r, i) => ({ entityId: `e${i}`, features: { [name]: r.v }, label: r.label, weight: r.weight })),
    0,
  );
  const compact = fitSamples(split.train, { lambda: 1 });
  const X23 = rows.map((r) => SIGNAL_NAMES.map((n) => (n === name ? r.v : 0)));
  const arrays = fitLogistic(
    X23,
    rows.map((r) => r.label),
    { sampleWeights: rows.map((r) => r.weight), lambda: 1 },
  );
  assert.ok(Math.abs(compact.bias - arrays.bias) < 1e-12);
  assert.ok(Math.abs(compact.weights[0]! - arrays.weights[0]!) < 1e-12);
  assert.deepEqual(split.train.weights().slice(0, 6), [50, 1, 1, 1, 1, 50]);
});

test('a weight that is not a finite number ≥ 0 is refused', () => {
  assert.throws(() => LabelledSplit.of([{ entityId: 'e', features: {}, label: 1, weight: -1 }], 0), /sample weight/);
  assert.throws(
    () => LabelledSplit.of([{ entityId: 'e', features: {}, label: 1, weight: Number.NaN }], 0),
    /sample weight/,
  );
});
