import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, SIGNAL_DIRECTIONS, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';
import { computeSignals, decayFactor, scoreEntity } from '../../src/model/signal-model.ts';
import { riskLevelFor } from '../../src/model/arithmetic.ts';
import { PAYMENT_METHODS, type EntityProfile, type ScoreRequest } from '../../src/model/types.ts';
import { profileArb } from '../helpers/profiles.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-21T12:00:00Z');

function freshProfile(): EntityProfile {
  return {
    entityId: 'e1',
    known: false,
    firstSeenAt: null,
    lastEventAt: null,
    tradesCompleted: 0,
    tradesCancelled: 0,
    disputesOpened: 0,
    disputesWon: 0,
    disputesLost: 0,
    chargebacks: 0,
    fraudReports: 0,
    blocklisted: false,
    decayed: { at: NOW, tradesCompleted: 0, tradesCancelled: 0, disputesLost: 0, chargebacks: 0, fraudReports: 0 },
    velocity: { tradesLastHour: 0, tradesLastDay: 0, volumeLastDay: 0 },
    amountStats: { n: 0, logMean: 0, logM2: 0, volume: 0 },
    counterpartyTrades: null,
    linkedFlaggedEntities: 0,
  };
}

/** 200 clean trades of ~100 USD spread over a year, decayed as the store would have decayed them. */
function veteranProfile(): EntityProfile {
  const p = freshProfile();
  p.known = true;
  p.firstSeenAt = NOW - 365 * DAY;
  p.lastEventAt = NOW - DAY;
  p.tradesCompleted = 200;
  let decayed = 0;
  for (let i = 0; i < 200; i++) decayed += decayFactor(NOW - ((i + 0.5) * 365 * DAY) / 200, NOW, 180);
  p.decayed.tradesCompleted = decayed;
  p.velocity = { tradesLastHour: 0, tradesLastDay: 1, volumeLastDay: 100 };
  p.amountStats = { n: 200, logMean: Math.log(100), logM2: 199 * 0.25, volume: 20_000 };
  return p;
}

const REQ: ScoreRequest = { entity_id: 'e1', amount: 100, currency: 'USD', context: {} };
const score = (p: EntityProfile, r: ScoreRequest = REQ, policy: Policy = DEFAULT_POLICY) =>
  scoreEntity(p, r, policy, NOW).score;
const signal = (p: EntityProfile, name: string, r: ScoreRequest = REQ) =>
  computeSignals(p, r, DEFAULT_POLICY, NOW).find((s) => s.name === name);

// ---------- arbitraries ----------
const time = fc.integer({ min: NOW - 3 * 365 * DAY, max: NOW + DAY });

const requestArb: fc.Arbitrary<ScoreRequest> = fc.record({
  entity_id: fc.constant('e1'),
  amount: fc.double({ min: 1e-6, max: 1e10, noNaN: true }),
  currency: fc.constantFrom('USD', 'EUR', 'BTC', 'NGN'),
  context: fc.record(
    {
      counterparty_id: fc.constant('cp1'),
      payment_method: fc.constantFrom(...PAYMENT_METHODS),
      country: fc.constantFrom('NG', 'GB', 'us'),
      counterparty_country: fc.constantFrom('NG', 'GB', 'US'),
      account_created_at: fc.oneof(
        time.map((t) => new Date(t).toISOString()),
        fc.constant('not a date'),
      ),
    },
    { requiredKeys: [] },
  ),
});

/** Any policy that passes validation: weights of the allowed sign, including zero. */
const policyArb: fc.Arbitrary<Policy> = fc
  .record({
    bias: fc.double({ min: -10, max: 10, noNaN: true }),
    weights: fc.tuple(...SIGNAL_NAMES.map(() => fc.oneof(fc.constant(0), fc.double({ min: 0, max: 20, noNaN: true })))),
    halfLife: fc.double({ min: 1, max: 1000, noNaN: true }),
  })
  .map(({ bias, weights, halfLife }) => ({
    ...structuredClone(DEFAULT_POLICY),
    bias,
    decayHalfLifeDays: halfLife,
    weights: Object.fromEntries(
      SIGNAL_NAMES.map((n, i) => [n, (SIGNAL_DIRECTIONS[n] === 'protective' ? -1 : 1) * (weights[i] ?? 0) + 0]),
    ) as Policy['weights'],
  }));

