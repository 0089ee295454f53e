// The fit of a policy under sampled labels, in two stages (docs/learning.md, "Labels from
// reviews"). Sampled review labels carry inverse-probability weights sᵢ = 1/rate (labels.ts,
// trainingExample) so that they stand for the unsampled approvals left out of the fit. Which
// decisions were reviewed depends only on the score, a function of the features the model sees
// (selection on observables): P(fraud | features) is then the same among the labelled decisions as
// over the whole traffic, and an unweighted fit of the weights is consistent for it. Weights of 50
// would only add variance to the ranking, and multiply the reviewer's errors. What the selection
// does bias is a population quantity: the base rate, i.e. the bias (intercept), since the labelled
// mix over-represents the flagged traffic and the model is only an approximation of the truth.
// So:
//   stage 1: (b₁, w) = argmin Σ 1[sᵢ>0]·logloss(yᵢ, σ(b + w·xᵢ)) + (λ/2)·‖w‖² (bounded, fit.ts)
//   stage 2: b = argmin_b Σ sᵢ·logloss(yᵢ, σ(b + ηᵢ)), ηᵢ = w·xᵢ held fixed (an offset)
// Stage 2's optimum solves Σ sᵢ·σ(b + ηᵢ) = Σ sᵢ·yᵢ: the scores then sum, weighted, to the
// weighted fraud count, so score/100 reads as the fraud rate of the traffic the sample stands for,
// while the ranking (w) keeps the unweighted fit's lower variance. With every weight 1 stage 2 has
// nothing to move (stage 1's unpenalised bias already solves that equation), and it is skipped.
import { DEFAULT_LAMBDA, fitSamples, type FitOptions, type FitResult, type SampleBlock, type Samples } from './fit.ts';

const softplus = (z: number): number => (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)));
const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

/** How the sample weights enter a fit: the bias alone (the default, above) or every parameter. */
export type Weighting = 'intercept' | 'full';

/** The rows with every positive sample weight read as 1 (a weight of 0 keeps its row out). */
function unitWeights(data: Samples): Samples {
  const units = new WeakMap<Float64Array, Float64Array>();
  const unit = (s: Float64Array): Float64Array => {
    let u = units.get(s);
    if (!u) units.set(s, (u = s.map((w) => (w > 0 ? 1 : 0))));
    return u;
  };
  return {
    width: data.width,
    *each(): Iterable<SampleBlock> {
      for (const b of data.each()) yield b.s ? { n: b.n, x: b.x, y: b.y, s: unit(b.s) } : b;
    },
  };
}

/** Whether every sample weight is 0 or 1 (then stage 2 is stage 1's own bias). */
function unitOnly(data: Samples): boolean {
  for (const { n, s } of data.each()) if (s) for (let i = 0; i < n; i++) if (s[i] !== 0 && s[i] !== 1) return false;
  return true;
}

export interface InterceptFit {
  bias: number;
  /** Σ sᵢ·logloss at the bias */
  loss: number;
  iterations: number;
}

/**
 * The one-parameter weighted logistic fit with a fixed offset: the b in [lo, hi] minimising
 * Σ sᵢ·[softplus(b + ηᵢ) − yᵢ·(b + ηᵢ)], ηᵢ = Σⱼ wⱼ·xᵢⱼ. The objective is convex in b and its
 * derivative Σ sᵢ·(σ(b + ηᵢ) − yᵢ) increasing, so the root is bracketed and found by Newton steps
 * that fall back to bisection when they leave the bracket; a bound is the optimum when the root
 * lies beyond it. `start` (stage 1's bias) is kept when its derivative is already ≤ tolerance.
 */
export function fitIntercept(
  data: Samples,
  weights: readonly number[],
  start: number,
  options: { lo?: number; hi?: number; tolerance?: number } = {},
): InterceptFit {
  const d = data.width;
  if (weights.length !== d) throw new RangeError(`intercept: ${weights.length} weights for ${d} columns`);
  const eta: number[] = [];
  const s: number[] = [];
  const y: number[] = [];
  let total = 0;
  for (const b of data.each()) {
    for (let i = 0; i < b.n; i++) {
      const w = b.s ? b.s[i]! : 1;
      if (w === 0) continue;
      let z = 0;
      for (let j = 0; j < d; j++) z += weights[j]! * b.x[i * d + j]!;
      eta.push(z);
      s.push(w);
      y.push(b.y[i]!);
      total += w;
    }
  }
  const lo = options.lo ?? -Infinity;
  const hi = options.hi ?? Infinity;
  const tolerance = (options.tolerance ?? 1e-9) * Math.max(1, total);
  const slope = (b: number): { g: number; h: number } => {
    let g = 0;
    let h = 0;
    for (let i = 0; i < eta.length; i++) {
      const q = sigmoid(b + eta[i]!);
      g += s[i]! * (q - y[i]!);
      h += s[i]! * q * (1 - q);
    }
    return { g, h };
  };
  const loss = (b: number): number => eta.reduce((f, e, i) => f + s[i]! * (softplus(b + e) - y[i]! * (b + e)), 0);
  let b = Math.min(hi, Math.max(lo, start));
  let { g, h } = slope(b);
  let iterations = 0;
  // The bracket [below, above]: g < 0 below the root, > 0 above it. Until both ends are known a
  // step is at most `reach` (doubling), so a flat tail's huge Newton step cannot overshoot far.
  let below = g < 0 ? b : -Infinity;
  let above = g > 0 ? b : Infinity;
  let reach = 1;
  while (Math.abs(g) > tolerance && iterations < 200) {
    if ((g > 0 && b <= lo) || (g < 0 && b >= hi)) break; // the root lies beyond the bound
    iterations++;
    const newton = h > 0 ? b - g / h : Number.NaN;
    let next: number;
    if (Number.isFinite(below) && Number.isFinite(above))
      next = newton > below && newton < above ? newton : (below + above) / 2;
    else {
      next = Number.isFinite(newton) ? Math.min(b + reach, Math.max(b - reach, newton)) : b - Math.sign(g) * reach;
      reach *= 2;
    }
    next = Math.min(hi, Math.max(lo, next));
    if (next === b) break;
    b = next;
    ({ g, h } = slope(b));
    if (g < 0) below = b;
    else if (g > 0) above = b;
  }
  return { bias: b, loss: loss(b), iterations };
}

/**
 * The two-stage fit above over rows with sample weights: the weights (and a provisional bias) fitted
 * with every labelled row counting once, then the bias re-estimated with the sample weights and the
 * stage-1 linear score as a fixed offset. `loss` is the weighted penalised objective at the result,
 * as fitSamples would report it for these parameters; `iterations` counts both stages'.
 */
export function fitTwoStage(data: Samples, options: FitOptions = {}): FitResult {
  const first = fitSamples(unitWeights(data), options);
  if (unitOnly(data)) return first;
  const second = fitIntercept(data, first.weights, first.bias, {
    lo: options.biasLower,
    hi: options.biasUpper,
    tolerance: options.tolerance,
  });
  const lambda = options.lambda ?? DEFAULT_LAMBDA;
  const penalty = first.weights.reduce((f, w) => f + 0.5 * lambda * w * w, 0);
  return {
    bias: second.bias,
    weights: first.weights,
    loss: second.loss + penalty,
    iterations: first.iterations + second.iterations,
    converged: first.converged,
  };
}
