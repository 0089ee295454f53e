// Points for the report's plots (docs/api.md, "Policies": ROC, precision–recall, calibration, score
// distribution by label). One point per distinct score threshold, highest first, so the curves
// agree exactly with rocAuc and averagePrecision in metrics.ts.
import type { Label } from './metrics.ts';

export interface CurvePoint {
  /** decisions with score ≥ threshold are flagged */
  threshold: number;
  fpr: number;
  tpr: number;
  precision: number;
  recall: number;
}

/**
 * The operating points from flagging nothing to flagging everything. Starts at (fpr 0, tpr 0)
 * with threshold 101 (nothing flagged, precision taken as 1 by convention). Empty when either
 * label is missing.
 */
export function curvePoints(scores: readonly number[], labels: readonly Label[]): CurvePoint[] {
  if (scores.length !== labels.length) throw new RangeError('curves: scores and labels differ in length');
  const P = labels.reduce<number>((a, y) => a + y, 0);
  const N = labels.length - P;
  if (P === 0 || N === 0) return [];
  const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  const points: CurvePoint[] = [{ threshold: 101, fpr: 0, tpr: 0, precision: 1, recall: 0 }];
  let tp = 0;
  let fp = 0;
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && scores[order[end + 1]!] === scores[order[start]!]) end++;
    for (let k = start; k <= end; k++) {
      if (labels[order[k]!] === 1) tp++;
      else fp++;
    }
    points.push({
      threshold: scores[order[start]!]!,
      fpr: fp / N,
      tpr: tp / P,
      precision: tp / (tp + fp),
      recall: tp / P,
    });
    start = end + 1;
  }
  return points;
}

export interface ScoreHistogram {
  /** bin b counts scores in [10·b, 10·b + 10), the last bin including 100 */
  fraud: number[];
  legit: number[];
}

export function scoreHistogram(scores: readonly number[], labels: readonly Label[]): ScoreHistogram {
  if (scores.length !== labels.length) throw new RangeError('curves: scores and labels differ in length');
  const fraud = new Array<number>(10).fill(0);
  const legit = new Array<number>(10).fill(0);
  scores.forEach((s, i) => {
    const b = Math.min(9, Math.max(0, Math.floor(s / 10)));
    (labels[i] === 1 ? fraud : legit)[b]!++;
  });
  return { fraud, legit };
}
