// The data behind a fitted policy's report plots (docs/api.md, "Policies"): ROC and precision–recall points,
// calibration bins and score histograms by label, for the base and the candidate, on the fit's
// holdout. Scores are integers 0–100, so each curve has at most 102 points: small enough to keep
// with the report, which is then drawn without reading any decision again.
import type { Policy } from './policy.ts';
import { replayScore } from './arithmetic.ts';
import { curvePoints, scoreHistogram, type CurvePoint, type ScoreHistogram } from './curves.ts';
import { calibrationBins, type CalibrationBin } from './metrics.ts';
import type { LabelledDecision } from './report.ts';

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

export function plotData(holdout: readonly LabelledDecision[], base: Policy, candidate: Policy): PlotData {
  const labels = holdout.map((d) => d.label);
  return {
    base: plotsFor(holdout.map((d) => replayScore(base, d.features)), labels),
    candidate: plotsFor(holdout.map((d) => replayScore(candidate, d.features)), labels),
  };
}
