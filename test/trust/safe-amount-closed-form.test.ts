// safe_amount's closed form (issue 42, item 4; src/trust/safe-amount-closed.ts): the same answer as
// the bisection it replaces, on every input tried, and the answer the whole grid gives.
// - against the bisection: safeAmountByBisection, the same code without the closed form, on
//   market-like entities in currencies of 0, 2, 3 and 8 decimals, amounts from a few minor units to
//   millions, policies with other amount weights, thresholds, bias, amount settings, shapes, pairs;
// - against the whole grid: small grids scanned unit by unit with the full model's score (every
//   unit's score, so no monotonicity is assumed); larger ones by the answer's defining property
//   (a below `high`, a + one unit at or above it) and the score on both sides of it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { replayScore } from '../../src/model/arithmetic.ts';
import { DEFAULT_NEW_ACCOUNTS } from '../../src/model/new-accounts.ts';
import { prepare, signalValues } from '../../src/model/signal-model.ts';
import type { EntityProfile, ScoreRequest } from '../../src/model/types.ts';
import {
  MAX_UNITS,
  safeAmount,
  safeAmountByBisection,
  safeAmountFrom,
  type SafeAmountPaths,
} from '../../src/trust/safe-amount.ts';
import { contextArb, NOW, veteranProfile } from '../helpers/profiles.ts';
import { marketPolicyArb, marketProfileArb } from '../helpers/market-profiles.ts';
import { referenceSafeAmount } from '../helpers/reference-model.ts';

/** ISO 4217 minor units (the standard's table), crypto to 8 (docs/decisions.md): not the code's lookup. */
const DIGITS: Readonly<Record<string, number>> = { XOF: 0, JPY: 0, USD: 2, EUR: 2, NGN: 2, BHD: 3, BTC: 8, USDT: 8 };
const CURRENCIES = Object.keys(DIGITS);
const AMOUNT_SIGNALS = ['amount_vs_history', 'cash_out_burst', 'new_counterparty_large_trade'] as const;

/** The full model's score at an amount (the values evaluate computes, summed by scoreValues). */
const scoreAt = (p: EntityProfile, r: ScoreRequest, policy: Policy, amount: number) =>
  replayScore(policy, signalValues(p, { ...r, amount }, policy, NOW));

/** Market-like entities, half of them trading with a stranger (new_counterparty_large_trade in play). */
const profileArb: fc.Arbitrary<EntityProfile> = fc
  .tuple(marketProfileArb, fc.boolean())
  .map(([p, stranger]) => (stranger ? { ...p, counterpartyTrades: 0 } : p));

const paths = (): SafeAmountPaths => ({ closed: 0, ends: 0, bisection: 0, exactBisection: 0 });

const requestArb = (currencies: readonly string[]): fc.Arbitrary<ScoreRequest> =>
  fc.record({
    entity_id: fc.constant('e1'),
    amount: fc.constant(100),
    currency: fc.constantFrom(...currencies),
    context: contextArb,
  });

