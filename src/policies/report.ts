// The report of a fitted policy (docs/api.md, "Policies") and the one call that produces a candidate from
// labelled decisions: split by entity, fit on the train side, measure both policies on the holdout.
import { SIGNAL_NAMES, type Policy, type SignalName } from './policy.ts';
import { signalBounds, WEIGHT_LIMIT, type FeatureRecord } from './features.ts';
import { fitSignalWeights, InsufficientLabelsError, type SignalFit } from './fit.ts';
import { computeMetrics, thresholdFigures, type Label, type Metrics, type ThresholdFigure } from './metrics.ts';
import { replayScore } from './arithmetic.ts';
import type { ReplayPolicy } from './backtest.ts';
import { splitByEntity } from './split.ts';

export interface LabelledDecision {
  /** the scored entity (or its erasure digest): the unit of the train / holdout split */
  entityId: string;
  features: FeatureRecord;
  label: Label;
}

export interface FitReport {
  labels: { fraud: number; legit: number };
  train: { decisions: number; fraud: number };
  holdout: { decisions: number; fraud: number };
  metrics: { base: Metrics; candidate: Metrics };
  thresholds: ThresholdFigure[];
  bias: { base: number; candidate: number };
  weights: Record<SignalName, { base: number; candidate: number }>;
}

const fraudCount = (rows: readonly LabelledDecision[]): number => rows.reduce((a, r) => a + r.label, 0);

/** Figures on the holdout for the base and the candidate; label counts over both splits. */
export function fitReport(args: {
  train: readonly LabelledDecision[];
  holdout: readonly LabelledDecision[];
  base: ReplayPolicy;
  candidate: ReplayPolicy;
}): FitReport {
  const { train, holdout, base, candidate } = args;
  const labels = holdout.map((r) => r.label);
  const baseScores = holdout.map((r) => replayScore(base, r.features));
  const candidateScores = holdout.map((r) => replayScore(candidate, r.features));
  const fraud = fraudCount(train) + fraudCount(holdout);
  return {
    labels: { fraud, legit: train.length + holdout.length - fraud },
    train: { decisions: train.length, fraud: fraudCount(train) },
    holdout: { decisions: holdout.length, fraud: fraudCount(holdout) },
    metrics: { base: computeMetrics(baseScores, labels), candidate: computeMetrics(candidateScores, labels) },
    thresholds: thresholdFigures(candidateScores, labels, candidate.thresholds),
    bias: { base: base.bias, candidate: candidate.bias },
    weights: Object.fromEntries(SIGNAL_NAMES.map((n) => [n, { base: base.weights[n], candidate: candidate.weights[n] }])) as FitReport['weights'],
  };
}

const MIN_LABELS_PER_CLASS = 30;

export interface CandidateOptions {
  /** the new policy's version */
  version: string;
  holdoutFraction?: number;
  lambda?: number;
  salt?: string;
  minLabelsPerClass?: number;
}

/** Four decimals keep a policy document readable; the bound clamp keeps the rounding valid. */
const tidy = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, Math.round(x * 1e4) / 1e4)) + 0;

/**
 * Fits a candidate to labelled decisions: the base policy with the fitted bias and weights (all
 * else, thresholds included, unchanged), and its report. Throws InsufficientLabelsError when
 * either label has fewer than `minLabelsPerClass` decisions overall, or the train split has none.
 */
export function fitCandidate(decisions: readonly LabelledDecision[], base: Policy, options: CandidateOptions): { policy: Policy; report: FitReport; fit: SignalFit } {
  const fraud = fraudCount(decisions);
  const legit = decisions.length - fraud;
  const min = options.minLabelsPerClass ?? MIN_LABELS_PER_CLASS;
  if (fraud < min || legit < min) {
    throw new InsufficientLabelsError(fraud, legit, `a fit needs at least ${min} labelled decisions of each label; got ${fraud} fraud and ${legit} legit`);
  }
  const { train, holdout } = splitByEntity(decisions, (d) => d.entityId, { fraction: options.holdoutFraction, salt: options.salt });
  const trainFraud = fraudCount(train);
  if (trainFraud === 0 || trainFraud === train.length) {
    throw new InsufficientLabelsError(fraud, legit, `the train split (by entity) has ${trainFraud} fraud and ${train.length - trainFraud} legit decisions; a fit needs both`);
  }
  const fit = fitSignalWeights(train, { lambda: options.lambda });
  const { lower, upper } = signalBounds();
  const weights = Object.fromEntries(SIGNAL_NAMES.map((n, i) => [n, tidy(fit.weights[n], lower[i]!, upper[i]!)])) as Record<SignalName, number>;
  const policy: Policy = { ...base, version: options.version, bias: tidy(fit.bias, -WEIGHT_LIMIT, WEIGHT_LIMIT), weights };
  return { policy, report: fitReport({ train, holdout, base, candidate: policy }), fit };
}
