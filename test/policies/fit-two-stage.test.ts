// The two-stage fit under sampled labels (src/policies/intercept.ts; docs/learning.md, "Labels from
// reviews"): the weights fitted with every labelled row once, then the bias alone re-estimated with
// the inverse-probability weights, the first stage's linear score held fixed. The oracles are
// independent of intercept.ts: the weighted log-likelihood written out below and minimised over the
// bias by brute force on a grid, and the plain fit of fit.ts when every weight is 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { arraySamples, fitLogistic } from '../../src/policies/fit.ts';
import { fitIntercept, fitTwoStage } from '../../src/policies/intercept.ts';
import { fitSignalSamples } from '../../src/policies/signal-fit.ts';
import { LabelledSplit } from '../../src/policies/samples.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

// Not separable (each x has both labels), so every optimum is finite.
const X = [[0], [0], [1], [1], [2], [2], [3], [3], [0.5], [2.5], [1.5], [0]];
const y: (0 | 1)[] = [0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0];
// Sampled-approval-like weights on the low-x legit rows, as a desk's sample would give them.
const s = [50, 1, 1, 50, 1, 1, 1, 1, 50, 1, 4, 50];
const lambda = 0.3;
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

test('stage 2: the bias is the brute-force minimum of the weighted log-likelihood with the slope held fixed', () => {
  const fit = fitTwoStage(arraySamples(X, y, s, 1), { lambda });
  // Stage 1 counts every labelled row once: the slope is the unweighted fit's.
  const plain = fitLogistic(X, y, { lambda });
  assert.ok(Math.abs(fit.weights[0]! - plain.weights[0]!) < 1e-12, `${fit.weights[0]} vs ${plain.weights[0]}`);
  const w = fit.weights[0]!;
  // Σ sᵢ·[log(1 + e^{b + w·xᵢ}) − yᵢ·(b + w·xᵢ)], written out independently of intercept.ts.
  const nll = (b: number) =>
    X.reduce((sum, [x], i) => {
      const z = b + w * x!;
      return sum + s[i]! * (Math.log(1 + Math.exp(z)) - y[i]! * z);
    }, 0);
  let best = { b: 0, f: Infinity };
  for (let b = -8; b <= 8; b += 0.001) {
    const f = nll(b);
    if (f < best.f) best = { b, f };
  }
  assert.ok(Math.abs(fit.bias - best.b) < 0.002, `bias ${fit.bias} vs grid ${best.b}`);
  assert.ok(nll(fit.bias) <= best.f + 1e-9, 'no grid point is better than the fit');
  // The weighted sample's scores sum to its weighted fraud count: calibration in the large.
  const predicted = X.reduce((sum, [x], i) => sum + s[i]! * sigmoid(fit.bias + w * x!), 0);
  const frauds = y.reduce((sum: number, yi, i) => sum + s[i]! * yi, 0);
  assert.ok(Math.abs(predicted - frauds) < 1e-6, `${predicted} vs ${frauds}`);
  // It moved: the weights pull the bias towards the legit rows they stand for.
  assert.ok(fit.bias < plain.bias - 0.5, `${fit.bias} vs the unweighted ${plain.bias}`);
  // and it differs from the fully weighted fit, whose slope the weights also move
  const full = fitLogistic(X, y, { lambda, sampleWeights: s });
  assert.ok(Math.abs(full.weights[0]! - w) > 1e-3);
  // loss: the weighted penalised objective at the two-stage parameters
  assert.ok(Math.abs(fit.loss - (nll(fit.bias) + (lambda / 2) * w * w)) < 1e-9);
});

test('every weight 1: the two-stage fit is the plain fit, and stage 2 alone keeps its bias', () => {
  const ones = X.map(() => 1);
  const plain = fitLogistic(X, y, { lambda });
  assert.deepEqual(fitTwoStage(arraySamples(X, y, ones, 1), { lambda }), plain);
  assert.deepEqual(fitTwoStage(arraySamples(X, y, undefined, 1), { lambda }), plain);
  // Not only by the shortcut: the plain fit's unpenalised bias already solves stage 2's equation,
  // from wherever stage 2 starts (far starts exercise the bracketing).
  for (const start of [plain.bias, 0, 7, -40]) {
    const again = fitIntercept(arraySamples(X, y, ones, 1), plain.weights, start);
    assert.ok(Math.abs(again.bias - plain.bias) < 1e-8, `from ${start}: ${again.bias} vs ${plain.bias}`);
  }
  // A zero weight keeps its row out of both stages, as the plain fit without that row.
  const zeroed = s.map((w, i) => (i === 3 ? 0 : w));
  const without = fitTwoStage(
    arraySamples(
      X.filter((_, i) => i !== 3),
      y.filter((_, i) => i !== 3),
      s.filter((_, i) => i !== 3),
      1,
    ),
    { lambda },
  );
  const withZero = fitTwoStage(arraySamples(X, y, zeroed, 1), { lambda });
  assert.ok(
    Math.abs(withZero.bias - without.bias) < 1e-9 && Math.abs(withZero.weights[0]! - without.weights[0]!) < 1e-12,
  );
});

test('stage 2 within bounds: a root beyond a bound stops at the bound', () => {
  const data = arraySamples(X, y, s, 1);
  const free = fitIntercept(data, [0.8], 0);
  assert.equal(fitIntercept(data, [0.8], 0, { lo: free.bias + 0.5 }).bias, free.bias + 0.5);
  assert.equal(fitIntercept(data, [0.8], 0, { hi: free.bias - 0.5 }).bias, free.bias - 0.5);
  const inside = fitIntercept(data, [0.8], 0, { lo: free.bias - 0.5, hi: free.bias + 0.5 }).bias;
  assert.ok(Math.abs(inside - free.bias) < 1e-6, `${inside} vs ${free.bias}`);
});

test('the policy fit puts the sample weights in the bias by default; `full` weights every parameter', () => {
  const name = SIGNAL_NAMES.find((n) => n === 'chargebacks') ?? SIGNAL_NAMES[0]!;
  const rows = Array.from({ length: 200 }, (_, i) => {
    const v = i % 4;
    const fraud = i % 9 === 0 || (v >= 2 && i % 3 === 0) ? 1 : 0;
    return {
      entityId: `e${i}`,
      features: { [name]: v },
      label: fraud as 0 | 1,
      weight: fraud === 0 && v === 0 && i % 2 === 0 ? 50 : 1,
    };
  });
  const train = LabelledSplit.of(rows, 0).train;
  const unweighted = LabelledSplit.of(
    rows.map((r) => ({ ...r, weight: 1 })),
    0,
  ).train;
  const twoStage = fitSignalSamples(train);
  const plain = fitSignalSamples(unweighted);
  const full = fitSignalSamples(train, { weighting: 'full' });
  assert.equal(twoStage.weights[name], plain.weights[name], "the ranking is the unweighted fit's");
  assert.ok(twoStage.bias < plain.bias - 0.1, `${twoStage.bias} vs ${plain.bias}`);
  assert.notEqual(full.weights[name], plain.weights[name], 'fully weighted, the slope moves too');
});
