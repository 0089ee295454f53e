// The data behind a fitted policy's report plots (docs/api.md, "Policies"): ROC and precision–recall
// points, calibration bins and score histograms by label, for the base and the candidate, on the
// fit's holdout, and each shaped signal's contribution curve. Scores are integers 0–100, so each
// curve has at most 102 points: small enough to keep with the report, which is then drawn without
// reading any decision again.
import { SIGNAL_NAMES, type Policy, type SignalName } from '../model/policy.ts';
import { modelValue, replayScore, weightAt } from '../model/arithmetic.ts';
import { curvePoints, scoreHistogram, type CurvePoint, type ScoreHistogram } from './curves.ts';
import { calibrationBins, type CalibrationBin } from './metrics.ts';
import type { HoldoutScores, LabelledDecision } from './report.ts';

interface PolicyPlots {
  curve: CurvePoint[];
  calibration: CalibrationBin[];
  histogram: ScoreHistogram;
}

/** One shaped signal's contribution (log-odds) against its value, under both policies. */
export interface ShapePlot {
  name: SignalName;
  /** the candidate's knots, where its slope changes */
  knots: number[];
  points: { value: number; base: number; candidate: number }[];
}

export interface PlotData {
  base: PolicyPlots;
  candidate: PolicyPlots;
  /** the signals the candidate shapes (absent in reports stored before shapes) */
  shapes?: ShapePlot[];
}

function plotsFor(scores: number[], labels: (0 | 1)[]): PolicyPlots {
  return {
    curve: curvePoints(scores, labels),
    calibration: calibrationBins(scores, labels),
    histogram: scoreHistogram(scores, labels),
  };
}

/** The contribution weight·value the score sums, as scoreValues computes it. */
const contribution = (policy: Policy, name: SignalName, x: number): number => weightAt(policy, name, x) * x + 0;

/**
 * Each shaped signal's curve from 0 to the largest value the holdout saw (`largest`, at least a
 * quarter past the last knot): piecewise linear, so its ends, the knots of either policy and a few
 * points between are the whole curve.
 */
export function shapePlots(largest: (name: SignalName) => number, base: Policy, candidate: Policy): ShapePlot[] {
  return SIGNAL_NAMES.filter((n) => candidate.shapes?.[n]).map((name) => {
    const knots = candidate.shapes![name]!.knots;
    const end = Math.max(largest(name), 1.25 * knots.at(-1)!);
    const xs = new Set([0, end, ...knots, ...(base.shapes?.[name]?.knots ?? []).filter((k) => k < end)]);
    for (let i = 1; i < 8; i++) xs.add(modelValue((end * i) / 8));
    const points = [...xs]
      .sort((a, b) => a - b)
      .map((value) => ({
        value,
        base: contribution(base, name, value),
        candidate: contribution(candidate, name, value),
      }));
    return { name, knots, points };
  });
}

/** The plots from the scores the report was computed from (report.ts, holdoutScores), with the shapes' curves. */
export function plotsFromScores(scores: HoldoutScores, shapes: ShapePlot[] = []): PlotData {
  return {
    base: plotsFor(scores.base, scores.labels),
    candidate: plotsFor(scores.candidate, scores.labels),
    ...(shapes.length > 0 ? { shapes } : {}),
  };
}

export function plotData(holdout: readonly LabelledDecision[], base: Policy, candidate: Policy): PlotData {
  const largest = (name: SignalName) => holdout.reduce((m, d) => Math.max(m, modelValue(d.features[name])), 0);
  return plotsFromScores(
    {
      labels: holdout.map((d) => d.label),
      base: holdout.map((d) => replayScore(base, d.features)),
      candidate: holdout.map((d) => replayScore(candidate, d.features)),
    },
    shapePlots(largest, base, candidate),
  );
}
