import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  DEFAULT_POLICY,
  SIGNAL_DIRECTIONS,
  SIGNAL_NAMES,
  type Policy,
  type SignalName,
} from '../../src/model/policy.ts';
import { validatePolicy } from '../../src/model/policy-document.ts';
import { InsufficientLabelsError } from '../../src/policies/fit.ts';
import { fitCandidate, fitReport, type LabelledDecision } from '../../src/policies/report.ts';
import { replayScore } from '../../src/model/arithmetic.ts';
import { LabelledSplit } from '../../src/policies/samples.ts';
import { mulberry32, type Random } from '../../bench/quality/prng.ts';

/** Signal values in their documented ranges (docs/signals.md), with realistic sparsity. */
function features(random: Random): Record<SignalName, number> {
  const trades = random() < 0.2 ? 0 : Math.floor(-Math.log(1 - random()) * 40);
  const lost = random() < 0.1 ? Math.floor(random() * 4) : 0;
  const rare = (p: number, max: number) => (random() < p ? Math.ceil(random() * max) : 0);
  return {
    completed_trades: Math.log2(1 + trades),
    dispute_rate: (lost + 1) / (trades + 10),
    cancellation_rate: random() < 0.3 ? random() * 0.5 : 0,
    chargebacks: Math.log2(1 + rare(0.05, 3)),
    fraud_reports: Math.log2(1 + rare(0.03, 2)),
    blocklisted: random() < 0.01 ? 1 : 0,
    new_account: random() < 0.3 ? random() : 0,
    cold_start: trades === 0 && random() < 0.5 ? 1 : 0,
    velocity_trades: random() < 0.1 ? random() * 3 : 0,
    velocity_volume: random() < 0.1 ? random() * 3 : 0,
    amount_vs_history: random() < 0.4 ? random() * 4 : 0,
    new_counterparty: random() < 0.5 ? 1 : 0,
    payment_method_risk: [0.3, 0.8, 0.4, 0.2, 0.5, 0.1][Math.floor(random() * 6)]!,
    cross_border: random() < 0.2 ? 1 : 0,
    linked_flagged_entities: rare(0.03, 3),
    // issue 10's features: absent here, so this generator's random sequence stays as it was
    cash_out_burst: 0,
    dormant_reactivation: 0,
    young_account_reversible_method: 0,
    shared_identifier_entities: 0,
    network_flags: 0,
    new_counterparty_large_trade: 0,
    // issue 21's ring signals: absent too, for the same reason
    ring_flagged_entities: 0,
    ring_size: 0,
    // issue 20's interactions: absent too
    reversible_new_counterparty: 0,
    cross_border_new_counterparty: 0,
    // issue 20's fraudulent_dispute_losses: absent too
    fraudulent_dispute_losses: 0,
  };
}

/** n decisions of `entities` entities, labelled by the logistic model of `truth`. */
function decisions(n: number, entities: number, truth: Policy, seed: number): LabelledDecision[] {
  const random = mulberry32(seed);
  return Array.from({ length: n }, () => {
    const f = features(random);
    const p = replayScore(truth, f) / 100; // the truth's own (rounded) probability
    const entityId = createHash('sha256')
      .update(`e${Math.floor(random() * entities)}`)
      .digest('hex');
    return { entityId, features: f, label: random() < p ? 1 : 0 };
  });
}

const naive: Policy = {
  ...DEFAULT_POLICY,
  version: 'naive',
  bias: 0,
  weights: Object.fromEntries(SIGNAL_NAMES.map((n) => [n, SIGNAL_DIRECTIONS[n] === 'risk' ? 1 : -1])) as Record<
    SignalName,
    number
  >,
};

