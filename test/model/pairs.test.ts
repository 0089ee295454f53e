// Pairwise terms (docs/signals.md, "Pairs"): validated so monotonicity holds, a term of their own in
// the explanation that still sums to the score, replayed exactly, and the safe amount still exact
// to the minor unit when a pair moves with the amount.
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
import { replayScore, scoreFromSignals, scoreValues } from '../../src/model/arithmetic.ts';
import { evaluate } from '../../src/model/signal-model.ts';
import { pairValue } from '../../src/model/pairs.ts';
import { minorUnitDigits, safeAmount, scoreForAmount } from '../../src/trust/safe-amount.ts';
import { decideByMoney } from '../../src/model/economics.ts';
import { newAccountsOf } from '../../src/model/new-accounts.ts';
import { NOW, policyArb, profileArb, requestArb } from '../helpers/profiles.ts';

const RISK = SIGNAL_NAMES.filter((n) => SIGNAL_DIRECTIONS[n] === 'risk');
const withPairs = (pairs: Policy['pairs']): Policy => ({ ...structuredClone(DEFAULT_POLICY), version: 'p', pairs });

describe('pairs in a policy document', () => {
  test('two different risk signals, each pair once, a weight of 0–100: else 400 naming the field', () => {
    validatePolicy(withPairs([{ signals: ['new_account', 'payment_method_risk'], weight: 1.5 }]));
    const refused = (pairs: unknown, field: RegExp) =>
      assert.throws(() => validatePolicy({ ...withPairs([]), pairs }), field);
    refused([{ signals: ['completed_trades', 'new_account'], weight: 1 }], /\/pairs\/0\/signals\/0/);
    refused([{ signals: ['new_account', 'new_account'], weight: 1 }], /\/pairs\/0\/signals: must name two different/);
    refused(
      [
        { signals: ['new_account', 'cross_border'], weight: 1 },
        { signals: ['cross_border', 'new_account'], weight: 2 },
      ],
      /\/pairs\/1\/signals: the pair cross_border × new_account is already listed/,
    );
    refused([{ signals: ['new_account', 'cross_border'], weight: -1 }], /\/pairs\/0\/weight/);
    refused(
      Array.from({ length: 9 }, (_, i) => ({ signals: [RISK[i], RISK[i + 1]], weight: 1 })),
      /\/pairs/,
    );
  });
});

/** A valid policy with up to three pairs, often one that moves with the amount. */
const pairedPolicy = fc
  .tuple(
    policyArb,
    fc.array(
      fc.record({
        a: fc.constantFrom(...RISK),
        b: fc.constantFrom<SignalName>(
          'amount_vs_history',
          'new_counterparty_large_trade',
          'new_account',
          'cross_border',
        ),
        weight: fc.double({ min: 0, max: 10, noNaN: true }),
      }),
      { maxLength: 3 },
    ),
  )
  .map(([policy, raw]) => {
    const seen = new Set<string>();
    const pairs = raw.filter(({ a, b }) => {
      const key = [a, b].sort().join('*');
      if (a === b || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return {
      ...policy,
      pairs: pairs.map(({ a, b, weight }) => ({ signals: [a, b] as [SignalName, SignalName], weight })),
    };
  });

describe('pairs in a score', () => {
  test('each pair is a term "a*b" of value a·b; the explanation sums to the score; a replay gives the live score', () => {
    fc.assert(
      fc.property(profileArb, requestArb, pairedPolicy, (p, r, policy) => {
        validatePolicy(policy);
        const { result, values } = evaluate(p, r, policy, NOW);
        assert.equal(scoreFromSignals(policy.bias, result.signals), result.score);
        assert.equal(replayScore(policy, values), result.score);
        for (const pair of policy.pairs) {
          const term = result.signals.find((s) => s.name === `${pair.signals[0]}*${pair.signals[1]}`);
          const value = pairValue(values[pair.signals[0]], values[pair.signals[1]]);
          if (pair.weight * value === 0) assert.equal(term, undefined);
          else assert.deepEqual([term!.value, term!.weight], [value, pair.weight]);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('a pair never lowers a score: with it, the same inputs score at least as high', () => {
    fc.assert(
      fc.property(profileArb, requestArb, pairedPolicy, (p, r, policy) => {
        const { score } = scoreValues({ ...policy, pairs: [] }, evaluate(p, r, policy, NOW).values);
        assert.ok(evaluate(p, r, policy, NOW).result.score >= score);
      }),
      { numRuns: 200 },
    );
  });

  test('safe_amount stays exact to the minor unit when a pair moves with the amount', () => {
    fc.assert(
      fc.property(profileArb, requestArb, pairedPolicy, (p, r, policy) => {
        const safe = safeAmount(p, r, policy, NOW);
        const high = policy.thresholds.high;
        const digits = minorUnitDigits(r.currency, policy.cryptoAssets);
        const at = (amount: number) => scoreForAmount(p, r, policy, NOW, amount);
        if (safe === null) assert.ok(at(1e15) < high);
        else if (safe === 0) assert.ok(at(10 ** -digits) >= high);
        else {
          assert.ok(at(safe) < high, `below high at ${safe}`);
          const units = Math.round(safe * 10 ** digits);
          if (units < 2 ** 51) assert.ok(at((units + 1) / 10 ** digits) >= high, `high one unit above ${safe}`);
        }
      }),
      { numRuns: 400 },
    );
  });

  test('by money: approved at safe_amount, not one minor unit above, with the pairs in p', () => {
    const economics = { currency: 'USD', declineCost: { rate: 0.01, fixed: 20 }, reviewCost: 3 };
    fc.assert(
      fc.property(profileArb, requestArb, pairedPolicy, (p, r, base) => {
        const policy = { ...base, economics };
        const request = { ...r, currency: 'USD' };
        const safe = safeAmount(p, request, policy, NOW);
        const outcome = (amount: number) => {
          const { result } = evaluate(p, { ...request, amount }, policy, NOW);
          const ref = newAccountsOf(policy).referenceAmounts;
          return decideByMoney(economics, policy.bias, result.signals, amount, 'USD', ref)!.outcome;
        };
        if (safe === null || safe === 0 || safe > 1e12) return;
        assert.equal(outcome(safe), 'approve', `approved at ${safe}`);
        assert.notEqual(outcome(Math.round(safe * 100 + 1) / 100), 'approve', `not approved one cent above ${safe}`);
      }),
      { numRuns: 300 },
    );
  });
});
