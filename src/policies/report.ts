// The report of a fitted policy (docs/api.md, "Policies") and the one call that produces a candidate from
// labelled decisions: split by entity, fit on the train side, measure both policies on the holdout.
import { SIGNAL_NAMES, type Policy, type SignalName } from '../model/policy.ts';
import { signalBounds, WEIGHT_LIMIT } from '../model/feature-vector.ts';
import { planShapes, SHAPEABLE, simplify, type Shapes } from '../model/shapes.ts';
import { InsufficientLabelsError } from './fit.ts';
import { fitSignalSamples, type SignalFit } from './signal-fit.ts';
import type { Weighting } from './intercept.ts';
import { computeMetrics, type Label, type Metrics } from './metrics.ts';
import {
  levelFigures,
  shareAtOrAbove,
  thresholdsForTarget,
  type LevelFigure,
  type OperatingTarget,
  type TargetOutcome,
} from './operating.ts';
import type { ReplayPolicy } from './backtest.ts';
import { LabelledSplit, type LabelledInput, type LabelTally, type SampleColumns } from './samples.ts';
import { costObjective, type CostInputs, type CostReport } from './cost-fit.ts';
import { searchPairs, type PairSearch } from './pair-search.ts';
import type { Pair } from '../model/pairs.ts';

/** A labelled decision handed over whole (tests, the quality bench); the job streams into a LabelledSplit. */
export type LabelledDecision = LabelledInput;

/** The holdout's labels and both policies' scores on it, in row order: the report's and the plots' one replay. */
export interface HoldoutScores {
  labels: Label[];
  base: number[];
  candidate: number[];
}

export interface FitReport {
  labels: { fraud: number; legit: number };
  /**
   * The labelled decisions by where their label came from: api, event, review (a reviewer's
   * label, or an approve resolution made legit by its completed trade), assumed (legit by the
   * completed trade alone). Rows handed over without a source are not counted here.
   */
  label_sources: LabelTally['sources'];
  /** approvals drawn for review: how many count, their summed weight, how many unsampled were left out */
  sampling: LabelTally['sampling'];
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
  /** the pairs of each policy and the search for the candidate's (docs/signals.md, "Pairs"), when one ran */
  pairs?: { base: Pair[]; candidate: Pair[]; search: PairSearch };
  /** with the cost objective (docs/api.md, "Decisions by money"): the desk's figures and the frontier */
  objective?: CostReport['objective'];
  economics?: CostReport['economics'];
  capacity?: CostReport['capacity'];
  reviewer_accuracy?: CostReport['reviewer_accuracy'];
  outcomes?: CostReport['outcomes'];
  frontier?: CostReport['frontier'];
}

/**
 * The candidate's thresholds from the holdout (docs/api.md, "Policies" target): the request's
 * target, or by default `high` flagging the share of holdout decisions the base policy flags, so
 * activating a fit changes the ranking, not the workload. An empty holdout keeps the base's.
 */
function operatingPoint(
  holdout: SampleColumns,
  scores: HoldoutScores,
  base: ReplayPolicy,
  requested?: OperatingTarget,
): { thresholds: ReplayPolicy['thresholds']; target: TargetOutcome } {
  const target: OperatingTarget = requested ?? {
    level: 'high',
    max_share_flagged: shareAtOrAbove(scores.base, base.thresholds.high),
  };
  const source = requested ? 'request' : 'default';
  if (holdout.count === 0)
    return {
      thresholds: base.thresholds,
      target: { target, source, met: false, min_score: base.thresholds[target.level] },
    };
  const { thresholds, met } = thresholdsForTarget(
    holdout.outcomes(scores.candidate),
    scores.base,
    base.thresholds,
    target,
  );
  return { thresholds, target: { target, source, met, min_score: thresholds[target.level] } };
}

