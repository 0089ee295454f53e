// New-account tiers (docs/signals.md, "New accounts"): a clean entity gets a safe_amount of at
// least its tier's limit and scores below high within it; the limit grows with age and completed
// trades; a warning sign can still take safe_amount to 0; an unlisted currency has no limit.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { validatePolicy } from '../../src/model/policy-document.ts';
import { DEFAULT_NEW_ACCOUNTS, newAccountsOf } from '../../src/model/new-accounts.ts';
import { prepare, scoreEntity } from '../../src/model/signal-model.ts';
import { safeAmount, scoreForAmount } from '../../src/trust/safe-amount.ts';
import { tierFor } from '../../src/model/tiers.ts';
import { PAYMENT_METHODS, type EntityProfile, type ScoreRequest } from '../../src/model/types.ts';
import { DAY, freshProfile, NOW, profileArb, requestArb } from '../helpers/profiles.ts';

const HIGH = DEFAULT_POLICY.thresholds.high;
const LISTED = ['USD', 'EUR', 'NGN', 'KES', 'INR', 'BRL', 'JPY', 'BTC', 'ETH', 'USDT'] as const;

/** Profiles with no warning sign: no negative history, no burst, no dormancy, no shared identifier. */
const cleanProfileArb: fc.Arbitrary<EntityProfile> = fc
  .record({
    known: fc.boolean(),
    ageDays: fc.double({ min: 0, max: 1000, noNaN: true }),
    trades: fc.nat({ max: 500 }),
    decayedShare: fc.double({ min: 0.3, max: 1, noNaN: true }),
    logMean: fc.double({ min: -8, max: 15, noNaN: true }),
    logVar: fc.double({ min: 0, max: 4, noNaN: true }),
    counterpartyTrades: fc.option(fc.nat({ max: 20 }), { nil: null }),
    lastTradeDaysAgo: fc.double({ min: 0, max: 29, noNaN: true }),
  })
  .map((g) => {
    const p = freshProfile();
    p.known = g.known || g.trades > 0;
    p.firstSeenAt = p.known ? NOW - g.ageDays * DAY : null;
    p.tradesCompleted = p.known ? g.trades : 0;
    p.decayed.tradesCompleted = p.tradesCompleted * g.decayedShare;
    p.lastTradeAt = p.tradesCompleted > 0 ? NOW - Math.min(g.lastTradeDaysAgo, g.ageDays) * DAY : null;
    if (p.tradesCompleted > 0)
      p.amountStats = {
        n: p.tradesCompleted,
        logMean: g.logMean,
        logM2: g.logVar * Math.max(0, p.tradesCompleted - 1),
        volume: p.tradesCompleted * Math.exp(g.logMean),
      };
    p.counterpartyTrades = g.counterpartyTrades;
    return p;
  });

const cleanRequestArb: fc.Arbitrary<ScoreRequest> = fc.record({
  entity_id: fc.constant('e1'),
  amount: fc.constant(1),
  currency: fc.constantFrom(...LISTED),
  context: fc.record(
    {
      counterparty_id: fc.constant('cp1'),
      payment_method: fc.constantFrom(...PAYMENT_METHODS),
      country: fc.constantFrom('NG', 'GB'),
      counterparty_country: fc.constantFrom('NG', 'US'),
      account_created_at: fc.integer({ min: NOW - 1000 * DAY, max: NOW }).map((t) => new Date(t).toISOString()),
    },
    { requiredKeys: [] },
  ),
});

const limitOf = (p: EntityProfile, r: ScoreRequest) => prepare(p, r, DEFAULT_POLICY, NOW).terms.limit;

