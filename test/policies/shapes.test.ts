// Shaped signals (docs/signals.md, "Shaped signals"; src/model/shapes.ts): monotone by
// construction, the explanation still sums to the score, replay = live, a policy without shapes
// scores as before, the schema refuses a non-monotone shape, and the fit learns a bend.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DEFAULT_POLICY,
  SIGNAL_DIRECTIONS,
  SIGNAL_NAMES,
  type Policy,
  type SignalName,
} from '../../src/model/policy.ts';
import { validatePolicy } from '../../src/model/policy-document.ts';
import { replayScore, scoreValues, type SignalValues } from '../../src/model/arithmetic.ts';
import {
  collapse,
  effectiveWeight,
  evaluateShape,
  expand,
  knotsFromValues,
  planShapes,
  type Shape,
} from '../../src/model/shapes.ts';
import { fitCandidate, type LabelledDecision } from '../../src/policies/report.ts';
import { evaluate } from '../../src/model/signal-model.ts';
import { safeAmount, scoreForAmount, minorUnitDigits, MAX_UNITS } from '../../src/trust/safe-amount.ts';
import { mulberry32 } from '../../bench/quality/prng.ts';
import { NOW, policyArb, profileArb, requestArb } from '../helpers/profiles.ts';
import { referenceLinearScore, referenceScoreFromSignals } from '../helpers/reference-model.ts';

const sign = (name: SignalName) => (SIGNAL_DIRECTIONS[name] === 'protective' ? -1 : 1);
const magnitude = fc.oneof(fc.constant(0), fc.double({ min: 0, max: 20, noNaN: true }));

/** A valid shape for a signal: strictly increasing positive knots, slopes of the signal's sign. */
const shapeArb = (name: SignalName): fc.Arbitrary<Shape> =>
  fc.uniqueArray(fc.double({ min: 1e-3, max: 10, noNaN: true }), { minLength: 1, maxLength: 6 }).chain((ks) => {
    const knots = [...ks].sort((a, b) => a - b);
    return fc
      .array(magnitude, { minLength: knots.length, maxLength: knots.length })
      .map((m) => ({ knots, slopes: m.map((s) => sign(name) * s + 0) }));
  });

/** Any valid policy with some of its signals shaped. */
const shapedPolicyArb: fc.Arbitrary<Policy> = fc
  .tuple(policyArb, fc.subarray(SIGNAL_NAMES, { minLength: 1 }))
  .chain(([policy, names]) =>
    fc
      .tuple(...names.map(shapeArb))
      .map((shapes) => ({ ...policy, shapes: Object.fromEntries(names.map((n, i) => [n, shapes[i]!])) })),
  );

const valuesArb: fc.Arbitrary<SignalValues> = fc
  .tuple(...SIGNAL_NAMES.map(() => fc.oneof(fc.constant(0), fc.double({ min: 0, max: 12, noNaN: true }))))
  .map((vs) => Object.fromEntries(SIGNAL_NAMES.map((n, i) => [n, vs[i]!])));