/** Both policies' scores on the holdout. */
function holdoutScores(holdout: SampleColumns, base: ReplayPolicy, candidate: ReplayPolicy): HoldoutScores {
  return { labels: holdout.labels(), base: holdout.scores(base), candidate: holdout.scores(candidate) };
}

/** Figures on the holdout for the base and the candidate; label counts over both splits. */
export function fitReport(args: {
  split: LabelledSplit;
  base: ReplayPolicy;
  candidate: ReplayPolicy;
  target?: TargetOutcome;
  /** holdoutScores(split.holdout, base, candidate), when the caller has them already */
  scores?: HoldoutScores;
}): FitReport {
  const { split, base, candidate, target } = args;
  const { train, holdout } = split;
  const scores = args.scores ?? holdoutScores(holdout, base, candidate);
  return {
    labels: { fraud: split.fraud, legit: split.count - split.fraud },
    label_sources: { ...split.tally.sources },
    sampling: { ...split.tally.sampling, weight: Math.round(split.tally.sampling.weight * 1e4) / 1e4 },
    train: { decisions: train.count, fraud: train.fraud },
    holdout: { decisions: holdout.count, fraud: holdout.fraud },
    metrics: {
      base: computeMetrics(scores.base, scores.labels),
      candidate: computeMetrics(scores.candidate, scores.labels),
    },
    thresholds: levelFigures(holdout.outcomes(scores.candidate), candidate.thresholds),
    base_thresholds: levelFigures(holdout.outcomes(scores.base), base.thresholds),
    target: target ?? null,
    bias: { base: base.bias, candidate: candidate.bias },
    weights: Object.fromEntries(
      SIGNAL_NAMES.map((n) => [n, { base: base.weights[n], candidate: candidate.weights[n] }]),
    ) as FitReport['weights'],
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
  /** called once the weights are fitted, before the holdout figures (a job's progress) */
  onFitted?: () => void;
  /** fit shapes where the data allow (shapes.ts, knotsFromValues); default true, false: weights only */
  shapes?: boolean;
  /** where sample weights enter the fit: the bias alone (default; intercept.ts) or `full` (a bench's comparison) */
  weighting?: Weighting;
  /** the cost objective: the candidate's economics set from these, and the desk's figures reported */
  cost?: CostInputs;
  /** search for pairwise terms (pair-search.ts); default: with the cost objective */
  pairs?: boolean;
}

/** Four decimals keep a policy document readable; the bound clamp keeps the rounding valid. */
const tidy = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, Math.round(x * 1e4) / 1e4)) + 0;

/**
 * Fits a candidate to labelled decisions: the base policy with the fitted bias and weights and
 * thresholds set on the holdout for the operating point (operatingPoint; all else unchanged), and
 * its report. The decisions come whole (split here by entity) or already split as they streamed
 * in (the job; `holdoutFraction` and `salt` were then the split's own). Throws
 * InsufficientLabelsError when either label has fewer than `minLabelsPerClass` decisions overall,
 * or the train split has none.
 */
