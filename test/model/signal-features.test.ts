// The P2P features of issue 10 (src/model/features.ts, docs/signals.md "P2P patterns"): each is
// monotone in its risk input under any valid policy, with a worked example of its value.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { computeSignals, scoreEntity } from '../../src/model/signal-model.ts';
import { PAYMENT_METHODS, type EntityProfile, type ScoreRequest } from '../../src/model/types.ts';
import { anyPolicy, DAY, freshProfile, NOW, profileArb, requestArb, veteranProfile } from '../helpers/profiles.ts';

const RUNS = { numRuns: 300 };
const REQ: ScoreRequest = { entity_id: 'e1', amount: 100, currency: 'USD', context: {} };
const value = (p: EntityProfile, name: string, r: ScoreRequest = REQ, policy: Policy = DEFAULT_POLICY) =>
  computeSignals(p, r, { ...policy, weights: { ...policy.weights, [name]: 1 } }, NOW).find((s) => s.name === name)
    ?.value ?? 0;
const score = (p: EntityProfile, r: ScoreRequest, policy: Policy) => scoreEntity(p, r, policy, NOW).score;

describe('P2P features: monotonicity (any valid policy)', () => {
  test('a larger amount never lowers the score (what safe_amount relies on)', () => {
    fc.assert(
      fc.property(
        profileArb,
        requestArb,
        anyPolicy,
        fc.double({ min: 1, max: 1e6, noNaN: true }),
        (p, r, policy, k) => {
          assert.ok(score(p, { ...r, amount: r.amount * k }, policy) >= score(p, r, policy));
        },
      ),
      RUNS,
    );
  });

  test('cash_out_burst: more trades in the last day never lower the score', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, fc.integer({ min: 1, max: 500 }), (p, r, policy, k) => {
        const more = structuredClone(p);
        more.velocity.tradesLastDay += k;
        assert.ok(score(more, r, policy) >= score(p, r, policy));
      }),
      RUNS,
    );
  });

  test('dormant_reactivation: a longer gap since the last trade never lowers the score', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, fc.integer({ min: 1, max: 2000 }), (p, r, policy, days) => {
        fc.pre(p.lastTradeAt !== null && p.lastTradeAt !== undefined);
        const older = { ...p, lastTradeAt: p.lastTradeAt! - days * DAY };
        fc.pre(older.lastTradeAt > 0);
        assert.ok(score(older, r, policy) >= score(p, r, policy));
      }),
      RUNS,
    );
  });

  test('young_account_reversible_method: a younger account never lowers the score', () => {
    fc.assert(
      fc.property(
        profileArb,
        requestArb,
        anyPolicy,
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 400 }),
        (p, r, policy, a, b) => {
          const [young, old] = [Math.min(a, b), Math.max(a, b)];
          const at = (days: number) => ({
            ...r,
            context: { ...r.context, account_created_at: new Date(NOW - days * DAY).toISOString() },
          });
          assert.ok(score(p, at(young), policy) >= score(p, at(old), policy));
        },
      ),
      RUNS,
    );
  });

  test('young_account_reversible_method: a riskier payment method never lowers the score', () => {
    const byRisk = [...PAYMENT_METHODS].sort(
      (x, y) => DEFAULT_POLICY.paymentMethodRisk[x] - DEFAULT_POLICY.paymentMethodRisk[y],
    );
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, fc.nat({ max: byRisk.length - 2 }), (p, r, policy, i) => {
        const pay = (m: (typeof PAYMENT_METHODS)[number]) => ({ ...r, context: { ...r.context, payment_method: m } });
        assert.ok(score(p, pay(byRisk[i + 1]!), policy) >= score(p, pay(byRisk[i]!), policy));
      }),
      RUNS,
    );
  });

  test('shared_identifier_entities: more entities sharing an identifier never lower the score', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, fc.integer({ min: 1, max: 100 }), (p, r, policy, k) => {
        const more = { ...p, sharedIdentifierEntities: (p.sharedIdentifierEntities ?? 0) + k };
        assert.ok(score(more, r, policy) >= score(p, r, policy));
      }),
      RUNS,
    );
  });

  test('new_counterparty_large_trade: a new counterparty never scores below a known one', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, fc.integer({ min: 1, max: 100 }), (p, r, policy, k) => {
        const request = { ...r, context: { ...r.context, counterparty_id: 'cp1' } };
        assert.ok(
          score({ ...p, counterpartyTrades: 0 }, request, policy) >=
            score({ ...p, counterpartyTrades: k }, request, policy),
        );
      }),
      RUNS,
    );
  });

  test('more completed trades still never raise the score (the burst norm grows with them)', () => {
    fc.assert(
      fc.property(profileArb, requestArb, anyPolicy, fc.integer({ min: 1, max: 1000 }), (p, r, policy, k) => {
        const more = structuredClone(p);
        more.tradesCompleted += k;
        more.decayed.tradesCompleted += k;
        assert.ok(score(more, r, policy) <= score(p, r, policy));
      }),
      RUNS,
    );
  });
});