describe('shaped signals: properties', () => {
  test("g(0) = 0 and g is monotone in x in the signal's direction", () => {
    const named = fc.constantFrom(...SIGNAL_NAMES).chain((name) => fc.tuple(fc.constant(name), shapeArb(name)));
    const x = fc.double({ min: 0, max: 15, noNaN: true });
    fc.assert(
      fc.property(named, magnitude, x, x, ([name, shape], w, a, b) => {
        const weight = sign(name) * w + 0;
        assert.ok(evaluateShape(weight, shape, 0) === 0);
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const d = evaluateShape(weight, shape, hi) - evaluateShape(weight, shape, lo);
        // Exact up to the rounding of the sum's last bits (the weighted ramps are added in order).
        assert.ok(
          sign(name) * d >= -1e-12 * (1 + Math.abs(evaluateShape(weight, shape, hi))),
          `${name}: g(${hi}) − g(${lo}) = ${d}`,
        );
      }),
      { numRuns: 1000 },
    );
  });

  test("the score is monotone in a shaped signal's value (integer scores, the live arithmetic)", () => {
    fc.assert(
      fc.property(shapedPolicyArb, valuesArb, fc.double({ min: 0, max: 3, noNaN: true }), (policy, values, step) => {
        for (const name of Object.keys(policy.shapes!) as SignalName[]) {
          const lower = replayScore(policy, values);
          const higher = replayScore(policy, { ...values, [name]: (values[name] ?? 0) + step });
          if (sign(name) > 0) assert.ok(higher >= lower, `${name} +${step}: ${lower} → ${higher}`);
          else assert.ok(higher <= lower, `${name} +${step}: ${lower} → ${higher}`);
        }
      }),
      { numRuns: 400 },
    );
  });

  test('the explanation sums to the score, and each shaped term weight·value is g(value)', () => {
    fc.assert(
      fc.property(shapedPolicyArb, valuesArb, (policy, values) => {
        const { signals, score } = scoreValues(policy, values);
        assert.equal(referenceScoreFromSignals(policy.bias, signals), score);
        for (const { name, ...s } of signals) {
          const n = name as SignalName;
          const shape = policy.shapes?.[n];
          const g = shape ? evaluateShape(policy.weights[n], shape, s.value) : policy.weights[n] * s.value;
          assert.ok(
            Math.abs(s.weight * s.value - g) <= 1e-12 * Math.max(1, Math.abs(g)),
            `${n}: ${s.weight}·${s.value} vs ${g}`,
          );
          // Below the first knot a shaped signal's weight is the policy's own, bit for bit.
          if (shape && s.value <= shape.knots[0]!) assert.equal(s.weight, policy.weights[n]);
        }
      }),
      { numRuns: 500 },
    );
  });

  test('a policy without shapes scores exactly as the linear arithmetic did (random policies and values)', () => {
    fc.assert(
      fc.property(policyArb, valuesArb, (policy, values) => {
        assert.deepEqual(scoreValues(policy, values), referenceLinearScore(policy, values));
      }),
      { numRuns: 500 },
    );
    assert.equal(DEFAULT_POLICY.shapes, undefined);
  });

  test('replay of a stored decision equals the live score, with shapes (stored as JSON)', () => {
    fc.assert(
      fc.property(profileArb, requestArb, shapedPolicyArb, (profile, request, policy) => {
        const live = evaluate(profile, request, policy, NOW);
        const stored = JSON.parse(JSON.stringify(live.values)) as SignalValues;
        assert.equal(replayScore(policy, stored), live.result.score);
        assert.equal(referenceScoreFromSignals(policy.bias, live.result.signals), live.result.score);
      }),
      { numRuns: 300 },
    );
  });

  test('safe_amount still finds the step with shaped amount signals', () => {
    const amountShaped = fc
      .tuple(
        policyArb,
        shapeArb('amount_vs_history'),
        shapeArb('new_counterparty_large_trade'),
        shapeArb('cash_out_burst'),
      )
      .map(([p, a, n, c]) => ({
        ...p,
        shapes: { amount_vs_history: a, new_counterparty_large_trade: n, cash_out_burst: c },
      }));
    fc.assert(
      fc.property(profileArb, requestArb, amountShaped, (profile, request, policy) => {
        const safe = safeAmount(profile, request, policy, NOW);
        const high = policy.thresholds.high;
        const digits = minorUnitDigits(request.currency, policy.cryptoAssets);
        const at = (amount: number) => scoreForAmount(profile, request, policy, NOW, amount);
        if (safe === null) assert.ok(at(1e15) < high);
        else if (safe === 0) assert.ok(at(10 ** -digits) >= high);
        else {
          assert.ok(at(safe) < high, `score at ${safe} reaches ${high}`);
          const units = Math.round(safe * 10 ** digits);
          if (units < MAX_UNITS)
            assert.ok(at((units + 1) / 10 ** digits) >= high, `one unit above ${safe} still below ${high}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('shaped signals: the policy schema', () => {
  const withShape = (shape: unknown, name = 'velocity_trades') => ({
    ...structuredClone(DEFAULT_POLICY),
    shapes: { [name]: shape },
  });
  test('accepts a monotone shape', () => {
    assert.doesNotThrow(() => validatePolicy(withShape({ knots: [0.5, 1.5], slopes: [1.2, 3] })));
    assert.doesNotThrow(() => validatePolicy(withShape({ knots: [3], slopes: [-0.05] }, 'completed_trades')));
  });
  test('rejects wrong-sign slopes, unsorted or non-positive knots, mismatched lengths and unknown signals, naming the field', () => {
    assert.throws(
      () => validatePolicy(withShape({ knots: [0.5, 1.5], slopes: [1, -2] })),
      /\/shapes\/velocity_trades\/slopes\/1: must be >= 0/,
    );
    assert.throws(
      () => validatePolicy(withShape({ knots: [3], slopes: [0.1] }, 'completed_trades')),
      /\/shapes\/completed_trades\/slopes\/0: must be <= 0/,
    );
    assert.throws(
      () => validatePolicy(withShape({ knots: [1.5, 0.5], slopes: [1, 2] })),
      /\/shapes\/velocity_trades\/knots\/1: must be greater than knots\[0\]/,
    );
    assert.throws(
      () => validatePolicy(withShape({ knots: [1, 1], slopes: [1, 2] })),
      /\/shapes\/velocity_trades\/knots\/1/,
    );
    assert.throws(
      () => validatePolicy(withShape({ knots: [0, 1], slopes: [1, 2] })),
      /\/shapes\/velocity_trades\/knots\/0/,
    );
    assert.throws(
      () => validatePolicy(withShape({ knots: [1, 2], slopes: [1] })),
      /\/shapes\/velocity_trades\/slopes: must have one slope per knot/,
    );
    assert.throws(
      () => validatePolicy(withShape({ knots: [1], slopes: [1] }, 'no_such_signal')),
      /\/shapes\/no_such_signal: unknown field/,
    );
    assert.throws(() => validatePolicy(withShape({ knots: [], slopes: [] })), /\/shapes\/velocity_trades\/knots/);
  });
});

describe('shaped signals: the fit', () => {
  test("expand and collapse are each other's inverse: Σ θ·columns = g", () => {
    const plan = [
      { name: 'velocity_trades' as const, knots: [0.5, 1, 2] },
      { name: 'chargebacks' as const, knots: [] },
    ];
    const theta = [0.2, 0.4, 3, 0.5, 1.5];
    const { weights, shapes } = collapse(plan, theta);
    for (const x of [0, 0.3, 0.5, 0.7, 1, 1.6, 2, 2.9]) {
      const cols = expand([x, 0.25], plan);
      const sum = cols.reduce((a, c, i) => a + c * theta[i]!, 0);
      assert.ok(Math.abs(sum - (evaluateShape(weights[0]!, shapes.velocity_trades!, x) + weights[1]! * 0.25)) < 1e-12);
    }
  });

  test('the knot rule: quantiles of the non-zero values, both sides populated; a 0/1 signal gets none', () => {
    assert.deepEqual(knotsFromValues([...new Array<number>(500).fill(0), ...new Array<number>(200).fill(1)]), []);
    const values = Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? 0 : i / 100));
    const knots = knotsFromValues(values);
    assert.ok(knots.length >= 3 && knots.every((k, i) => i === 0 || k > knots[i - 1]!), String(knots));
    assert.deepEqual(
      planShapes(
        ['chargebacks'],
        () => values,
        () => false,
      ),
      [{ name: 'chargebacks', knots: [] }],
    );
  });

  test("a fit on a bent truth recovers a bent shape and beats the linear fit's holdout log-loss", () => {
    // Truth: velocity_trades costs nothing up to 1.5, then 4 log-odds per unit; amount linear.
    const truth = (f: SignalValues) =>
      -3 + 4 * Math.max(0, (f.velocity_trades ?? 0) - 1.5) + 0.8 * (f.amount_vs_history ?? 0);
    const draw = (n: number, seed: number): LabelledDecision[] => {
      const random = mulberry32(seed);
      return Array.from({ length: n }, (_, i) => {
        const features = {
          velocity_trades: random() < 0.5 ? 3 * random() : 0,
          amount_vs_history: random() < 0.4 ? 4 * random() : 0,
        };
        const p = 1 / (1 + Math.exp(-truth(features)));
        return { entityId: `e${seed}-${i}`, features, label: random() < p ? 1 : 0 };
      });
    };
    const train = draw(8000, 5);
    const holdout = draw(8000, 6);
    const shaped = fitCandidate(train, DEFAULT_POLICY, { version: 'bent' }).policy;
    const linear = fitCandidate(train, DEFAULT_POLICY, { version: 'straight', shapes: false }).policy;
    const shape = shaped.shapes?.velocity_trades;
    assert.ok(shape, 'velocity_trades is shaped');
    assert.ok(shaped.weights.velocity_trades < 1, `slope before the bend ${shaped.weights.velocity_trades}`);
    assert.ok(Math.max(...shape.slopes) > 2.5, `slopes after it ${shape.slopes.join(', ')}`);
    assert.ok(
      effectiveWeight(shaped.weights.velocity_trades, shape, 3) >
        effectiveWeight(shaped.weights.velocity_trades, shape, 1),
    );
    const logLoss = (policy: Policy) => {
      let sum = 0;
      for (const d of holdout) {
        const { signals } = scoreValues(policy, d.features);
        const z = signals.reduce((a, s) => a + s.weight * s.value, policy.bias);
        const p = Math.min(1 - 1e-12, Math.max(1e-12, 1 / (1 + Math.exp(-z))));
        sum -= d.label === 1 ? Math.log(p) : Math.log(1 - p);
      }
      return sum / holdout.length;
    };
    assert.ok(logLoss(shaped) < logLoss(linear), `shaped ${logLoss(shaped)} vs linear ${logLoss(linear)}`);
    assert.doesNotThrow(() => validatePolicy(shaped));
  });

  test("a base policy's shapes are not inherited by a weights-only fit", () => {
    const random = mulberry32(9);
    const rows: LabelledDecision[] = Array.from({ length: 600 }, (_, i) => ({
      entityId: `e${i}`,
      features: { chargebacks: random() < 0.2 ? 1 : 0 },
      label: random() < 0.3 ? 1 : 0,
    }));
    const base: Policy = { ...DEFAULT_POLICY, shapes: { velocity_trades: { knots: [1], slopes: [2] } } };
    const { policy, report } = fitCandidate(rows, base, { version: 'plain', shapes: false });
    assert.equal(policy.shapes, undefined);
    assert.deepEqual(report.shapes, { base: base.shapes, candidate: {} });
  });
});

test('expand writes into a preallocated row (a typed-array matrix) the same columns it returns', () => {
  const plan = [
    { name: 'velocity_trades' as const, knots: [0.5, 1, 2] },
    { name: 'chargebacks' as const, knots: [] },
  ];
  const matrix = new Float64Array(2 * 5);
  expand([2.5, 1], plan, matrix, 5);
  assert.deepEqual([...matrix.subarray(5)], expand([2.5, 1], plan));
  assert.deepEqual(expand([2.5, 1], plan), [0.5, 0.5, 1, 0.5, 1]);
});
