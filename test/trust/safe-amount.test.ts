// safe_amount (docs/api.md, "Trust scoring", issue 10 item 1): exact on the currency's minor-unit grid.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { evaluate, prepare } from '../../src/model/signal-model.ts';
import { MAX_UNITS, minorUnitDigits, safeAmount, safeAmountFrom, scoreForAmount } from '../../src/trust/safe-amount.ts';
import type { EntityProfile, ScoreRequest } from '../../src/model/types.ts';
import { anyPolicy, freshProfile, NOW, profileArb, requestArb, veteranProfile } from '../helpers/profiles.ts';
import { referenceSafeAmount, referenceScoreAt } from '../helpers/reference-model.ts';
import { marketPolicyArb, marketProfileArb } from '../helpers/market-profiles.ts';

const REQ: ScoreRequest = { entity_id: 'e1', amount: 100, currency: 'USD', context: {} };
const at = (p: EntityProfile, r: ScoreRequest, policy: Policy, amount: number) =>
  scoreForAmount(p, r, policy, NOW, amount);

/** Whether x is the double nearest to a whole number of minor units (k / 10^digits). */
function onGrid(x: number, digits: number): boolean {
  return x === Math.round(x * 10 ** digits) / 10 ** digits;
}

describe('safe_amount: properties', () => {
  test('at safe_amount the score is below high; one minor unit more reaches it (unless null or 0)', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, (p, r, policy) => {
        const safe = safeAmount(p, r, policy, NOW);
        const high = policy.thresholds.high;
        const digits = minorUnitDigits(r.currency, policy.cryptoAssets);
        const unit = 10 ** -digits;
        if (safe === null) {
          assert.ok(at(p, r, policy, 1e15) < high, 'null, yet a huge amount reaches high');
          assert.ok(at(p, r, policy, unit) < high);
        } else if (safe === 0) {
          assert.ok(at(p, r, policy, unit) >= high, '0, yet the smallest amount stays below high');
        } else {
          assert.ok(safe > 0 && onGrid(safe, digits), `${safe} is not on the ${digits}-decimal grid`);
          assert.ok(at(p, r, policy, safe) < high, `score at safe_amount ${safe} reaches ${high}`);
          const units = Math.round(safe * 10 ** digits);
          // Beyond the grid's end the largest representable amount is returned (documented).
          if (units < MAX_UNITS)
            assert.ok(
              at(p, r, policy, (units + 1) / 10 ** digits) >= high,
              `one unit above ${safe} still below ${high}`,
            );
        }
      }),
      { numRuns: 400 },
    );
  });

  test('the same answer as a plain search of the whole grid on the reference score', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, (p, r, policy) => {
        const expected = referenceSafeAmount(p, r, policy, NOW);
        assert.equal(safeAmount(p, r, policy, NOW), expected);
        // From the prepared terms the score was computed with, handed on by evaluate.
        assert.equal(safeAmountFrom(evaluate(p, r, policy, NOW).prepared, r.currency, policy), expected);
      }),
      { numRuns: 1000 },
    );
  });

  test('the same answer as the plain search for entities as a marketplace shows them (the step in play)', () => {
    fc.assert(
      fc.property(marketProfileArb, requestArb, marketPolicyArb, (p, r, policy) => {
        assert.equal(safeAmount(p, r, policy, NOW), referenceSafeAmount(p, r, policy, NOW));
      }),
      { numRuns: 1000 },
    );
  });

  test('the reference score is the model score at every amount, and never falls as the amount grows', () => {
    const amount = fc.double({ min: 1e-8, max: 1e16, noNaN: true });
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, amount, amount, (p, r, policy, a, b) => {
        const prepared = prepare(p, r, policy, NOW);
        const [small, large] = a <= b ? [a, b] : [b, a];
        assert.equal(referenceScoreAt(prepared, policy, small), at(p, r, policy, small));
        assert.ok(referenceScoreAt(prepared, policy, small) <= referenceScoreAt(prepared, policy, large));
      }),
      { numRuns: 400 },
    );
  });

  test('amount_vs_history alone: the closed form, to one minor unit', () => {
    // Only amount_vs_history weighs, in XOF (whole francs, no reference amount, so no tier limit):
    // score = round(100·σ(b + w·v)), v = round4(clip((ln a − m)/s − 1, 0, 4)). Since Math.round rounds
    // half up, the score stays below high while b + w·v < logit((high − ½)/100), that is while
    // v < V; on the 4-decimal grid, while (ln a − m)/s − 1 < (⌈10⁴V⌉ − ½)/10⁴.
    const zero = Object.fromEntries(Object.keys(DEFAULT_POLICY.weights).map((k) => [k, 0])) as Policy['weights'];
    const params = fc.record({
      m: fc.double({ min: 0, max: Math.log(1e6), noNaN: true }),
      s: fc.double({ min: 0.5, max: 2, noNaN: true }),
      w: fc.double({ min: 0.1, max: 5, noNaN: true }),
      bias: fc.double({ min: -6, max: 2, noNaN: true }),
      high: fc.integer({ min: 2, max: 98 }),
    });
    fc.assert(
      fc.property(params, ({ m, s, w, bias, high }) => {
        const p = veteranProfile();
        p.amountStats = { n: 200, logMean: m, logM2: 199 * s * s, volume: 200 * Math.exp(m) };
        const policy = { ...DEFAULT_POLICY, bias, weights: { ...zero, amount_vs_history: w } };
        policy.thresholds = { medium: 1, high, critical: 99 };
        const v = (Math.log((high - 0.5) / 100 / (1 - (high - 0.5) / 100)) - bias) / w;
        const grid = (Math.ceil(v * 1e4) - 0.5) / 1e4;
        const expected = v > 4 ? null : v <= 0 ? 0 : Math.max(0, Math.ceil(Math.exp(m + s * (1 + grid))) - 1);
        const safe = safeAmount(p, { ...REQ, currency: 'XOF' }, policy, NOW);
        if (expected === null || safe === null) assert.equal(safe, expected);
        else assert.ok(Math.abs(safe - expected) <= 1, `safe ${safe}, closed form ${expected}`);
      }),
      { numRuns: 500 },
    );
  });

  test('does not depend on the requested amount', () => {
    fc.assert(
      fc.property(profileArb, requestArb, fc.double({ min: 1e-3, max: 1e9, noNaN: true }), (p, r, other) => {
        assert.equal(
          safeAmount(p, r, DEFAULT_POLICY, NOW),
          safeAmount(p, { ...r, amount: other }, DEFAULT_POLICY, NOW),
        );
      }),
      { numRuns: 100 },
    );
  });
});