describe('fitCandidate', () => {
  const data = decisions(20_000, 8000, DEFAULT_POLICY, 17);
  // Weights only: these tests are about recovering a linear truth's weights (shaped fits:
  // test/policies/shapes.test.ts).
  const { policy, report, fit } = fitCandidate(data, naive, { version: 'fit-1', shapes: false });

  test('the candidate is a valid policy: base settings, fitted bias and weights, new version', () => {
    assert.doesNotThrow(() => validatePolicy(policy));
    assert.equal(policy.version, 'fit-1');
    assert.deepEqual(policy.paymentMethodRisk, naive.paymentMethodRisk);
    assert.ok(fit.converged);
  });

  test('holdout calibration error of a fit to logistic data is at most 0.05', () => {
    assert.ok(report.metrics.candidate.calibration_error! <= 0.05, `ECE ${report.metrics.candidate.calibration_error}`);
  });

  test('the fit recovers the generating weights and beats the naive base on every holdout figure', () => {
    for (const n of ['chargebacks', 'fraud_reports', 'payment_method_risk', 'new_counterparty'] as const) {
      assert.ok(Math.abs(policy.weights[n] - DEFAULT_POLICY.weights[n]) < 0.5, `${n}: ${policy.weights[n]}`);
    }
    // The generator's dispute_rate is the first definition's (about 0.1 for a newcomer, the prior's
    // mean), so the bias trades against 0.1·dispute_rate; their sum is what the data identify.
    const intercept = (p: Policy) => p.bias + 0.1 * p.weights.dispute_rate;
    assert.ok(
      Math.abs(intercept(policy) - intercept(DEFAULT_POLICY)) < 0.5,
      `bias ${policy.bias}, dispute_rate ${policy.weights.dispute_rate}`,
    );
    const { base, candidate } = report.metrics;
    assert.ok(candidate.roc_auc! > base.roc_auc!);
    assert.ok(candidate.average_precision! > base.average_precision!);
    assert.ok(candidate.brier! < base.brier!);
    assert.ok(candidate.calibration_error! < base.calibration_error!);
  });

  test('the report counts labels over both splits and figures on the holdout', () => {
    const fraud = data.filter((d) => d.label === 1).length;
    assert.deepEqual(report.labels, { fraud, legit: data.length - fraud });
    assert.equal(report.train.decisions + report.holdout.decisions, data.length);
    assert.equal(report.train.fraud + report.holdout.fraud, fraud);
    assert.ok(Math.abs(report.holdout.decisions / data.length - 0.3) < 0.03);
    const { medium, high, critical } = policy.thresholds;
    assert.deepEqual(
      report.thresholds.map((t) => [t.risk_level, t.min_score]),
      [
        ['low', 0],
        ['medium', medium],
        ['high', high],
        ['critical', critical],
      ],
    );
    assert.deepEqual(
      report.base_thresholds.map((t) => [t.risk_level, t.min_score]),
      [
        ['low', 0],
        ['medium', 30],
        ['high', 60],
        ['critical', 85],
      ],
    );
    assert.deepEqual(report.weights.chargebacks, { base: 1, candidate: policy.weights.chargebacks });
    assert.deepEqual(report.bias, { base: 0, candidate: policy.bias });
    // Stored and served as JSON: a NaN or Infinity would silently become null, an undefined vanish.
    assert.deepEqual(JSON.parse(JSON.stringify(report)), report);
  });

  test('the same data gives the same candidate and report', () => {
    const again = fitCandidate(
      data.map((d) => ({ ...d })),
      naive,
      { version: 'fit-1', shapes: false },
    );
    assert.deepEqual(again.policy, policy);
    assert.deepEqual(again.report, report);
  });

  test('fewer than 30 decisions of a label throws InsufficientLabelsError', () => {
    const legitOnly = data.filter((d) => d.label === 0);
    const fraud29 = data.filter((d) => d.label === 1).slice(0, 29);
    assert.throws(
      () => fitCandidate([...legitOnly, ...fraud29], naive, { version: 'x' }),
      (e: unknown) => e instanceof InsufficientLabelsError && e.fraud === 29,
    );
  });

  test('a train split without fraud throws InsufficientLabelsError, not a broken fit', () => {
    // All fraud from one entity, which the split places in the holdout (fraction 1 puts everything there).
    const oneEntity = data
      .slice(0, 200)
      .map((d, i) => ({ ...d, entityId: i < 40 ? 'fraudster' : `e${i}`, label: (i < 40 ? 1 : 0) as 0 | 1 }));
    assert.throws(() => fitCandidate(oneEntity, naive, { version: 'x', holdoutFraction: 1 }), InsufficientLabelsError);
  });
});

