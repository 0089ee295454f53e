// The data behind a fitted policy's report plots (docs/api.md, "Policies"): ROC and precision–recall points,
// calibration bins and score histograms by label, for the base and the candidate, on the fit's
// holdout. Scores are integers 0–100, so each curve has at most 102 points: small enough to keep
// with the report, which is then drawn without reading any decision again.
import type { Policy } from './policy.ts';
import { replayScore } from './arithmetic.ts';
import { curvePoints, scoreHistogram, type CurvePoint, type ScoreHistogram } from './curves.ts';
import { calibrationBins, type CalibrationBin } from './metrics.ts';
import type { HoldoutScores, LabelledDecision } from './report.ts';

interface PolicyPlots {
  curve: CurvePoint[];
  calibration: CalibrationBin[];
  histogram: ScoreHistogram;
}

export interface PlotData {
  base: PolicyPlots;
  candidate: PolicyPlots;
}

function plotsFor(scores: number[], labels: (0 | 1)[]): PolicyPlots {
  return { curve: curvePoints(scores, labels), calibration: calibrationBins(scores, labels), histogram: scoreHistogram(scores, labels) };
}

/** The plots from the scores the report was computed from (report.ts, holdoutScores). */
export function plotsFromScores(scores: HoldoutScores): PlotData {
  return { base: plotsFor(scores.base, scores.labels), candidate: plotsFor(scores.candidate, scores.labels) };
}

export function plotData(holdout: readonly LabelledDecision[], base: Policy, candidate: Policy): PlotData {
  return plotsFromScores({
    labels: holdout.map((d) => d.label),
    base: holdout.map((d) => replayScore(base, d.features)),
    candidate: holdout.map((d) => replayScore(candidate, d.features)),
  });
}
