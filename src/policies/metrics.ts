// Quality figures of a policy on labelled decisions (docs/api.md, "Policies"). Inputs are scores 0–100 and
// labels (1 = fraud); p = score / 100. A figure that the data cannot define (no fraud, no legit,
// nothing flagged) is null rather than a made-up 0 or 1, so JSON never carries NaN.

export interface Metrics {
  roc_auc: number | null;
  average_precision: number | null;
  brier: number | null;
  calibration_error: number | null;
}

export type Label = 0 | 1;

function check(scores: readonly number[], labels: readonly Label[]): void {
  if (scores.length !== labels.length) throw new RangeError('metrics: scores and labels differ in length');
}

const positives = (labels: readonly Label[]): number => labels.reduce<number>((a, y) => a + y, 0);

/** ROC-AUC as the Mann–Whitney statistic; tied scores get their average rank (a tie counts ½). */
export function rocAuc(scores: readonly number[], labels: readonly Label[]): number | null {
  check(scores, labels);
  const P = positives(labels);
  const N = labels.length - P;
  if (P === 0 || N === 0) return null;
  const order = scores.map((_, i) => i).sort((a, b) => scores[a]! - scores[b]!);
  let rankSum = 0;
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && scores[order[end + 1]!] === scores[order[start]!]) end++;
    const rank = (start + end) / 2 + 1; // ranks are 1-based
    for (let k = start; k <= end; k++) if (labels[order[k]!] === 1) rankSum += rank;
    start = end + 1;
  }
  return (rankSum - (P * (P + 1)) / 2) / (P * N);
}

/**
 * Average precision, Σ (Rₖ − Rₖ₋₁)·Pₖ over the distinct score thresholds from the highest down
 * (tied scores enter together), as scikit-learn computes it.
 */
export function averagePrecision(scores: readonly number[], labels: readonly Label[]): number | null {
  check(scores, labels);
  const P = positives(labels);
  if (P === 0) return null;
  const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  let tp = 0;
  let seen = 0;
  let lastRecall = 0;
  let ap = 0;
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && scores[order[end + 1]!] === scores[order[start]!]) end++;
    for (let k = start; k <= end; k++) tp += labels[order[k]!]!;
    seen += end - start + 1;
    const recall = tp / P;
    ap += (recall - lastRecall) * (tp / seen);
    lastRecall = recall;
    start = end + 1;
  }
  return ap;
}

/** Mean (p − y)² with p = score / 100. */
export function brierScore(scores: readonly number[], labels: readonly Label[]): number | null {
  check(scores, labels);
  if (scores.length === 0) return null;
  let sum = 0;
  for (let i = 0; i < scores.length; i++) sum += (scores[i]! / 100 - labels[i]!) ** 2;
  return sum / scores.length;
}

export interface CalibrationBin {
  /** score range [lower, upper) (the last bin includes 100) */
  lower: number;
  upper: number;
  count: number;
  mean_predicted: number | null;
  observed_rate: number | null;
}

/** Ten equal-width score bins: 0–9, 10–19, …, 90–100. */
export function calibrationBins(scores: readonly number[], labels: readonly Label[]): CalibrationBin[] {
  check(scores, labels);
  const count = new Array<number>(10).fill(0);
  const pSum = new Array<number>(10).fill(0);
  const ySum = new Array<number>(10).fill(0);
  for (let i = 0; i < scores.length; i++) {
    // Dividing the score (not p) by 10 keeps the bin edges exact for integer scores.
    const b = Math.min(9, Math.max(0, Math.floor(scores[i]! / 10)));
    count[b]!++;
    pSum[b]! += scores[i]! / 100;
    ySum[b]! += labels[i]!;
  }
  return count.map((n, b) => ({
    lower: b * 10,
    upper: b === 9 ? 100 : b * 10 + 10,
    count: n,
    mean_predicted: n > 0 ? pSum[b]! / n : null,
    observed_rate: n > 0 ? ySum[b]! / n : null,
  }));
}

/** Expected calibration error: Σ over the ten bins of (bin size / n) · |mean p − observed fraud rate|. */
export function calibrationError(scores: readonly number[], labels: readonly Label[]): number | null {
  if (scores.length === 0) return null;
  let ece = 0;
  for (const bin of calibrationBins(scores, labels)) {
    if (bin.count > 0) ece += (bin.count / scores.length) * Math.abs(bin.mean_predicted! - bin.observed_rate!);
  }
  return ece;
}

export function computeMetrics(scores: readonly number[], labels: readonly Label[]): Metrics {
  return {
    roc_auc: rocAuc(scores, labels),
    average_precision: averagePrecision(scores, labels),
    brier: brierScore(scores, labels),
    calibration_error: calibrationError(scores, labels),
  };
}