describe('P2P features: worked examples (default policy)', () => {
  test('cash_out_burst: veteran (~100 USD, σ 0.5, 0.55 trades a day) with 6 trades today, asking 500: √(2.2189 × 1.3548) = 1.7338', () => {
    const p = veteranProfile();
    p.velocity = { tradesLastHour: 3, tradesLastDay: 6, volumeLastDay: 600 };
    // excess = (ln 500 − ln 100)/0.5 − 1 = 2.2189; burst = ln(6 / (200/365 + 1)) = 1.3548
    const excess = (Math.log(500) - Math.log(100)) / 0.5 - 1;
    const burst = Math.log(6 / (200 / 365 + 1));
    assert.equal(
      value(p, 'cash_out_burst', { ...REQ, amount: 500 }),
      Math.round(Math.sqrt(excess * burst) * 1e4) / 1e4,
    );
    assert.equal(value(p, 'cash_out_burst', { ...REQ, amount: 500 }), 1.7338);
    assert.equal(value(p, 'cash_out_burst', { ...REQ, amount: 100 }), 0, 'its usual size: no cash-out');
    const calm = veteranProfile();
    assert.equal(value(calm, 'cash_out_burst', { ...REQ, amount: 500 }), 0, 'one trade today is no burst');
    assert.ok(scoreEntity(p, { ...REQ, amount: 500 }, DEFAULT_POLICY, NOW).score >= 60);
  });

  test('dormant_reactivation: last trade 120 days ago → log2(120/30) = 2; 20 days ago → 0; never traded → 0', () => {
    const p = veteranProfile();
    p.lastTradeAt = NOW - 120 * DAY;
    assert.equal(value(p, 'dormant_reactivation'), 2);
    p.lastTradeAt = NOW - 20 * DAY;
    assert.equal(value(p, 'dormant_reactivation'), 0);
    p.lastTradeAt = null;
    assert.equal(value(p, 'dormant_reactivation'), 0);
    assert.equal(
      value({ ...freshProfile(), lastTradeAt: NOW - 400 * DAY }, 'dormant_reactivation'),
      0,
      'unknown entity: cold_start speaks',
    );
  });

  test('young_account_reversible_method: a 9-day-old account paying by card → (1 − 9/90) × (0.8 − 0.3)/0.7 = 0.6429; e-wallet 0.2571; bank transfer or cash → 0', () => {
    const created = new Date(NOW - 9 * DAY).toISOString();
    const p = veteranProfile();
    const by = (payment_method: 'card' | 'e_wallet' | 'bank_transfer' | 'cash') =>
      value(p, 'young_account_reversible_method', { ...REQ, context: { payment_method, account_created_at: created } });
    assert.equal(by('card'), 0.6429);
    assert.equal(by('e_wallet'), 0.2571);
    assert.equal(by('bank_transfer'), 0, 'a new trader paying by bank transfer is not a throw-away pattern');
    assert.equal(by('cash'), 0);
    assert.equal(
      value(p, 'young_account_reversible_method', { ...REQ, context: { payment_method: 'card' } }),
      0,
      'a year-old account',
    );
  });

  test('shared_identifier_entities: 3 other holders → log2(1 + 3) = 2; capped at 31 → 5', () => {
    assert.equal(value({ ...veteranProfile(), sharedIdentifierEntities: 3 }, 'shared_identifier_entities'), 2);
    assert.equal(value({ ...veteranProfile(), sharedIdentifierEntities: 5000 }, 'shared_identifier_entities'), 5);
    assert.equal(value({ ...veteranProfile(), sharedIdentifierEntities: 0 }, 'shared_identifier_entities'), 0);
  });

  test('new_counterparty_large_trade: first trade with this counterparty at 1000 USD → (ln 10)/0.5 − 1 = 3.6052 with a warning sign, 0 within a clean tier limit; known counterparty → 0', () => {
    const clean = { ...veteranProfile(), counterpartyTrades: 0 };
    const p = { ...clean, chargebacks: 1, decayed: { ...clean.decayed, chargebacks: 1 } };
    const r = { ...REQ, amount: 1000, context: { counterparty_id: 'cp' } };
    assert.equal(value(p, 'new_counterparty_large_trade', r), 3.6052);
    // clean, its tier allows USD 1000; at 2000 the smaller excess is the limit's, (ln 2)/0.5
    assert.equal(value(clean, 'new_counterparty_large_trade', r), 0);
    assert.equal(value(clean, 'new_counterparty_large_trade', { ...r, amount: 2000 }), 1.3863);
    assert.equal(value({ ...p, counterpartyTrades: 4 }, 'new_counterparty_large_trade', r), 0);
    assert.equal(value(p, 'new_counterparty_large_trade', { ...r, amount: 150 }), 0, 'within its usual range');
  });
});