describe('fitCandidate: operating points', () => {
  const data = decisions(20_000, 8000, DEFAULT_POLICY, 17);
  const highFigure = (r: ReturnType<typeof fitCandidate>['report']) =>
    r.thresholds.find((t) => t.risk_level === 'high')!;

  test("by default the candidate flags at high+ the largest share of the holdout not above the base policy's", () => {
    const { policy, report } = fitCandidate(data, naive, { version: 'fit-default' });
    const base = report.base_thresholds.find((t) => t.risk_level === 'high')!.share_flagged!;
    const cand = highFigure(report).share_flagged!;
    assert.equal(report.target?.source, 'default');
    assert.equal(report.target?.target.max_share_flagged, base);
    assert.ok(cand <= base, `${cand} > ${base}`);
    assert.ok(policy.thresholds.medium < policy.thresholds.high && policy.thresholds.high < policy.thresholds.critical);
  });

  test('max_false_positive_rate: the high threshold is the lowest whose holdout FPR meets it', () => {
    const strict = fitCandidate(data, naive, {
      version: 'fit-fpr',
      target: { level: 'high', max_false_positive_rate: 0.02 },
    });
    const loose = fitCandidate(data, naive, {
      version: 'fit-fpr2',
      target: { level: 'high', max_false_positive_rate: 0.2 },
    });
    assert.ok(highFigure(strict.report).false_positive_rate! <= 0.02);
    assert.ok(highFigure(loose.report).false_positive_rate! <= 0.2);
    assert.equal(strict.report.target?.met, true);
    assert.ok(strict.policy.thresholds.high > loose.policy.thresholds.high);
    // The same weights: only the thresholds follow the target.
    assert.deepEqual(strict.policy.weights, loose.policy.weights);
    assert.ok(highFigure(loose.report).recall! >= highFigure(strict.report).recall!);
  });

  test('max_share_flagged and min_precision are met on the holdout; an unreachable precision is reported as not met', () => {
    const share = fitCandidate(data, naive, {
      version: 'fit-share',
      target: { level: 'high', max_share_flagged: 0.1 },
    });
    assert.equal(share.report.target?.met, true, JSON.stringify(share.report.thresholds));
    assert.ok(highFigure(share.report).share_flagged! <= 0.1);
    const precise = fitCandidate(data, naive, {
      version: 'fit-prec',
      target: { level: 'critical', min_precision: 0.3 },
    });
    assert.equal(precise.report.target?.met, true, JSON.stringify(precise.report.thresholds));
    const critical = precise.report.thresholds.find((t) => t.risk_level === 'critical')!;
    assert.ok(critical.precision! >= 0.3, `precision ${critical.precision}`);
    assert.ok(precise.policy.thresholds.high < precise.policy.thresholds.critical);
    const impossible = fitCandidate(data, naive, {
      version: 'fit-imp',
      target: { level: 'high', min_precision: 1.01 },
    });
    assert.equal(impossible.report.target?.met, false);
    assert.doesNotThrow(() => validatePolicy(impossible.policy));
  });

  test('per level, counts add up and money is split by currency into fraud caught and legitimate held', () => {
    const priced = data.map((d, i) => ({ ...d, amount: 100 + (i % 7), currency: i % 2 === 0 ? 'USD' : 'BTC' }));
    const { report } = fitCandidate(priced, naive, { version: 'fit-money' });
    for (const t of report.thresholds) {
      assert.equal(t.flagged, t.frauds_caught + t.false_positives);
      const held = Object.values(t.volume_held).reduce((a, b) => a + b, 0);
      const caught = Object.values(t.volume_caught).reduce((a, b) => a + b, 0);
      assert.ok(caught >= 100 * t.frauds_caught && caught <= 106 * t.frauds_caught + 1e-6);
      assert.ok(held >= 100 * t.false_positives && held <= 106 * t.false_positives + 1e-6);
    }
    const low = report.thresholds[0]!;
    assert.equal(low.flagged, report.holdout.decisions);
    assert.deepEqual(Object.keys(low.volume_caught).sort(), ['BTC', 'USD']);
  });
});

describe('fitReport', () => {
  test('an empty holdout gives null metrics and figures', () => {
    const train = decisions(50, 50, DEFAULT_POLICY, 3);
    const report = fitReport({ split: LabelledSplit.of(train, 0), base: DEFAULT_POLICY, candidate: DEFAULT_POLICY });
    assert.equal(report.holdout.decisions, 0);
    assert.equal(report.metrics.candidate.roc_auc, null);
    assert.equal(report.thresholds[1]!.share_flagged, null);
  });
});
