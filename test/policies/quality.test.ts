// The learning loop end to end, offline: simulate a market, score every request at its own time
// with the default policy, label from the outcome events, fit, and check the candidate on the
// holdout. A guard on the simulation (it must carry signal the model can see) and on the loop.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { backtest } from '../../src/policies/backtest.ts';
import { completionIndex, trainingLabel } from '../../src/policies/labels.ts';
import { computeMetrics } from '../../src/policies/metrics.ts';
import { fitCandidate, type LabelledDecision } from '../../src/policies/report.ts';
import { simulateMarket } from '../../bench/quality/market.ts';
import { scoreOffline } from '../../bench/quality/offline.ts';

describe('offline learning loop on the simulated market', () => {
  const market = simulateMarket({ seed: 11, entities: 1200, days: 75 });
  const decisions = scoreOffline(market.events, market.requests);
  const truth = decisions.map((d) => (d.request.label === 'fraud' ? 1 : 0) as 0 | 1);

  test('the default policy ranks the simulated fraud well above chance', () => {
    const m = computeMetrics(
      decisions.map((d) => d.score),
      truth,
    );
    assert.ok(m.roc_auc! > 0.85, `AUC ${m.roc_auc}`);
    assert.ok(m.average_precision! > 0.2, `AP ${m.average_precision}`);
  });

  test('replaying the deciding policy on the stored features gives back every decided level', () => {
    const result = backtest(
      DEFAULT_POLICY,
      decisions.map((d) => ({ features: d.features, riskLevel: d.riskLevel })),
    );
    for (const [from, row] of Object.entries(result.levels)) {
      for (const [to, n] of Object.entries(row)) if (from !== to) assert.equal(n, 0, `${from} → ${to}`);
    }
  });

  test('a fit on event-derived labels is calibrated on the holdout and no worse than the default', () => {
    const now = Date.parse(market.end);
    const completed = completionIndex(market.events);
    const labelled: LabelledDecision[] = [];
    for (const d of decisions) {
      const label = trainingLabel(
        { createdAt: d.at, entityId: d.entityId, tradeId: d.tradeId, label: d.request.eventLabel },
        { now, completed, assumeLegitAfterDays: 14 },
      );
      if (label !== null) labelled.push({ entityId: d.entityId, features: d.features, label });
    }
    const { report } = fitCandidate(labelled, DEFAULT_POLICY, { version: 'sim-fit' });
    const { base, candidate } = report.metrics;
    assert.ok(report.labels.fraud >= 30 && report.holdout.fraud > 0);
    assert.ok(candidate.calibration_error! <= 0.05, `ECE ${candidate.calibration_error}`);
    assert.ok(candidate.brier! <= base.brier!, `Brier ${candidate.brier} vs ${base.brier}`);
    assert.ok(
      candidate.average_precision! >= base.average_precision! - 0.02,
      `AP ${candidate.average_precision} vs ${base.average_precision}`,
    );
  });
});
