// The fit's pairwise terms (docs/signals.md, "Pairs"): a pair is found where fraud lives in a
// combination, kept only when the holdout says it pays, and the cost objective searches by default.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { fitCandidate, type LabelledDecision } from '../../src/policies/report.ts';
import { LabelledSplit } from '../../src/policies/samples.ts';
import { rankPairs } from '../../src/policies/pair-search.ts';
import { validatePolicy } from '../../src/model/policy-document.ts';
import { mulberry32 } from '../../bench/quality/prng.ts';

/**
 * 6,000 decisions: a card on a young account is fraud far more often than either alone
 * (`combined`), or the two add up on the log-odds scale and nothing more (`additive`).
 */
function market(kind: 'combined' | 'additive', seed = 11): LabelledDecision[] {
  const next = mulberry32(seed);
  return Array.from({ length: 6000 }, (_, i) => {
    const f = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])) as Record<string, number>;
    f.new_account = next() < 0.3 ? Math.round(next() * 1e4) / 1e4 : 0;
    f.payment_method_risk = [0.3, 0.8, 0.2, 0.5][Math.floor(next() * 4)]!;
    f.completed_trades = Math.round(next() * 6e4) / 1e4;
    f.chargebacks = next() < 0.05 ? 1 : 0;
    const z =
      kind === 'combined'
        ? -4.5 + 2 * f.chargebacks + 9 * f.new_account * f.payment_method_risk
        : -4.5 + 2 * f.chargebacks + 2.5 * f.new_account + 2 * f.payment_method_risk;
    const fraud = next() < 1 / (1 + Math.exp(-z));
    return {
      entityId: `e-${i % 1500}`,
      features: f as LabelledDecision['features'],
      label: fraud ? 1 : 0,
      amount: 100,
      currency: 'USD',
    };
  });
}

describe('pairwise terms in a fit', () => {
  test('a combination worse than its parts: the pair ranks first, is kept, and lowers the holdout log-loss', () => {
    const { policy, report } = fitCandidate(market('combined'), DEFAULT_POLICY, { version: 'pairs', pairs: true });
    validatePolicy(policy);
    const search = report.pairs!.search;
    assert.deepEqual(search.tried[0]!.signals, ['new_account', 'payment_method_risk']);
    assert.equal(search.tried[0]!.kept, true);
    assert.ok(search.tried[0]!.holdout_log_loss < search.additive_log_loss);
    assert.ok(policy.pairs!.some((p) => p.signals.join('*') === 'new_account*payment_method_risk' && p.weight > 1));
    assert.deepEqual(report.pairs!.candidate, policy.pairs);
  });

  test('when the parts only add up, no pair pays on the holdout and none is kept', () => {
    const { policy, report } = fitCandidate(market('additive'), DEFAULT_POLICY, { version: 'none', pairs: true });
    assert.equal(policy.pairs, undefined);
    assert.ok(
      report.pairs!.search.tried.every((t) => !t.kept),
      JSON.stringify(report.pairs),
    );
  });

  test('the ranking is the same for the same data, and only risk signals pair', () => {
    const split = LabelledSplit.of(market('combined'));
    const additive = fitCandidate(market('combined'), DEFAULT_POLICY, { version: 'a', pairs: false }).policy;
    const once = rankPairs(split.train, additive);
    assert.deepEqual(rankPairs(split.train, additive), once);
    for (const [a, b] of once) assert.ok(a !== 'completed_trades' && b !== 'completed_trades');
  });

  test('without the cost objective or pairs asked for, a fit stays additive (no search, no report entry)', () => {
    const { policy, report } = fitCandidate(market('combined'), DEFAULT_POLICY, { version: 'plain' });
    assert.equal(policy.pairs, undefined);
    assert.equal(report.pairs, undefined);
  });
});