const anyPolicy = fc.oneof(fc.constant(DEFAULT_POLICY), policyArb);
const RUNS = { numRuns: 300 };

type Bump = (p: EntityProfile, k: number) => void;
function assertMonotone(bump: Bump, direction: 'up' | 'down') {
  fc.assert(
    fc.property(profileArb, requestArb, anyPolicy, fc.integer({ min: 1, max: 1000 }), (p, r, policy, k) => {
      const more = structuredClone(p);
      bump(more, k);
      const before = scoreEntity(p, r, policy, NOW).score;
      const after = scoreEntity(more, r, policy, NOW).score;
      if (direction === 'down') assert.ok(after <= before, `${after} > ${before}`);
      else assert.ok(after >= before, `${after} < ${before}`);
    }),
    RUNS,
  );
}

describe('scoring model: properties', () => {
  test('more completed trades never raise the score', () => {
    assertMonotone((p, k) => {
      p.tradesCompleted += k;
      p.decayed.tradesCompleted += k;
    }, 'down');
  });

  test('more chargebacks never lower the score', () => {
    assertMonotone((p, k) => {
      p.chargebacks += k;
      p.decayed.chargebacks += k;
    }, 'up');
  });

  test('more fraud reports never lower the score', () => {
    assertMonotone((p, k) => {
      p.fraudReports += k;
      p.decayed.fraudReports += k;
    }, 'up');
  });

  test('more lost disputes never lower the score', () => {
    assertMonotone((p, k) => {
      p.disputesOpened += k;
      p.disputesLost += k;
      p.decayed.disputesLost += k;
    }, 'up');
  });

  test('blocklisting never lowers the score', () => {
    assertMonotone((p) => {
      p.blocklisted = true;
    }, 'up');
  });

  test('score is the formula over the returned signals; signals sorted, non-zero, finite', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, (p, r, policy) => {
        const result = scoreEntity(p, r, policy, NOW);
        let z = policy.bias;
        for (const s of result.signals) z += s.weight * s.value;
        assert.equal(result.score, Math.round(100 / (1 + Math.exp(-z))));
        assert.ok(Number.isInteger(result.score) && result.score >= 0 && result.score <= 100);
        assert.equal(result.riskLevel, riskLevelFor(result.score, policy.thresholds));
        assert.equal(result.policyVersion, policy.version);
        const names = new Set<string>();
        for (const [i, s] of result.signals.entries()) {
          assert.ok(Number.isFinite(s.value) && Number.isFinite(s.weight), `${s.name} not finite`);
          assert.notEqual(s.weight * s.value, 0, `${s.name} has zero contribution`);
          assert.equal(s.weight, policy.weights[s.name as keyof Policy['weights']]);
          assert.ok(!names.has(s.name), `duplicate ${s.name}`);
          names.add(s.name);
          assert.equal(s.value, Math.round(s.value * 1e4) / 1e4, `${s.name} not rounded`);
          const prev = result.signals[i - 1];
          if (prev) {
            const a = Math.abs(prev.weight * prev.value);
            const b = Math.abs(s.weight * s.value);
            assert.ok(a > b || (a === b && prev.name < s.name), `${prev.name} before ${s.name}`);
          }
        }
      }),
      RUNS,
    );
  });

  test('deterministic and does not mutate its inputs', () => {
    fc.assert(
      fc.property(profileArb, requestArb, (p, r) => {
        const pCopy = structuredClone(p);
        const rCopy = structuredClone(r);
        const a = scoreEntity(p, r, DEFAULT_POLICY, NOW);
        assert.deepEqual(scoreEntity(p, r, DEFAULT_POLICY, NOW), a);
        // fast-check builds null-prototype records; compare clones so only contents matter
        assert.deepEqual(structuredClone(p), pCopy);
        assert.deepEqual(structuredClone(r), rCopy);
      }),
      { numRuns: 100 },
    );
  });
});