describe('safe_amount: edge cases and worked examples', () => {
  test('veteran (200 trades of ~100 USD) with a known counterparty: null, no amount reaches high', () => {
    // amount_vs_history at its cap adds 0.8 × 4 = 3.2 to z = -2.7 - 1.08: the score tops out at 36.
    const p = veteranProfile();
    assert.equal(safeAmount(p, REQ, DEFAULT_POLICY, NOW), null);
    assert.equal(at(p, REQ, DEFAULT_POLICY, 1e12), 36);
  });

  test('the same veteran with a new counterparty on a bank transfer: 2692.91 USD (beyond its tier limit of 1000), exact to the cent', () => {
    const p = veteranProfile();
    p.counterpartyTrades = 0;
    const r = { ...REQ, context: { counterparty_id: 'cp', payment_method: 'bank_transfer' as const } };
    const safe = safeAmount(p, r, DEFAULT_POLICY, NOW);
    // clean, top tier: the amount excess is the smaller of its own (beyond ~100 and a σ) and the limit's
    assert.equal(safe, 2692.91);
    assert.ok(onGrid(safe, 2));
    assert.equal(at(p, r, DEFAULT_POLICY, 2692.91), 59);
    assert.equal(at(p, r, DEFAULT_POLICY, 2692.92), 60);
  });

  test('the same veteran in a burst (6 trades today, usually 0.5): 260.18 USD, its tier no longer excuses the amount', () => {
    const p = veteranProfile();
    p.velocity = { tradesLastHour: 3, tradesLastDay: 6, volumeLastDay: 600 };
    assert.equal(safeAmount(p, REQ, DEFAULT_POLICY, NOW), 260.18);
    assert.ok(at(p, REQ, DEFAULT_POLICY, 260.18) < 60);
    assert.ok(at(p, REQ, DEFAULT_POLICY, 260.19) >= 60);
  });

  test('no history in a currency without a reference amount: the amount plays no part, so null or 0', () => {
    // amount_vs_history is 0 (clean) or the constant noHistoryValue (a warning sign), so every amount scores alike.
    const xof = { ...REQ, currency: 'XOF' };
    assert.equal(safeAmount(freshProfile(), xof, DEFAULT_POLICY, NOW), null);
    assert.equal(at(freshProfile(), xof, DEFAULT_POLICY, 1), at(freshProfile(), xof, DEFAULT_POLICY, 1e12));
    const flagged = freshProfile();
    flagged.known = true;
    flagged.firstSeenAt = NOW - 86_400_000;
    flagged.fraudReports = flagged.decayed.fraudReports = 1;
    assert.equal(at(flagged, xof, DEFAULT_POLICY, 1), at(flagged, xof, DEFAULT_POLICY, 1e12));
  });

  test('no history, a listed currency: the amount counts beyond the tier limit only, so the safe amount exceeds it', () => {
    // first tier: USD 250; 13 within it, up to 79 at the cap (ln(a / 250) / 0.5 ≥ 4)
    assert.equal(at(freshProfile(), REQ, DEFAULT_POLICY, 250), 13);
    assert.equal(at(freshProfile(), REQ, DEFAULT_POLICY, 1e12), 79);
    assert.equal(safeAmount(freshProfile(), REQ, DEFAULT_POLICY, NOW), 1042.5);
  });

  test('no amount-dependent signal in play and the rest already high: 0', () => {
    const p = freshProfile();
    p.known = true;
    p.firstSeenAt = NOW - 10 * 86_400_000;
    p.blocklisted = true;
    assert.equal(safeAmount(p, REQ, DEFAULT_POLICY, NOW), 0);
  });

  test('a blocklisted veteran: 0 even for one cent', () => {
    const p = veteranProfile();
    p.blocklisted = true;
    assert.equal(safeAmount(p, REQ, DEFAULT_POLICY, NOW), 0);
  });

  test('amount weights at zero: the amount never matters, so null or 0 only', () => {
    const policy = {
      ...DEFAULT_POLICY,
      weights: { ...DEFAULT_POLICY.weights, amount_vs_history: 0, cash_out_burst: 0, new_counterparty_large_trade: 0 },
    };
    assert.equal(safeAmount(veteranProfile(), REQ, policy, NOW), null);
    const blocked = { ...veteranProfile(), blocklisted: true };
    assert.equal(safeAmount(blocked, REQ, policy, NOW), 0);
  });

  test('crypto currencies are quoted to 8 decimals, JPY to 0, BHD to 3, unknown digits to 2', () => {
    assert.equal(minorUnitDigits('BTC', DEFAULT_POLICY.cryptoAssets), 8);
    assert.equal(minorUnitDigits('USDT', DEFAULT_POLICY.cryptoAssets), 8);
    assert.equal(minorUnitDigits('JPY', DEFAULT_POLICY.cryptoAssets), 0);
    assert.equal(minorUnitDigits('BHD', DEFAULT_POLICY.cryptoAssets), 3);
    assert.equal(minorUnitDigits('USD', DEFAULT_POLICY.cryptoAssets), 2);
    assert.equal(minorUnitDigits('ZZZ', DEFAULT_POLICY.cryptoAssets), 2);
  });

  test('a BTC veteran (trades of ~0.002 BTC): safe amount in satoshis, exact at the boundary', () => {
    const p = veteranProfile();
    p.amountStats = { n: 200, logMean: Math.log(0.002), logM2: 199 * 0.25, volume: 0.4 };
    p.counterpartyTrades = 0;
    const r = { ...REQ, currency: 'BTC', context: { counterparty_id: 'cp', payment_method: 'crypto' as const } };
    const safe = safeAmount(p, r, DEFAULT_POLICY, NOW);
    assert.ok(safe !== null && safe > 0.002 && safe < 1, `BTC safe ${safe}`);
    assert.ok(onGrid(safe, 8));
    assert.ok(at(p, r, DEFAULT_POLICY, safe) < 60);
    assert.ok(at(p, r, DEFAULT_POLICY, (Math.round(safe * 1e8) + 1) / 1e8) >= 60);
  });

  test('a JPY veteran: whole yen', () => {
    const p = veteranProfile();
    p.amountStats = { n: 200, logMean: Math.log(15_000), logM2: 199 * 0.25, volume: 3e6 };
    p.counterpartyTrades = 0;
    const safe = safeAmount(p, { ...REQ, currency: 'JPY', context: { counterparty_id: 'cp' } }, DEFAULT_POLICY, NOW);
    assert.ok(safe !== null && Number.isInteger(safe) && safe > 15_000, `JPY safe ${safe}`);
  });

  test('a riskier context (card, young account) lowers the safe amount', () => {
    const p = veteranProfile();
    p.counterpartyTrades = 0;
    const plain = safeAmount(p, { ...REQ, context: { counterparty_id: 'cp' } }, DEFAULT_POLICY, NOW)!;
    const risky = safeAmount(
      p,
      {
        ...REQ,
        context: {
          counterparty_id: 'cp',
          payment_method: 'card',
          account_created_at: new Date(NOW - 86_400_000).toISOString(),
        },
      },
      DEFAULT_POLICY,
      NOW,
    );
    assert.ok(risky !== null && risky < plain, `${risky} vs ${plain}`);
  });

  test('a threshold beyond 2^51 minor units: the last amount of the grid, still below high', () => {
    const p = {
      ...freshProfile(),
      known: true,
      firstSeenAt: NOW - 400 * 86_400_000,
      amountStats: { n: 2, logMean: 0, logM2: 13.4, volume: 0 },
    };
    const weights = Object.fromEntries(Object.keys(DEFAULT_POLICY.weights).map((k) => [k, 0])) as Policy['weights'];
    const policy = {
      ...DEFAULT_POLICY,
      bias: 0,
      weights: { ...weights, amount_vs_history: 0.5102 },
      thresholds: { medium: 1, high: 89, critical: 99 },
    };
    const r = { ...REQ, currency: 'ETH' };
    assert.equal(safeAmount(p, r, policy, NOW), MAX_UNITS / 1e8);
    assert.ok(at(p, r, policy, MAX_UNITS / 1e8) < 89);
  });

  test('a thousand safe amounts of one entity and context agree, whatever the requested amount', () => {
    // How fast this is belongs to the bench (bench/safe-amount.ts), not to a test on a shared machine.
    const p = veteranProfile();
    p.counterpartyTrades = 0;
    const r = { ...REQ, context: { counterparty_id: 'cp', payment_method: 'bank_transfer' as const } };
    const answers = new Set<number | null>();
    for (let i = 0; i < 1000; i++) answers.add(safeAmount(p, { ...r, amount: i + 1 }, DEFAULT_POLICY, NOW));
    assert.deepEqual([...answers], [2692.91]);
  });
});
