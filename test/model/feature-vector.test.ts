import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';
import { evaluate, scoreEntity } from '../../src/model/signal-model.ts';
import type { EntityProfile, ScoreRequest } from '../../src/model/types.ts';
import {
  decodeFeatures,
  featureValues,
  learningColumns,
  signalBounds,
  toVector,
} from '../../src/model/feature-vector.ts';
import { replayScore } from '../../src/model/arithmetic.ts';
import fc from 'fast-check';
import { anyPolicy, NOW as ANY_NOW, profileArb, requestArb } from '../helpers/profiles.ts';
import { referenceFeatureValues } from '../helpers/reference-model.ts';
import { marketProfileArb } from '../helpers/market-profiles.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-21T12:00:00Z');

const profile: EntityProfile = {
  entityId: 'e1',
  known: true,
  firstSeenAt: NOW - 40 * DAY,
  lastEventAt: NOW - DAY,
  tradesCompleted: 12,
  tradesCancelled: 2,
  disputesOpened: 1,
  disputesWon: 0,
  disputesLost: 1,
  chargebacks: 1,
  fraudReports: 0,
  blocklisted: false,
  decayed: {
    at: NOW - DAY,
    tradesCompleted: 11.5,
    tradesCancelled: 1.9,
    disputesLost: 1,
    chargebacks: 1,
    fraudReports: 0,
  },
  velocity: { tradesLastHour: 0, tradesLastDay: 1, volumeLastDay: 80 },
  amountStats: { n: 12, logMean: Math.log(100), logM2: 2, volume: 1200 },
  counterpartyTrades: 0,
  linkedFlaggedEntities: 0,
};
const request: ScoreRequest = {
  entity_id: 'e1',
  amount: 900,
  currency: 'USD',
  context: { counterparty_id: 'c', payment_method: 'card', country: 'NG', counterparty_country: 'GB' },
};

describe('featureValues', () => {
  test('has every signal, zeros included, even those the deciding policy weighs 0', () => {
    const zeroed: Policy = {
      ...DEFAULT_POLICY,
      weights: { ...DEFAULT_POLICY.weights, chargebacks: 0, payment_method_risk: 0 },
    };
    const values = featureValues(profile, request, zeroed, NOW);
    assert.deepEqual(Object.keys(values), SIGNAL_NAMES);
    assert.ok(values.chargebacks > 0.99 && values.chargebacks <= 1); // one chargeback, decayed for a day
    assert.equal(values.payment_method_risk, 0.8);
    assert.equal(values.blocklisted, 0);
    assert.equal(values.fraud_reports, 0);
  });

  test('replaying the stored values under any weights gives the live score of those weights', () => {
    const values = featureValues(profile, request, DEFAULT_POLICY, NOW);
    const other: Policy = {
      ...DEFAULT_POLICY,
      bias: -1,
      weights: { ...DEFAULT_POLICY.weights, chargebacks: 0, amount_vs_history: 3 },
    };
    assert.equal(replayScore(other, values), scoreEntity(profile, request, other, NOW).score);
    assert.equal(replayScore(DEFAULT_POLICY, values), scoreEntity(profile, request, DEFAULT_POLICY, NOW).score);
  });
});

describe('featureValues: the values of the reference written from the docs', () => {
  test('computed afresh, and handed on by the evaluation that scored the same inputs', () => {
    fc.assert(
      fc.property(fc.oneof(profileArb, marketProfileArb), requestArb, anyPolicy, (p, r, policy) => {
        const expected = referenceFeatureValues(p, r, policy, ANY_NOW);
        assert.deepStrictEqual(featureValues(p, r, policy, ANY_NOW), expected);
        const { values } = evaluate(p, r, policy, ANY_NOW);
        assert.deepStrictEqual(values, expected);
        assert.equal(JSON.stringify(values), JSON.stringify(expected));
      }),
      { numRuns: 500 },
    );
  });

  test('the learning columns store the values they are handed, and the shadow score replayed from them', () => {
    const { result, values } = evaluate(profile, request, DEFAULT_POLICY, NOW);
    const shadow = { ...DEFAULT_POLICY, version: 'shadow', bias: DEFAULT_POLICY.bias - 20 };
    const columns = learningColumns(values, request, result, shadow);
    assert.deepStrictEqual(
      decodeFeatures(columns.features),
      referenceFeatureValues(profile, request, DEFAULT_POLICY, NOW),
    );
    assert.equal(columns.shadow_version, 'shadow');
    assert.equal(columns.shadow_score, scoreEntity(profile, request, shadow, NOW).score);
    assert.notEqual(columns.shadow_score, result.score);
    const none = learningColumns(values, request, result, null);
    assert.equal(none.shadow_score, null);
    assert.equal(none.risk_level, result.riskLevel);
  });
});

describe('toVector and signalBounds', () => {
  test('vectors follow SIGNAL_NAMES; missing and non-finite values are 0; a wrong length is refused', () => {
    const v = toVector({ chargebacks: 1.23456, fraud_reports: Number.POSITIVE_INFINITY });
    assert.equal(v.length, SIGNAL_NAMES.length);
    assert.equal(v[SIGNAL_NAMES.indexOf('chargebacks')], 1.2346);
    assert.equal(v[SIGNAL_NAMES.indexOf('fraud_reports')], 0);
    assert.throws(() => toVector([1, 2]), RangeError);
  });

  test('risk weights are bounded to [0, 100], the protective one to [-100, 0]', () => {
    const { lower, upper } = signalBounds();
    const i = SIGNAL_NAMES.indexOf('completed_trades');
    assert.deepEqual([lower[i], upper[i]], [-100, 0]);
    const j = SIGNAL_NAMES.indexOf('chargebacks');
    assert.deepEqual([lower[j], upper[j]], [0, 100]);
  });
});