describe('scoring model: calibration of the default policy', () => {
  test('a fresh unknown entity: low within its first tier (USD 250), medium at four times it', () => {
    // σ(−2.7 + 0.6 + 0.2) = 13; at USD 1000 amount_vs_history is ln 4 / 0.5 = 2.7726 (weight 0.8): σ(0.318) = 58
    assert.equal(score(freshProfile()), 13);
    assert.equal(score(freshProfile(), { ...REQ, amount: 1000 }), 58);
  });

  test('a clean newcomer paying by bank transfer to a new counterparty stays below high (it was 60: no prior pushed as risk)', () => {
    const p = freshProfile();
    p.counterpartyTrades = 0;
    // σ(−2.7 + 0.6 + 0.2 + 0.3 + 0.3) = 21 (50 under 2026-11-25.3)
    assert.equal(score(p, { ...REQ, context: { counterparty_id: 'cp', payment_method: 'bank_transfer' } }), 21);
  });

  test('the riskiest clean newcomer within its tier limit (card, cross-border, new counterparty) is still below high', () => {
    const p = freshProfile();
    p.counterpartyTrades = 0;
    const ctx = { counterparty_id: 'cp', payment_method: 'card' as const, country: 'NG', counterparty_country: 'GB' };
    // σ(−2.7 + 0.8 + 0.7143 + 0.6 + 0.4 + 0.3 + 0.2) = 58
    assert.equal(score(p, { ...REQ, amount: 250, context: ctx }), 58);
  });

  test('200 clean completed trades over a year score low (< 20)', () => {
    assert.ok(score(veteranProfile()) < 20);
  });

  test('blocklisted is critical even with a long clean history', () => {
    for (const trades of [200, 10_000, 1_000_000]) {
      const p = veteranProfile();
      p.blocklisted = true;
      p.tradesCompleted = trades;
      p.decayed.tradesCompleted = trades;
      assert.ok(score(p) >= 85, `blocklisted with ${trades} trades scored ${score(p)}`);
    }
  });

  test('sharing identifiers with 2 flagged entities scores >= 60', () => {
    for (const base of [freshProfile(), veteranProfile()]) {
      base.linkedFlaggedEntities = 2;
      assert.ok(score(base) >= 60, `scored ${score(base)}`);
    }
  });

  test('chargebacks and fraud reports push to high / critical', () => {
    const young = () => {
      const p = veteranProfile();
      p.firstSeenAt = NOW - 30 * DAY;
      p.tradesCompleted = 10;
      p.decayed.tradesCompleted = 9.6;
      p.amountStats = { n: 10, logMean: Math.log(100), logM2: 9 * 0.25, volume: 1000 };
      return p;
    };
    const cb = young();
    cb.chargebacks = cb.decayed.chargebacks = 1;
    assert.ok(score(cb) >= 60);
    const fr = young();
    fr.fraudReports = fr.decayed.fraudReports = 1;
    assert.ok(score(fr) >= 60);
    const vet = veteranProfile();
    vet.chargebacks = vet.decayed.chargebacks = 2;
    assert.ok(score(vet) >= 60);
    const vetFraud = veteranProfile();
    vetFraud.fraudReports = vetFraud.decayed.fraudReports = 2;
    assert.ok(score(vetFraud) >= 85);
  });
});