describe('new-account tiers: the guarantees (default policy)', () => {
  test('any clean entity, any context, a listed currency: safe_amount ≥ its tier limit and the limit itself scores below high', () => {
    fc.assert(
      fc.property(cleanProfileArb, cleanRequestArb, (p, r) => {
        const prepared = prepare(p, r, DEFAULT_POLICY, NOW);
        assert.equal(prepared.terms.clean, true, 'the generator made a profile with a warning sign');
        const limit = prepared.terms.limit;
        assert.ok(limit > 0);
        const score = scoreForAmount(p, r, DEFAULT_POLICY, NOW, limit);
        assert.ok(score < HIGH, `scored ${score} at its limit ${limit} ${r.currency}`);
        const safe = safeAmount(p, r, DEFAULT_POLICY, NOW);
        assert.ok(safe === null || safe >= limit * (1 - 1e-12) - 1e-8, `safe_amount ${safe} under the limit ${limit}`);
      }),
      { numRuns: 400 },
    );
  });

  test("an older account or more completed trades never lowers the limit (any policy's tiers grow together)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LISTED),
        fc.double({ min: 0, max: 500, noNaN: true }),
        fc.double({ min: 0, max: 500, noNaN: true }),
        fc.nat({ max: 100 }),
        fc.nat({ max: 100 }),
        (cur, age, moreAge, trades, moreTrades) => {
          const base = tierFor(DEFAULT_POLICY, cur, age, trades);
          const older = tierFor(DEFAULT_POLICY, cur, age + moreAge, trades + moreTrades);
          assert.ok(older.limit >= base.limit && older.index >= base.index);
        },
      ),
    );
  });

  test('an older account (context.account_created_at) never raises the score', () => {
    fc.assert(
      fc.property(
        profileArb,
        requestArb,
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 1, max: 400 }),
        (p, r, ageDays, moreDays) => {
          const at = (days: number) =>
            scoreEntity(
              p,
              { ...r, context: { ...r.context, account_created_at: new Date(NOW - days * DAY).toISOString() } },
              DEFAULT_POLICY,
              NOW,
            ).score;
          assert.ok(at(ageDays + moreDays) <= at(ageDays));
        },
      ),
      { numRuns: 300 },
    );
  });

  test("more chargebacks never lower the score, tiers or not (losing the tier's excuse only adds amount risk)", () => {
    fc.assert(
      fc.property(fc.oneof(cleanProfileArb, profileArb), requestArb, fc.integer({ min: 1, max: 5 }), (p, r, extra) => {
        const worse = structuredClone(p);
        worse.chargebacks += extra;
        worse.decayed.chargebacks += extra;
        assert.ok(scoreEntity(worse, r, DEFAULT_POLICY, NOW).score >= scoreEntity(p, r, DEFAULT_POLICY, NOW).score);
      }),
      { numRuns: 300 },
    );
  });
});

describe('new-account tiers: worked examples', () => {
  const newcomer = () => ({ ...freshProfile(), counterpartyTrades: 0 });
  const bank = (amount: number, currency = 'USD'): ScoreRequest => ({
    entity_id: 'e1',
    amount,
    currency,
    context: { counterparty_id: 'cp', payment_method: 'bank_transfer' },
  });

  test('a clean never-seen entity, bank transfer, new counterparty, USD 200: low, safe_amount 399.18 (limit 250)', () => {
    const r = scoreEntity(newcomer(), bank(200), DEFAULT_POLICY, NOW);
    assert.equal(r.score, 21);
    assert.equal(r.riskLevel, 'low');
    assert.equal(limitOf(newcomer(), bank(200)), 250);
    assert.equal(safeAmount(newcomer(), bank(200), DEFAULT_POLICY, NOW), 399.18);
  });

  test('tiers by age × completed trades: 250, then 500 at 30 days and 3 trades, 1000 at 60 days and 10', () => {
    assert.deepEqual(
      [0, 29.9, 30, 59, 60, 400].map((d) => tierFor(DEFAULT_POLICY, 'USD', d, 3).limit),
      [250, 250, 500, 500, 500, 500],
    );
    assert.deepEqual(
      [0, 2, 3, 9, 10].map((n) => tierFor(DEFAULT_POLICY, 'USD', 90, n).limit),
      [250, 250, 500, 500, 1000],
    );
    assert.equal(tierFor(DEFAULT_POLICY, 'NGN', 90, 10).limit, 1_500_000);
    assert.equal(tierFor(DEFAULT_POLICY, 'BTC', 0, 0).limit, 0.0025);
  });

  test('a warning sign can still take safe_amount to 0: two chargebacks on a card newcomer', () => {
    const p = newcomer();
    p.known = true;
    p.firstSeenAt = NOW - 5 * DAY;
    p.chargebacks = p.decayed.chargebacks = 2;
    const r: ScoreRequest = {
      entity_id: 'e1',
      amount: 10,
      currency: 'USD',
      context: { counterparty_id: 'cp', payment_method: 'card' },
    };
    assert.equal(prepare(p, r, DEFAULT_POLICY, NOW).terms.clean, false);
    assert.equal(safeAmount(p, r, DEFAULT_POLICY, NOW), 0);
  });

  test('a dispute lost for a fraud is a warning sign on its own: the record is not clean and the tier no longer excuses the amount', () => {
    const r: ScoreRequest = {
      entity_id: 'e1',
      amount: 240,
      currency: 'USD',
      context: { counterparty_id: 'cp', payment_method: 'bank_transfer' },
    };
    const clean = newcomer();
    clean.known = true;
    clean.firstSeenAt = NOW - 5 * DAY;
    const lost = structuredClone(clean);
    lost.decayed.fraudulentLosses = 1;
    assert.equal(prepare(clean, r, DEFAULT_POLICY, NOW).terms.clean, true);
    assert.equal(prepare(lost, r, DEFAULT_POLICY, NOW).terms.clean, false);
    assert.ok(scoreEntity(lost, r, DEFAULT_POLICY, NOW).score > scoreEntity(clean, r, DEFAULT_POLICY, NOW).score);
  });

  test('an unlisted currency has no tier limit: without history the amount is not judged; noHistoryValue only with a warning sign', () => {
    assert.equal(limitOf(newcomer(), bank(100, 'XOF')), 0);
    const value = (p: EntityProfile, amount: number) =>
      scoreEntity(p, bank(amount, 'XOF'), DEFAULT_POLICY, NOW).signals.find((s) => s.name === 'amount_vs_history')
        ?.value;
    assert.equal(value(newcomer(), 1), undefined);
    assert.equal(value(newcomer(), 1e9), undefined);
    // σ(−2.7 + 0.6 + 0.2 + 0.3 + 0.3) = 21, whatever the amount: null
    assert.equal(scoreEntity(newcomer(), bank(1e9, 'XOF'), DEFAULT_POLICY, NOW).score, 21);
    assert.equal(safeAmount(newcomer(), bank(100, 'XOF'), DEFAULT_POLICY, NOW), null);
    const reported = newcomer();
    reported.known = true;
    reported.firstSeenAt = NOW - DAY;
    reported.fraudReports = reported.decayed.fraudReports = 1;
    assert.equal(value(reported, 1), DEFAULT_POLICY.amount.noHistoryValue);
    assert.equal(value(reported, 1e9), DEFAULT_POLICY.amount.noHistoryValue);
  });

  test('any clean never-seen entity in a currency without a reference amount: safe_amount is never 0', () => {
    fc.assert(
      fc.property(cleanRequestArb, fc.constantFrom('XOF', 'XAF', 'UZS'), (r, currency) => {
        const safe = safeAmount(newcomer(), { ...r, currency }, DEFAULT_POLICY, NOW);
        assert.equal(safe, null);
      }),
      { numRuns: 100 },
    );
  });
});

