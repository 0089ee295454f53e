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
import { scoreEntity } from '../../src/model/signal-model.ts';
import { featureValues } from '../../src/model/feature-vector.ts';
import { PAYMENT_METHODS, type EntityProfile, type ScoreRequest } from '../../src/model/types.ts';
import { backtest, featureParameterChanges, type StoredDecision } from '../../src/policies/backtest.ts';
import { replayScore, scoreValues } from '../../src/model/arithmetic.ts';
import { profileArb } from '../helpers/profiles.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-21T12:00:00Z');
const time = fc.integer({ min: NOW - 3 * 365 * DAY, max: NOW + DAY });

const requestArb: fc.Arbitrary<ScoreRequest> = fc.record({
  entity_id: fc.constant('e1'),
  amount: fc.double({ min: 1e-6, max: 1e10, noNaN: true }),
  currency: fc.constantFrom('USD', 'BTC'),
  context: fc.record(
    {
      counterparty_id: fc.constant('cp1'),
      payment_method: fc.constantFrom(...PAYMENT_METHODS),
      country: fc.constantFrom('NG', 'GB'),
      counterparty_country: fc.constantFrom('NG', 'US'),
      account_created_at: time.map((t) => new Date(t).toISOString()),
    },
    { requiredKeys: [] },
  ),
});

/** Any valid weights and bias; every other field (the ones that shape the values) as the default. */
const policyArb: fc.Arbitrary<Policy> = fc
  .record({
    bias: fc.double({ min: -100, max: 100, noNaN: true }),
    weights: fc.record(
      Object.fromEntries(
        SIGNAL_NAMES.map((n) => [
          n,
          SIGNAL_DIRECTIONS[n] === 'risk'
            ? fc.oneof(fc.constant(0), fc.double({ min: 0, max: 100, noNaN: true }))
            : fc.oneof(fc.constant(0), fc.double({ min: -100, max: 0, noNaN: true })),
        ]),
      ) as Record<SignalName, fc.Arbitrary<number>>,
    ),
  })
  .map(({ bias, weights }) => ({ ...DEFAULT_POLICY, version: 'replay', bias, weights }));

/** What the decision stores (§8): every signal's value. */
const storedFeatures = (profile: EntityProfile, request: ScoreRequest) =>
  featureValues(profile, request, DEFAULT_POLICY, NOW);

describe('replayScore', () => {
  test('reproduces the live score exactly under the deciding policy (property)', () => {
    fc.assert(
      fc.property(profileArb, requestArb, (profile, request) => {
        assert.equal(
          replayScore(DEFAULT_POLICY, storedFeatures(profile, request)),
          scoreEntity(profile, request, DEFAULT_POLICY, NOW).score,
        );
      }),
      { numRuns: 500 },
    );
  });

  test('reproduces the live score and signals of any other weights and bias exactly (property)', () => {
    fc.assert(
      fc.property(profileArb, requestArb, policyArb, (profile, request, policy) => {
        const features = storedFeatures(profile, request);
        const live = scoreEntity(profile, request, policy, NOW);
        assert.deepEqual(
          scoreValues(policy, features).signals,
          live.signals.map(({ description: _description, ...s }) => s),
        );
        assert.equal(replayScore(policy, features), live.score);
      }),
      { numRuns: 500 },
    );
  });

  test('raw stored values are rounded as the model rounds them; missing and non-finite count as 0', () => {
    const policy = { ...DEFAULT_POLICY, bias: 0 };
    const rounded = replayScore(policy, { chargebacks: 1.00004, fraud_reports: 0.99996 });
    assert.equal(rounded, replayScore(policy, { chargebacks: 1, fraud_reports: 1 }));
    assert.equal(replayScore(policy, { chargebacks: Number.NaN }), replayScore(policy, {}));
    assert.equal(replayScore(policy, {}), 50);
  });
});

describe('backtest', () => {
  const policy = { ...DEFAULT_POLICY, bias: 0, weights: { ...DEFAULT_POLICY.weights, chargebacks: 1 } };
  // chargebacks value v alone: score = round(100 σ(v))
  const at = (v: number, riskLevel: StoredDecision['riskLevel'], label?: 0 | 1 | null): StoredDecision => ({
    features: { chargebacks: v },
    riskLevel,
    label,
  });

  test('counts, level transitions and metrics on a hand fixture', () => {
    const decisions = [
      at(0, 'low', 0), // 50 → medium
      at(3, 'high', 1), // 95 → critical
      at(1, 'medium'), // 73 → high
      at(1, 'medium', null), // 73 → high
    ];
    const result = backtest(policy, decisions);
    assert.equal(result.decisions, 4);
    assert.equal(result.labelled, 2);
    assert.deepEqual(result.levels.low, { low: 0, medium: 1, high: 0, critical: 0 });
    assert.deepEqual(result.levels.medium, { low: 0, medium: 0, high: 2, critical: 0 });
    assert.deepEqual(result.levels.high, { low: 0, medium: 0, high: 0, critical: 1 });
    assert.deepEqual(result.levels.critical, { low: 0, medium: 0, high: 0, critical: 0 });
    assert.equal(result.metrics.roc_auc, 1);
    assert.equal(result.metrics.average_precision, 1);
    assert.ok(Math.abs(result.metrics.brier! - (0.5 ** 2 + 0.05 ** 2) / 2) < 1e-12);
  });

  test('no decisions gives zero counts and null metrics', () => {
    const result = backtest(policy, []);
    assert.equal(result.decisions, 0);
    assert.deepEqual(result.metrics, { roc_auc: null, average_precision: null, brier: null, calibration_error: null });
  });

  test('an unknown decided level is refused', () => {
    assert.throws(() => backtest(policy, [{ features: {}, riskLevel: 'severe' as never }]), RangeError);
  });
});

describe('featureParameterChanges', () => {
  test('names the value-shaping fields that differ and ignores weights, bias and thresholds', () => {
    const other: Policy = {
      ...DEFAULT_POLICY,
      bias: 1,
      weights: { ...DEFAULT_POLICY.weights, chargebacks: 9 },
      thresholds: { medium: 20, high: 50, critical: 80 },
      paymentMethodRisk: { ...DEFAULT_POLICY.paymentMethodRisk, card: 0.9 },
      newAccountDays: 30,
    };
    assert.deepEqual(featureParameterChanges(DEFAULT_POLICY, other), ['paymentMethodRisk', 'newAccountDays']);
    // A copy loaded from JSON (key order, unfrozen) is still the same.
    assert.deepEqual(featureParameterChanges(DEFAULT_POLICY, JSON.parse(JSON.stringify(DEFAULT_POLICY)) as Policy), []);
  });

  test('new-account tiers: a policy without them scores with the defaults, so only other tiers count as a change', () => {
    const { newAccounts: _, ...preTiers } = DEFAULT_POLICY;
    assert.deepEqual(featureParameterChanges(DEFAULT_POLICY, preTiers as Policy), []);
    const wider = {
      ...DEFAULT_POLICY,
      newAccounts: { ...DEFAULT_POLICY.newAccounts!, referenceAmounts: { USD: 2000 } },
    };
    assert.deepEqual(featureParameterChanges(preTiers as Policy, wider), ['newAccounts']);
  });
});