export function fitCandidate(
  decisions: readonly LabelledDecision[] | LabelledSplit,
  base: Policy,
  options: CandidateOptions,
): { policy: Policy; report: FitReport; fit: SignalFit; holdout: HoldoutScores } {
  const split =
    decisions instanceof LabelledSplit ? decisions : LabelledSplit.of(decisions, options.holdoutFraction, options.salt);
  const fraud = split.fraud;
  const legit = split.count - fraud;
  const min = options.minLabelsPerClass ?? MIN_LABELS_PER_CLASS;
  if (fraud < min || legit < min) {
    throw new InsufficientLabelsError(
      fraud,
      legit,
      `a fit needs at least ${min} labelled decisions of each label; got ${fraud} fraud and ${legit} legit`,
    );
  }
  const { train, holdout } = split;
  if (train.fraud === 0 || train.fraud === train.count) {
    throw new InsufficientLabelsError(
      fraud,
      legit,
      `the train split (by entity) has ${train.fraud} fraud and ${train.count - train.fraud} legit decisions; a fit needs both`,
    );
  }
  const plan =
    options.shapes === false
      ? undefined
      : planShapes(
          SIGNAL_NAMES,
          (j) => train.column(j),
          (n) => SHAPEABLE.has(n),
        );
  const refit = (pairs: ReadonlyArray<readonly [SignalName, SignalName]>) => {
    const result = fitSignalSamples(train, { lambda: options.lambda, plan, weighting: options.weighting, pairs });
    return { result, policy: candidateOf(base, options.version, result, pairs) };
  };
  let { result: fit, policy: fitted } = refit([]);
  let pairSearch: PairSearch | undefined;
  if (options.pairs ?? options.cost !== undefined) {
    const fits = new Map<Policy, SignalFit>([[fitted, fit]]);
    const found = searchPairs(split, fitted, (pairs) => {
      const next = refit(pairs);
      fits.set(next.policy, next.result);
      return next.policy;
    });
    fitted = found.policy;
    fit = fits.get(fitted)!;
    pairSearch = found.search;
  }
  options.onFitted?.();
  // The thresholds do not change a score, so the fitted weights' scores are the candidate's.
  const scores = holdoutScores(holdout, base, fitted);
  const { thresholds, target } = operatingPoint(holdout, scores, base, options.target);
  const leveled: Policy = { ...fitted, thresholds };
  if (!options.cost)
    return {
      policy: leveled,
      report: withPairs(fitReport({ split, base, candidate: leveled, target, scores }), base, leveled, pairSearch),
      fit,
      holdout: scores,
    };
  const cost = costObjective(split, base, leveled, options.cost);
  const policy: Policy = { ...leveled, economics: cost.economics };
  return {
    policy,
    report: {
      ...withPairs(fitReport({ split, base, candidate: policy, target, scores }), base, policy, pairSearch),
      ...cost,
    },
    fit,
    holdout: scores,
  };
}

/**
 * The base with a fit's bias, weights, shapes and pairs (four decimals, within their bounds); the
 * base's own shapes and pairs are not inherited: the candidate's are the fit's alone.
 */
function candidateOf(
  base: Policy,
  version: string,
  fit: SignalFit,
  pairs: ReadonlyArray<readonly [SignalName, SignalName]>,
): Policy {
  const { lower, upper } = signalBounds();
  const weights = Object.fromEntries(
    SIGNAL_NAMES.map((n, i) => [n, tidy(fit.weights[n], lower[i]!, upper[i]!)]),
  ) as Record<SignalName, number>;
  const shapes: Shapes = {};
  SIGNAL_NAMES.forEach((n, i) => {
    const fitted = fit.shapes[n];
    const shape = fitted && simplify(weights[n], fitted, (x) => tidy(x, lower[i]!, upper[i]!));
    if (shape) shapes[n] = shape;
  });
  const kept: Pair[] = pairs
    .map((signals, k) => ({
      signals: [signals[0], signals[1]] as Pair['signals'],
      weight: tidy(fit.pairs[k]!, 0, WEIGHT_LIMIT),
    }))
    .filter((p) => p.weight > 0);
  const { shapes: _baseShapes, pairs: _basePairs, ...rest } = base;
  return {
    ...rest,
    version,
    bias: tidy(fit.bias, -WEIGHT_LIMIT, WEIGHT_LIMIT),
    weights,
    ...(Object.keys(shapes).length > 0 ? { shapes } : {}),
    ...(kept.length > 0 ? { pairs: kept } : {}),
  };
}

/** The report's pairs: each policy's, and the search that chose the candidate's (when one ran). */
function withPairs(report: FitReport, base: Policy, candidate: Policy, search: PairSearch | undefined): FitReport {
  if (!search) return report;
  return { ...report, pairs: { base: base.pairs ?? [], candidate: candidate.pairs ?? [], search } };
}