describe('new-account tiers: the policy document', () => {
  test('a policy document that predates the tiers still validates and gets the default tiers', () => {
    const old = JSON.parse(JSON.stringify({ ...DEFAULT_POLICY, version: 'old-2026-11-25.3' })) as Policy;
    delete old.newAccounts;
    const policy = validatePolicy(old);
    assert.deepEqual(newAccountsOf(policy), DEFAULT_NEW_ACCOUNTS);
    assert.equal(tierFor(policy, 'USD', 0, 0).limit, 250);
  });

  test('tiers must grow together and start at nothing; reference amounts are positive, per currency code', () => {
    const withTiers = (newAccounts: unknown) => ({ ...JSON.parse(JSON.stringify(DEFAULT_POLICY)), newAccounts });
    assert.throws(
      () =>
        validatePolicy(
          withTiers({ ...DEFAULT_NEW_ACCOUNTS, tiers: [{ minAgeDays: 1, minCompletedTrades: 0, limitMultiple: 1 }] }),
        ),
      /newAccounts\/tiers\/0: the first tier/,
    );
    assert.throws(
      () =>
        validatePolicy(
          withTiers({
            ...DEFAULT_NEW_ACCOUNTS,
            tiers: [
              { minAgeDays: 0, minCompletedTrades: 0, limitMultiple: 1 },
              { minAgeDays: 30, minCompletedTrades: 3, limitMultiple: 0.5 },
            ],
          }),
        ),
      /newAccounts\/tiers\/1\/limitMultiple: must be >= the previous tier's \(1\)/,
    );
    assert.throws(
      () =>
        validatePolicy(
          withTiers({
            ...DEFAULT_NEW_ACCOUNTS,
            tiers: [
              { minAgeDays: 0, minCompletedTrades: 0, limitMultiple: 1 },
              { minAgeDays: 30, minCompletedTrades: 0, limitMultiple: 2 },
              { minAgeDays: 20, minCompletedTrades: 5, limitMultiple: 2 },
            ],
          }),
        ),
      /newAccounts\/tiers\/2\/minAgeDays/,
    );
    assert.throws(
      () => validatePolicy(withTiers({ ...DEFAULT_NEW_ACCOUNTS, referenceAmounts: { USD: 0 } })),
      /referenceAmounts/,
    );
    assert.throws(
      () => validatePolicy(withTiers({ ...DEFAULT_NEW_ACCOUNTS, referenceAmounts: { usd: 10 } })),
      /referenceAmounts/,
    );
    assert.throws(() => validatePolicy(withTiers({ ...DEFAULT_NEW_ACCOUNTS, extra: 1 })), /unknown field/);
  });
});
