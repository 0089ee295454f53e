// The report of a fitted policy (docs/api.md, "Policies") and the one call that produces a candidate from
// labelled decisions: split by entity, fit on the train side, measure both policies on the holdout.
import { SIGNAL_NAMES, type Policy, type SignalName } from './policy.ts';
import { signalBounds, toVector, WEIGHT_LIMIT, type FeatureRecord } from './features.ts';
import { planShapes, SHAPEABLE, simplify, type Shapes } from './shapes.ts';
import { fitSignalWeights, InsufficientLabelsError, type SignalFit } from './fit.ts';
import { computeMetrics, type Label, type Metrics } from './metrics.ts';
import { levelFigures, shareAtOrAbove, thresholdsForTarget, type LevelFigure, type OperatingTarget, type TargetOutcome } from './operating.ts';
import { replayScore } from './arithmetic.ts';
import type { ReplayPolicy } from './backtest.ts';
import { splitByEntity } from './split.ts';

export interface LabelledDecision {
  /** the scored entity (or its erasure digest): the unit of the train / holdout split */
  entityId: string;
  features: FeatureRecord;
  label: Label;
  /** the request's amount and currency, when the decision kept them (money figures) */
  amount?: number | null;
  currency?: string | null;
}

export interface FitReport {
  labels: { fraud: number; legit: number };
  train: { decisions: number; fraud: number };
  holdout: { decisions: number; fraud: number };
  metrics: { base: Metrics; candidate: Metrics };
  /** the candidate's levels on the holdout, in counts and in money */
  thresholds: LevelFigure[];
  /** the base policy's levels on the same holdout, for comparison */
  base_thresholds: LevelFigure[];
  /** the operating point the candidate's thresholds were set to meet */
  target: TargetOutcome | null;
  bias: { base: number; candidate: number };
  weights: Record<SignalName, { base: number; candidate: number }>;
  /** the shaped signals of each policy (docs/signals.md, "Shaped signals"); {} when none */
  shapes: { base: Shapes; candidate: Shapes };
}

const fraudCount = (rows: readonly LabelledDecision[]): number => rows.reduce((a, r) => a + r.label, 0);
const outcomes = (rows: readonly LabelledDecision[], scores: readonly number[]) =>
  rows.map((r, i) => ({ score: scores[i]!, label: r.label, amount: r.amount, currency: r.currency }));

/**
 * The candidate's thresholds from the holdout (docs/api.md, "Policies" target): the request's
 * target, or by default `high` flagging the share of holdout decisions the base policy flags, so
 * activating a fit changes the ranking, not the workload. An empty holdout keeps the base's.
 */
function operatingPoint(holdout: readonly LabelledDecision[], base: ReplayPolicy, candidate: ReplayPolicy, requested?: OperatingTarget): { thresholds: ReplayPolicy['thresholds']; target: TargetOutcome } {
  const baseScores = holdout.map((r) => replayScore(base, r.features));
  const target: OperatingTarget = requested ?? { level: 'high', max_share_flagged: shareAtOrAbove(baseScores, base.thresholds.high) };
  const source = requested ? 'request' : 'default';
  if (holdout.length === 0) return { thresholds: base.thresholds, target: { target, source, met: false, min_score: base.thresholds[target.level] } };
  const scored = outcomes(holdout, holdout.map((r) => replayScore(candidate, r.features)));
  const { thresholds, met } = thresholdsForTarget(scored, baseScores, base.thresholds, target);
  return { thresholds, target: { target, source, met, min_score: thresholds[target.level] } };
}

/** Figures on the holdout for the base and the candidate; label counts over both splits. */
export function fitReport(args: {
  train: readonly LabelledDecision[];
  holdout: readonly LabelledDecision[];
  base: ReplayPolicy;
  candidate: ReplayPolicy;
  target?: TargetOutcome;
}): FitReport {
  const { train, holdout, base, candidate, target } = args;
  const labels = holdout.map((r) => r.label);
  const baseScores = holdout.map((r) => replayScore(base, r.features));
  const candidateScores = holdout.map((r) => replayScore(candidate, r.features));
  const fraud = fraudCount(train) + fraudCount(holdout);
  return {
    labels: { fraud, legit: train.length + holdout.length - fraud },
    train: { decisions: train.length, fraud: fraudCount(train) },
    holdout: { decisions: holdout.length, fraud: fraudCount(holdout) },
    metrics: { base: computeMetrics(baseScores, labels), candidate: computeMetrics(candidateScores, labels) },
    thresholds: levelFigures(outcomes(holdout, candidateScores), candidate.thresholds),
    base_thresholds: levelFigures(outcomes(holdout, baseScores), base.thresholds),
    target: target ?? null,
    bias: { base: base.bias, candidate: candidate.bias },
    weights: Object.fromEntries(SIGNAL_NAMES.map((n) => [n, { base: base.weights[n], candidate: candidate.weights[n] }])) as FitReport['weights'],
    shapes: { base: base.shapes ?? {}, candidate: candidate.shapes ?? {} },
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
  /** the operating point to set the thresholds for; default: the base's share flagged at `high` */
  target?: OperatingTarget;
  /** fit shapes where the data allow (shapes.ts, knotsFromValues); default true, false: weights only */
  shapes?: boolean;
}

/** Four decimals keep a policy document readable; the bound clamp keeps the rounding valid. */
const tidy = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, Math.round(x * 1e4) / 1e4)) + 0;

/**
 * Fits a candidate to labelled decisions: the base policy with the fitted bias and weights and
 * thresholds set on the holdout for the operating point (operatingPoint; all else unchanged), and its report. Throws InsufficientLabelsError when
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
  const plan = options.shapes === false ? undefined : planShapes(SIGNAL_NAMES, train.map((r) => toVector(r.features)), (n) => SHAPEABLE.has(n));
  const fit = fitSignalWeights(train, { lambda: options.lambda, plan });
  const { lower, upper } = signalBounds();
  const weights = Object.fromEntries(SIGNAL_NAMES.map((n, i) => [n, tidy(fit.weights[n], lower[i]!, upper[i]!)])) as Record<SignalName, number>;
  const shapes: Shapes = {};
  SIGNAL_NAMES.forEach((n, i) => {
    const fitted = fit.shapes[n];
    const shape = fitted && simplify(weights[n], fitted, (x) => tidy(x, lower[i]!, upper[i]!));
    if (shape) shapes[n] = shape;
  });
  // The candidate's shapes are the fit's alone: a base's shapes are not inherited.
  const { shapes: _baseShapes, ...rest } = base;
  const fitted: Policy = { ...rest, version: options.version, bias: tidy(fit.bias, -WEIGHT_LIMIT, WEIGHT_LIMIT), weights, ...(Object.keys(shapes).length > 0 ? { shapes } : {}) };
  const { thresholds, target } = operatingPoint(holdout, base, fitted, options.target);
  const policy: Policy = { ...fitted, thresholds };
  return { policy, report: fitReport({ train, holdout, base, candidate: policy, target }), fit };
}