/** Other amount weights (the default's times 0.25 to 3, now and then 0), thresholds, bias and amount settings. */
const amountPolicyArb: fc.Arbitrary<Policy> = fc
  .record({
    base: marketPolicyArb,
    bias: fc.double({ min: -3.5, max: -2, noNaN: true }),
    factors: fc.tuple(
      ...AMOUNT_SIGNALS.map(() =>
        fc.oneof({ weight: 4, arbitrary: fc.double({ min: 0.25, max: 3, noNaN: true }) }, fc.constant(0)),
      ),
    ),
    high: fc.integer({ min: 30, max: 80 }),
    amount: fc.record({
      toleranceSigma: fc.double({ min: 0, max: 2, noNaN: true }),
      minLogStd: fc.double({ min: 0.2, max: 1, noNaN: true }),
      cap: fc.double({ min: 1, max: 6, noNaN: true }),
      noHistoryValue: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  })
  .map(({ base, bias, factors, high, amount }) => ({
    ...base,
    bias,
    amount,
    thresholds: { medium: 1, high, critical: 99 },
    weights: {
      ...base.weights,
      ...Object.fromEntries(AMOUNT_SIGNALS.map((n, i) => [n, base.weights[n] * factors[i]!])),
    },
  }));

/** Shapes on the amount signals (rising, and some with a flat piece) and pairs that move with the amount. */
const shapedPolicyArb: fc.Arbitrary<Policy> = fc
  .record({
    base: amountPolicyArb,
    shapes: fc.array(
      fc.tuple(
        fc.constantFrom(...AMOUNT_SIGNALS),
        fc.uniqueArray(fc.integer({ min: 1, max: 39_999 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 4, noNaN: true })), {
          minLength: 3,
          maxLength: 3,
        }),
      ),
      { maxLength: 2 },
    ),
    pairs: fc.subarray([
      { signals: ['amount_vs_history', 'cash_out_burst'] as const, weight: 0.7 },
      { signals: ['new_counterparty_large_trade', 'payment_method_risk'] as const, weight: 1.3 },
      { signals: ['cash_out_burst', 'new_account'] as const, weight: 0.4 },
    ]),
  })
  .map(({ base, shapes, pairs }) => ({
    ...base,
    shapes: Object.fromEntries(
      shapes.map(([name, knots, slopes]) => {
        const sorted = [...knots].sort((a, b) => a - b).map((k) => k / 1e4);
        return [name, { knots: sorted, slopes: slopes.slice(0, sorted.length) }];
      }),
    ),
    pairs: pairs.map((p) => ({ signals: [...p.signals], weight: p.weight })) as Policy['pairs'],
  }));

describe('safe_amount closed form: the same answer as the bisection', () => {
  test('market-like entities, every currency, policies of other weights and thresholds', () => {
    fc.assert(
      fc.property(profileArb, requestArb(CURRENCIES), amountPolicyArb, (p, r, policy) => {
        const prepared = prepare(p, r, policy, NOW);
        const answer = safeAmountFrom(prepared, r.currency, policy);
        assert.equal(answer, safeAmountByBisection(prepared, r.currency, policy));
        assert.equal(answer, referenceSafeAmount(p, r, policy, NOW));
      }),
      { numRuns: 400 },
    );
  });

  test('shaped amount signals and pairs that move with the amount', () => {
    fc.assert(
      fc.property(profileArb, requestArb(CURRENCIES), shapedPolicyArb, (p, r, policy) => {
        const prepared = prepare(p, r, policy, NOW);
        assert.equal(safeAmountFrom(prepared, r.currency, policy), safeAmountByBisection(prepared, r.currency, policy));
      }),
      { numRuns: 300 },
    );
  });

  test('a step inside the grid is found by the closed form, not the bisection, for plain weights', () => {
    fc.assert(
      fc.property(profileArb, requestArb(CURRENCIES), amountPolicyArb, (p, r, policy) => {
        const counted = paths();
        safeAmountFrom(prepare(p, r, policy, NOW), r.currency, policy, counted);
        assert.equal(counted.bisection, 0, JSON.stringify(counted));
      }),
      { numRuns: 300 },
    );
  });

  test('a shape with a flat piece keeps the bisection (its sum may wobble by an ulp), with the same answer', () => {
    const p = veteranProfile();
    p.counterpartyTrades = 0;
    const r: ScoreRequest = { entity_id: 'e1', amount: 1, currency: 'USD', context: { counterparty_id: 'cp' } };
    const flat = { ...DEFAULT_POLICY, shapes: { amount_vs_history: { knots: [1, 2], slopes: [0, 0.5] } } };
    const counted = paths();
    const answer = safeAmountFrom(prepare(p, r, flat, NOW), 'USD', flat, counted);
    assert.deepEqual(counted, { closed: 0, ends: 0, bisection: 1, exactBisection: 0 });
    assert.equal(answer, safeAmountByBisection(prepare(p, r, flat, NOW), 'USD', flat));
    const rising = { ...DEFAULT_POLICY, shapes: { amount_vs_history: { knots: [1, 2], slopes: [0.2, 0.5] } } };
    const counted2 = paths();
    safeAmountFrom(prepare(p, r, rising, NOW), 'USD', rising, counted2);
    assert.equal(counted2.closed, 1);
  });

  test('a satoshi on a grid of 10^15 (ten million USDT): the closed form, still exact to the unit', () => {
    // ln of such an amount is known to a few 10⁻¹⁵, a few satoshis there: the candidate is walked to the step.
    const p = veteranProfile();
    p.amountStats = { n: 200, logMean: Math.log(1e6), logM2: 199 * 2.25, volume: 2e8 };
    p.velocity = { tradesLastHour: 3, tradesLastDay: 6, volumeLastDay: 6e6 };
    p.counterpartyTrades = 0;
    const r: ScoreRequest = { entity_id: 'e1', amount: 1, currency: 'USDT', context: { counterparty_id: 'cp' } };
    const prepared = prepare(p, r, DEFAULT_POLICY, NOW);
    const counted = paths();
    const safe = safeAmountFrom(prepared, 'USDT', DEFAULT_POLICY, counted);
    assert.equal(counted.closed, 1);
    assert.equal(safe, 10_480_590.2618244);
    assert.equal(safe, safeAmountByBisection(prepared, 'USDT', DEFAULT_POLICY));
    assert.ok(scoreAt(p, r, DEFAULT_POLICY, 10_480_590.2618244) < 60);
    assert.ok(scoreAt(p, r, DEFAULT_POLICY, 10_480_590.26182441) >= 60);
  });
});

/** Entities whose whole grid is small: typical trades and tier limits of a few dozen minor units. */
const smallGridArb = fc
  .record({
    profile: profileArb,
    request: requestArb(CURRENCIES),
    policy: amountPolicyArb,
    history: fc.option(
      fc.record({
        n: fc.integer({ min: 1, max: 300 }),
        typicalUnits: fc.double({ min: 1, max: 40, noNaN: true }),
        std: fc.double({ min: 0, max: 0.6, noNaN: true }),
      }),
      { nil: null },
    ),
    referenceUnits: fc.option(fc.double({ min: 1, max: 60, noNaN: true }), { nil: null }),
    minLogStd: fc.double({ min: 0.2, max: 0.6, noNaN: true }),
    cap: fc.double({ min: 0.5, max: 4, noNaN: true }),
    toleranceSigma: fc.double({ min: 0, max: 1.5, noNaN: true }),
  })
  .map(({ profile, request, policy, history, referenceUnits, ...amount }) => {
    const scale = 10 ** DIGITS[request.currency]!;
    const referenceAmounts: Record<string, number> = { ...DEFAULT_NEW_ACCOUNTS.referenceAmounts };
    delete referenceAmounts[request.currency];
    if (referenceUnits !== null) referenceAmounts[request.currency] = referenceUnits / scale;
    const amountStats = history
      ? {
          n: history.n,
          logMean: Math.log(history.typicalUnits / scale),
          logM2: (history.n - 1) * history.std ** 2,
          volume: (history.n * history.typicalUnits) / scale,
        }
      : { n: 0, logMean: 0, logM2: 0, volume: 0 };
    // the day's volume in the same units as the history (the market profile's is of its own history)
    const volumeLastDay = profile.velocity.tradesLastDay * Math.exp(amountStats.logMean);
    return {
      profile: { ...profile, amountStats, velocity: { ...profile.velocity, volumeLastDay } },
      request,
      policy: {
        ...policy,
        amount: { ...policy.amount, ...amount },
        newAccounts: { ...DEFAULT_NEW_ACCOUNTS, referenceAmounts },
      },
    };
  });

/** Every unit of the grid up to here is scanned; beyond it the score must already be the unbounded amount's. */
const SCAN = 2500;

describe('safe_amount closed form: the answer the whole grid gives', () => {
  test('small grids: every minor unit scored with the full model', () => {
    fc.assert(
      fc.property(smallGridArb, ({ profile: p, request: r, policy }) => {
        const scale = 10 ** DIGITS[r.currency]!;
        const high = policy.thresholds.high;
        const scores = Array.from({ length: SCAN }, (_, i) => scoreAt(p, r, policy, (i + 1) / scale));
        // The grid beyond SCAN scores as an unbounded amount (every amount signal at its cap).
        fc.pre(scores[SCAN - 1] === scoreAt(p, r, policy, Number.MAX_VALUE));
        const below = scores.map((s) => s < high);
        const last = below.lastIndexOf(true);
        // Below `high` is a prefix of the grid: the score never falls as the amount grows.
        assert.equal(below.indexOf(false), below.includes(false) ? last + 1 : -1);
        const expected = below[SCAN - 1] ? null : last + 1;
        const safe = safeAmount(p, r, policy, NOW);
        assert.equal(safe === null ? null : Math.round(safe * scale), expected);
        if (safe !== null) assert.equal(safe, expected! / scale);
      }),
      { numRuns: 60 },
    );
  });

  test('larger grids: the answer is the step, and the score stays on its side of it', () => {
    const fraction = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        profileArb,
        requestArb(CURRENCIES),
        fc.oneof(amountPolicyArb, shapedPolicyArb),
        fraction,
        fraction,
        (p, r, policy, x, y) => {
          const safe = safeAmount(p, r, policy, NOW);
          const scale = 10 ** DIGITS[r.currency]!;
          const high = policy.thresholds.high;
          const score = (units: number) => scoreAt(p, r, policy, units / scale);
          if (safe === null) {
            assert.ok(scoreAt(p, r, policy, Number.MAX_VALUE) < high);
            return;
          }
          const units = Math.round(safe * scale);
          assert.equal(safe, units / scale, `${safe} is not on the grid`);
          if (units === 0) {
            assert.ok(score(1) >= high);
            return;
          }
          assert.ok(score(units) < high, `${safe} reaches ${high}`);
          if (units < MAX_UNITS) assert.ok(score(units + 1) >= high, `one unit above ${safe} is below ${high}`);
          // samples on both sides, spread over the orders of magnitude
          assert.ok(score(Math.max(1, Math.floor(units ** x))) < high);
          if (units < MAX_UNITS) assert.ok(score(Math.ceil((units + 1) * Math.exp(y * 10))) >= high);
        },
      ),
      { numRuns: 300 },
    );
  });
});