describe('scoring model: signals', () => {
  test('a future decayed.at never amplifies; one half-life halves decayed counts', () => {
    assert.equal(decayFactor(NOW + DAY, NOW, 180), 1);
    assert.equal(decayFactor(NOW - 180 * DAY, NOW, 180), 0.5);
    const p = freshProfile();
    p.known = true;
    p.decayed = { ...p.decayed, at: NOW - 180 * DAY, chargebacks: 2 };
    assert.equal(signal(p, 'chargebacks')?.value, 1); // log2(1 + 2·½)
    p.decayed.at = NOW + 10 * DAY;
    assert.equal(signal(p, 'chargebacks')?.value, Math.round(Math.log2(3) * 1e4) / 1e4);
  });

  test('old chargebacks weigh less than fresh ones', () => {
    const fresh = veteranProfile();
    fresh.decayed.chargebacks = 1;
    const old = structuredClone(fresh);
    old.decayed.at = NOW - 720 * DAY;
    assert.ok(score(old) < score(fresh));
  });

  test('dispute rate: the Beta-smoothed rate in excess of the prior mean', () => {
    const p = freshProfile();
    p.decayed.tradesCompleted = 10;
    p.decayed.disputesLost = 4;
    p.tradesCompleted = 10;
    p.disputesLost = 4;
    // (4 + 1) / (10 + 1 + 9) − 1 / (1 + 9)
    assert.equal(signal(p, 'dispute_rate')?.value, 0.15);
    assert.equal(
      signal(p, 'dispute_rate')?.description,
      '4 lost disputes out of 10 trades, more than the 10% expected',
    );
    // exactly the prior's rate: nothing
    p.decayed.disputesLost = 1;
    assert.equal(signal(p, 'dispute_rate'), undefined);
  });

  test('a clean record never adds dispute risk (issue 18: "0 lost disputes out of 7 trades" was +0.65)', () => {
    const seven = freshProfile();
    seven.known = true;
    seven.firstSeenAt = NOW - 30 * DAY;
    seven.tradesCompleted = seven.decayed.tradesCompleted = 7;
    assert.equal(signal(seven, 'dispute_rate'), undefined);
    assert.equal(signal(freshProfile(), 'dispute_rate'), undefined, 'a newcomer carries no prior as risk');
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, (p, r, policy) => {
        const clean = structuredClone(p);
        clean.disputesLost = 0;
        clean.decayed.disputesLost = 0;
        const s = computeSignals(clean, r, policy, NOW).find((x) => x.name === 'dispute_rate');
        assert.equal(s, undefined, `clean record scored dispute_rate ${s?.value}`);
      }),
      RUNS,
    );
  });

  test('dispute_rate is the smoothed rate above the prior mean: never negative, present only above it', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, (p, r, policy) => {
        const s = computeSignals(p, r, policy, NOW).find((x) => x.name === 'dispute_rate');
        const f = decayFactor(p.decayed.at, NOW, policy.decayHalfLifeDays);
        const nonNegative = (x: number) => (Number.isFinite(x) && x > 0 ? x : 0);
        const lost = nonNegative(p.decayed.disputesLost) * f;
        const trades = nonNegative(p.decayed.tradesCompleted) * f;
        const { alpha, beta } = policy.disputePrior;
        const excess = (lost + alpha) / (trades + alpha + beta) - alpha / (alpha + beta);
        const expected = Math.round(Math.max(0, excess) * 1e4) / 1e4;
        // a signal whose contribution is 0 (a zero, or subnormal, weight) is not listed
        assert.equal(s?.value ?? 0, policy.weights.dispute_rate * expected === 0 ? 0 : expected);
      }),
      RUNS,
    );
  });

  test('account age comes from account_created_at when valid, else first sight', () => {
    const p = freshProfile();
    assert.equal(signal(p, 'new_account')?.value, 1);
    const old = { ...REQ, context: { account_created_at: new Date(NOW - 400 * DAY).toISOString() } };
    assert.equal(signal(p, 'new_account', old), undefined);
    const bad = { ...REQ, context: { account_created_at: 'yesterday' } };
    assert.equal(signal(p, 'new_account', bad)?.value, 1);
    p.known = true;
    p.firstSeenAt = NOW - 45 * DAY;
    assert.equal(signal(p, 'new_account')?.value, 0.5);
  });

  test('request-derived signals', () => {
    const p = veteranProfile();
    const ctx = (context: ScoreRequest['context']) => ({ ...REQ, context });
    assert.equal(signal(p, 'new_counterparty'), undefined);
    p.counterpartyTrades = 0;
    assert.equal(signal(p, 'new_counterparty')?.value, 1);
    assert.equal(signal(p, 'payment_method_risk', ctx({ payment_method: 'card' }))?.value, 0.8);
    assert.equal(signal(p, 'cross_border', ctx({ country: 'NG', counterparty_country: 'ng' })), undefined);
    assert.equal(signal(p, 'cross_border', ctx({ country: 'NG', counterparty_country: 'GB' }))?.value, 1);
    assert.equal(signal(p, 'cross_border', ctx({ country: 'NG' })), undefined);
    p.linkedFlaggedEntities = 7;
    assert.equal(signal(p, 'linked_flagged_entities')?.value, DEFAULT_POLICY.linkedFlaggedCap);
  });

  test('amount: only upward deviation from own history counts; no history: the tier limit, or a mild value without one', () => {
    const p = veteranProfile();
    assert.equal(signal(p, 'amount_vs_history', { ...REQ, amount: 5 }), undefined);
    // a clean veteran's top tier allows USD 1000: within it no amount risk, beyond it the smaller of the two excesses
    assert.equal(signal(p, 'amount_vs_history', { ...REQ, amount: 1000 }), undefined);
    assert.ok((signal(p, 'amount_vs_history', { ...REQ, amount: 10_000 })?.value ?? 0) > 2);
    p.chargebacks = p.decayed.chargebacks = 1;
    assert.ok(
      (signal(p, 'amount_vs_history', { ...REQ, amount: 1000 })?.value ?? 0) > 2,
      'a warning sign: the amount is judged against its own history alone',
    );
    // within the first tier's USD 250: nothing; beyond it, ln(amount / 250) / minLogStd
    assert.equal(signal(freshProfile(), 'amount_vs_history'), undefined);
    assert.equal(signal(freshProfile(), 'amount_vs_history', { ...REQ, amount: 500 })?.value, 1.3863);
    // a currency without a reference amount: not judged for a clean entity, the mild constant with a warning sign
    assert.equal(signal(freshProfile(), 'amount_vs_history', { ...REQ, currency: 'XOF' }), undefined);
    const reported = { ...freshProfile(), known: true, firstSeenAt: NOW - DAY, fraudReports: 1 };
    reported.decayed = { ...reported.decayed, fraudReports: 1 };
    assert.equal(
      signal(reported, 'amount_vs_history', { ...REQ, currency: 'XOF' })?.value,
      DEFAULT_POLICY.amount.noHistoryValue,
    );
  });

  test('velocity: a burst far above the entity norm is flagged, its usual pace is not', () => {
    const p = veteranProfile();
    assert.equal(signal(p, 'velocity_trades'), undefined);
    assert.equal(signal(p, 'velocity_volume'), undefined);
    p.velocity = { tradesLastHour: 15, tradesLastDay: 40, volumeLastDay: 4000 };
    assert.ok((signal(p, 'velocity_trades')?.value ?? 0) > 1);
    assert.ok((signal(p, 'velocity_volume')?.value ?? 0) > 1);
  });
});

describe('riskLevelFor', () => {
  test('default boundaries', () => {
    const t = DEFAULT_POLICY.thresholds;
    const cases: [number, string][] = [
      [0, 'low'],
      [29, 'low'],
      [30, 'medium'],
      [59, 'medium'],
      [60, 'high'],
      [84, 'high'],
      [85, 'critical'],
      [100, 'critical'],
    ];
    for (const [s, level] of cases) assert.equal(riskLevelFor(s, t), level, `score ${s}`);
  });
});
