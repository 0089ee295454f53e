import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SIGNAL_DIRECTIONS, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { fitLogistic, InsufficientLabelsError } from '../../src/policies/fit.ts';
import { fitSignalWeights } from '../../src/policies/signal-fit.ts';
import { mulberry32, normal } from '../../bench/quality/prng.ts';

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** n rows of d standard-normal features, labels drawn from the logistic model (bias, w). */
function synthetic(n: number, bias: number, w: number[], seed = 1) {
  const random = mulberry32(seed);
  const X: number[][] = [];
  const y: (0 | 1)[] = [];
  for (let i = 0; i < n; i++) {
    const x = w.map(() => normal(random));
    X.push(x);
    y.push(random() < sigmoid(bias + x.reduce((a, v, j) => a + v * w[j]!, 0)) ? 1 : 0);
  }
  return { X, y };
}

describe('fitLogistic', () => {
  test('recovers planted weights from 20k rows within 0.1', () => {
    const truth = [1.5, -0.8, 0.4, 0, 2];
    const { X, y } = synthetic(20_000, -1, truth);
    const fit = fitLogistic(X, y, { lambda: 1 });
    assert.ok(fit.converged);
    assert.ok(Math.abs(fit.bias + 1) < 0.1, `bias ${fit.bias}`);
    fit.weights.forEach((w, j) => assert.ok(Math.abs(w - truth[j]!) < 0.1, `w${j} = ${w}, truth ${truth[j]}`));
  });

  test('with the truth inside the bounds, the bounded fit equals the unconstrained one', () => {
    const truth = [1, 0.5, 2];
    const { X, y } = synthetic(5000, 0.3, truth, 7);
    const free = fitLogistic(X, y);
    const bounded = fitLogistic(X, y, { lower: [0, 0, 0], upper: [100, 100, 100] });
    assert.ok(bounded.converged && free.converged);
    assert.ok(Math.abs(bounded.bias - free.bias) < 1e-6);
    bounded.weights.forEach((w, j) => assert.ok(Math.abs(w - free.weights[j]!) < 1e-6));
  });

  test('a weight whose truth is outside its bound stops at the bound and the rest adapt', () => {
    const { X, y } = synthetic(5000, 0, [-1, 1], 3);
    const fit = fitLogistic(X, y, { lower: [0, 0], upper: [100, 100] });
    assert.equal(fit.weights[0], 0);
    // Leaving out an independent predictor attenuates a logistic coefficient (non-collapsibility).
    assert.ok(fit.weights[1]! > 0.6 && fit.weights[1]! < 1, `w1 = ${fit.weights[1]}`);
    assert.ok(fit.converged);
  });

  test('perfectly separable data gives finite weights (the L2 term keeps it bounded)', () => {
    const X = [[-2], [-1], [-0.5], [0.5], [1], [2]];
    const y: (0 | 1)[] = [0, 0, 0, 1, 1, 1];
    const fit = fitLogistic(X, y, { lambda: 1 });
    assert.ok(Number.isFinite(fit.bias) && Number.isFinite(fit.weights[0]!));
    assert.ok(fit.weights[0]! > 0 && fit.weights[0]! < 20);
    assert.ok(fit.converged);
  });

  test('separable data without a penalty stays finite and within the weight bound', () => {
    const X = [[-2], [-1], [1], [2]];
    const y: (0 | 1)[] = [0, 0, 1, 1];
    const fit = fitLogistic(X, y, { lambda: 0, lower: [0], upper: [100] });
    assert.ok(fit.weights[0]! > 5 && fit.weights[0]! <= 100, `w = ${fit.weights[0]}`);
    assert.ok(Number.isFinite(fit.bias) && Number.isFinite(fit.loss));
  });

  test('a constant feature and an all-zero feature do not break the fit', () => {
    const { X, y } = synthetic(2000, -0.5, [1], 11);
    const rows = X.map((x) => [x[0]!, 3, 0]);
    const fit = fitLogistic(rows, y);
    assert.ok(fit.converged);
    assert.equal(fit.weights[2], 0);
    // The constant column is collinear with the (unpenalised) bias, so the penalty hands it all to the bias.
    assert.ok(Math.abs(fit.weights[1]!) < 1e-6);
    assert.ok(Math.abs(fit.weights[0]! - 1) < 0.2);
  });

  test('no positives or no negatives throws InsufficientLabelsError', () => {
    assert.throws(
      () => fitLogistic([[1], [2]], [0, 0]),
      (e: unknown) => e instanceof InsufficientLabelsError && e.fraud === 0 && e.legit === 2,
    );
    assert.throws(() => fitLogistic([[1], [2]], [1, 1]), InsufficientLabelsError);
    assert.throws(() => fitLogistic([], []), InsufficientLabelsError);
    // A label carried only by zero-weight rows does not count.
    assert.throws(() => fitLogistic([[1], [2]], [0, 1], { sampleWeights: [1, 0] }), InsufficientLabelsError);
  });

  test('with λ > 0 the result is the constrained minimum: no feasible perturbation lowers the objective (property)', () => {
    const value = fc.oneof(fc.constant(0), fc.constant(1), fc.double({ min: -1e3, max: 1e3, noNaN: true }));
    const data = fc.integer({ min: 1, max: 5 }).chain((d) =>
      fc.array(fc.record({ x: fc.array(value, { minLength: d, maxLength: d }), y: fc.constantFrom<0 | 1>(0, 1) }), {
        minLength: 2,
        maxLength: 40,
      }),
    );
    const softplus = (z: number) => (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)));
    fc.assert(
      fc.property(data, fc.constantFrom(1e-6, 1e-3, 1, 1e4), fc.integer(), (rows, lambda, seed) => {
        if (!rows.some((r) => r.y === 1) || !rows.some((r) => r.y === 0)) return;
        const d = rows[0]!.x.length;
        const bounds = {
          lower: Array<number>(d).fill(0),
          upper: Array<number>(d).fill(100),
          biasLower: -100,
          biasUpper: 100,
        };
        const fit = fitLogistic(
          rows.map((r) => r.x),
          rows.map((r) => r.y),
          { lambda, ...bounds },
        );
        const f = (b: number, w: number[]) =>
          rows.reduce((a, r) => {
            const z = b + r.x.reduce((s, v, j) => s + v * w[j]!, 0);
            return a + softplus(z) - r.y * z;
          }, 0) +
          (lambda / 2) * w.reduce((a, v) => a + v * v, 0);
        assert.ok(fit.converged);
        assert.ok(Math.abs(f(fit.bias, fit.weights) - fit.loss) <= 1e-9 * Math.max(1, fit.loss));
        const random = mulberry32(seed);
        for (let k = 0; k < 20; k++) {
          const step = 10 ** -(1 + Math.floor(random() * 4));
          const b = Math.min(100, Math.max(-100, fit.bias + step * (random() - 0.5)));
          const w = fit.weights.map((v) => Math.min(100, Math.max(0, v + step * (random() - 0.5))));
          assert.ok(
            f(b, w) >= fit.loss - 1e-7 * Math.max(1, fit.loss),
            `perturbation lowered ${fit.loss} to ${f(b, w)}`,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  test('bad input is refused with a RangeError', () => {
    assert.throws(() => fitLogistic([[1], [Number.NaN]], [0, 1]), RangeError);
    assert.throws(() => fitLogistic([[1], [2, 3]], [0, 1]), RangeError);
    assert.throws(() => fitLogistic([[1], [2]], [0, 1], { lambda: -1 }), RangeError);
  });

  test('sample weights count like repeated rows', () => {
    const X = [[0], [1], [2], [0], [1], [2]];
    const y: (0 | 1)[] = [0, 0, 1, 1, 0, 1];
    const weighted = fitLogistic(X, y, { sampleWeights: [2, 1, 1, 1, 1, 3] });
    const repeated = fitLogistic([...X, [0], [2], [2]], [...y, 0, 1, 1]);
    assert.ok(Math.abs(weighted.bias - repeated.bias) < 1e-8);
    assert.ok(Math.abs(weighted.weights[0]! - repeated.weights[0]!) < 1e-8);
  });
});

describe('fitSignalWeights', () => {
  const row = (values: number[]) => Object.fromEntries(SIGNAL_NAMES.map((n, i) => [n, values[i] ?? 0]));

  test('the same data gives an identical result', () => {
    const { X, y } = synthetic(
      3000,
      -2,
      SIGNAL_NAMES.map((n) => (SIGNAL_DIRECTIONS[n] === 'risk' ? 0.5 : -0.5)),
      5,
    );
    const rows = X.map((x, i) => ({ features: row(x), label: y[i]! }));
    assert.deepEqual(fitSignalWeights(rows), fitSignalWeights(rows.map((r) => ({ ...r }))));
  });

  test('never breaks a sign constraint, on any data (property)', () => {
    const value = fc.double({ min: -50, max: 50, noNaN: true });
    const rowArb = fc.record({
      values: fc.array(value, { minLength: SIGNAL_NAMES.length, maxLength: SIGNAL_NAMES.length }),
      label: fc.constantFrom<0 | 1>(0, 1),
    });
    fc.assert(
      fc.property(
        fc.array(rowArb, { minLength: 2, maxLength: 60 }),
        fc.double({ min: 0, max: 10, noNaN: true }),
        (rows, lambda) => {
          if (!rows.some((r) => r.label === 1) || !rows.some((r) => r.label === 0)) return;
          const fit = fitSignalWeights(
            rows.map((r) => ({ features: row(r.values), label: r.label })),
            { lambda },
          );
          assert.ok(Number.isFinite(fit.bias) && Math.abs(fit.bias) <= 100);
          for (const n of SIGNAL_NAMES) {
            const w = fit.weights[n];
            assert.ok(Number.isFinite(w) && Math.abs(w) <= 100, `${n} = ${w}`);
            if (SIGNAL_DIRECTIONS[n] === 'risk') assert.ok(w >= 0, `${n} = ${w}`);
            else assert.ok(w <= 0, `${n} = ${w}`);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  test('recovers planted signal weights, holding the wrong-signed truth at zero', () => {
    const truth = SIGNAL_NAMES.map((n, i) => (SIGNAL_DIRECTIONS[n] === 'risk' ? (i % 3) * 0.6 : -0.7));
    truth[3] = -0.5; // a risk signal whose data says "protective": the fit must hold it at 0
    const { X, y } = synthetic(20_000, -1.5, truth, 9);
    const fit = fitSignalWeights(X.map((x, i) => ({ features: x, label: y[i]! })));
    SIGNAL_NAMES.forEach((n, i) => {
      if (i === 3) assert.equal(fit.weights[n], 0);
      else assert.ok(Math.abs(fit.weights[n] - truth[i]!) < 0.12, `${n}: ${fit.weights[n]} vs ${truth[i]}`);
    });
  });
});
