// The fit of a policy's weights (docs/api.md, "Policies"): the labelled feature vectors in the
// policy's signal order, each weight bounded to its signal's side of zero, and with a plan the
// shapable signals expanded into ramp columns (shapes.ts) whose coefficients come back as shapes.
// The optimiser itself is fit.ts; with sampled labels' weights, in two stages (intercept.ts).
import { SIGNAL_NAMES, type SignalName } from '../model/policy.ts';
import { WEIGHT_LIMIT, signalBounds, toRecord, toVector, type FeatureRecord } from '../model/feature-vector.ts';
import { collapse, columnSignals, expand, type ExpansionPlan, type Shapes } from '../model/shapes.ts';
import { pairValue } from '../model/pairs.ts';
import { arraySamples, fitSamples, InsufficientLabelsError, type FitOptions, type Samples } from './fit.ts';
import { fitTwoStage, type Weighting } from './intercept.ts';

export interface LabelledFeatures {
  features: FeatureRecord | readonly number[];
  label: 0 | 1;
  /** sample weight, default 1 */
  weight?: number;
}

export interface SignalFit {
  bias: number;
  weights: Record<SignalName, number>;
  /** the pairs' weights (pairs.ts), in the order asked for; empty without pairs */
  pairs: number[];
  /** the shapes fitted under a plan (shapes.ts); empty without one */
  shapes: Shapes;
  loss: number;
  iterations: number;
  converged: boolean;
}

/**
 * What a fit of a policy's weights takes: the penalty and the stopping rule, the shapes' plan, and
 * where the sample weights enter: the bias alone (default, intercept.ts: the weights fitted with
 * each labelled row once, the bias re-estimated weighted) or, `full`, every parameter (the bench's
 * comparison).
 */
type SignalFitOptions = Pick<FitOptions, 'lambda' | 'maxIterations' | 'tolerance'> & {
  plan?: ExpansionPlan;
  weighting?: Weighting;
  /** pairs of signals whose product gets a column of its own (pairs.ts), weight ≥ 0 */
  pairs?: ReadonlyArray<readonly [SignalName, SignalName]>;
};

/**
 * Fits a policy's bias and weights to labelled feature vectors: every weight within the schema's
 * ±100 and on the side of zero its signal's direction allows, the bias within ±100. The values are
 * taken as the model sums them (rounded to 4 decimals). With a `plan` each vector is expanded into
 * ramp columns (shapes.ts, expand), each bounded like its signal's weight, and the coefficients
 * come back as weights and shapes.
 */
export function fitSignalWeights(rows: readonly LabelledFeatures[], options: SignalFitOptions = {}): SignalFit {
  const fraud = rows.filter((r) => r.label === 1 && (r.weight ?? 1) > 0).length;
  const legit = rows.filter((r) => r.label === 0 && (r.weight ?? 1) > 0).length;
  if (fraud === 0 || legit === 0) throw new InsufficientLabelsError(fraud, legit);
  const X = rows.map((r) => toVector(r.features));
  return fitSignalSamples(
    arraySamples(
      X,
      rows.map((r) => r.label),
      rows.map((r) => r.weight ?? 1),
      SIGNAL_NAMES.length,
    ),
    options,
  );
}

/**
 * The rows as the fit's columns: a plan's ramp columns (or the values as they are), then one column
 * per pair, each block built as it is visited into one buffer reused for every block of a pass, so a
 * large fit never holds its expanded matrix (a shaped fit has about three times the columns) and
 * the sums are the same as over a matrix expanded once.
 */
function fitColumns(
  data: Samples,
  plan: ExpansionPlan | undefined,
  pairs: ReadonlyArray<readonly [number, number]>,
): Samples {
  if (!plan && pairs.length === 0) return data;
  const base = plan ? columnSignals(plan).length : data.width;
  const width = base + pairs.length;
  return {
    width,
    *each() {
      let x = new Float64Array(0);
      for (const block of data.each()) {
        if (x.length < block.n * width) x = new Float64Array(block.n * width);
        for (let i = 0; i < block.n; i++) {
          const row = block.x.subarray(i * data.width, (i + 1) * data.width);
          if (plan) expand(row, plan, x, i * width);
          else x.set(row, i * width);
          pairs.forEach(([a, b], k) => (x[i * width + base + k] = pairValue(row[a]!, row[b]!)));
        }
        yield { n: block.n, x, y: block.y, s: block.s };
      }
    },
  };
}

/** fitSignalWeights over rows already in SIGNAL_NAMES order, each value as the model sums it. */
export function fitSignalSamples(data: Samples, options: SignalFitOptions = {}): SignalFit {
  const { plan, weighting, pairs = [], ...fitOptions } = options;
  const signals = signalBounds();
  const column = plan ? columnSignals(plan) : signals.lower.map((_, j) => j);
  const index = (n: SignalName) => SIGNAL_NAMES.indexOf(n);
  const result = (weighting === 'full' ? fitSamples : fitTwoStage)(
    fitColumns(
      data,
      plan,
      pairs.map(([a, b]) => [index(a), index(b)] as const),
    ),
    {
      ...fitOptions,
      lower: [...column.map((j) => signals.lower[j]!), ...pairs.map(() => 0)],
      upper: [...column.map((j) => signals.upper[j]!), ...pairs.map(() => WEIGHT_LIMIT)],
      biasLower: -WEIGHT_LIMIT,
      biasUpper: WEIGHT_LIMIT,
    },
  );
  const own = result.weights.slice(0, column.length);
  const pairWeights = result.weights.slice(column.length);
  if (!plan) return { ...result, weights: toRecord(own), pairs: pairWeights, shapes: {} };
  const { weights, shapes } = collapse(plan, own);
  return { ...result, weights: toRecord(weights), pairs: pairWeights, shapes };
}
