// Operating-point figures for the quality runs (issue 20): what a desk acting on `risk_level`
// sees, on ground truth. `caught_at_fpr`: the largest share of frauds any score cut catches while
// flagging at most that share of legitimate trades (ties enter together, as a threshold must).
import type { Label } from '../../src/policies/metrics.ts';
import type { Thresholds } from '../../src/model/policy.ts';

export interface OperatingFigures {
  high_plus: { recall: number; false_positive_rate: number; share_flagged: number };
  caught_at_fpr: { '0.01': number; '0.02': number };
}

function caughtAt(scores: readonly number[], labels: readonly Label[], maxFpr: number): number {
  const P = labels.reduce<number>((a, y) => a + y, 0);
  const N = labels.length - P;
  let best = 0;
  for (let cut = 0; cut <= 101; cut++) {
    let fp = 0;
    let tp = 0;
    for (let i = 0; i < scores.length; i++) {
      if (scores[i]! < cut) continue;
      if (labels[i] === 1) tp++;
      else fp++;
    }
    if (N > 0 && fp / N <= maxFpr && P > 0) best = Math.max(best, tp / P);
  }
  return best;
}

export function operatingFigures(
  scores: readonly number[],
  labels: readonly Label[],
  thresholds: Pick<Thresholds, 'high'>,
): OperatingFigures {
  let tp = 0;
  let fp = 0;
  let P = 0;
  for (let i = 0; i < scores.length; i++) {
    if (labels[i] === 1) P++;
    if (scores[i]! < thresholds.high) continue;
    if (labels[i] === 1) tp++;
    else fp++;
  }
  const N = scores.length - P;
  const r = (x: number) => Number(x.toFixed(4));
  return {
    high_plus: {
      recall: r(P ? tp / P : 0),
      false_positive_rate: r(N ? fp / N : 0),
      share_flagged: r(scores.length ? (tp + fp) / scores.length : 0),
    },
    caught_at_fpr: { '0.01': r(caughtAt(scores, labels, 0.01)), '0.02': r(caughtAt(scores, labels, 0.02)) },
  };
}
