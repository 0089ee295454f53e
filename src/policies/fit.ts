// Constrained, L2-regularised logistic regression (docs/api.md, "Policies": the fit of a policy's
// weights, signal-fit.ts, runs on it). No maintained npm package does bound-constrained
// optimisation well enough to depend on, and with tens of columns a dense projected Newton method
// is short, exact and deterministic: Newton steps on the variables not held at a bound, a
// backtracking line search along the projected path, and convergence on the projected gradient.
import { solveSpd } from './linear.ts';

/** The data cannot identify a model: one label is missing. Maps to 422 insufficient_labels. */
export class InsufficientLabelsError extends Error {
  readonly code = 'insufficient_labels';
  constructor(
    readonly fraud: number,
    readonly legit: number,
    detail = `a fit needs both labels; got ${fraud} fraud and ${legit} legit`,
  ) {
    super(detail);
    this.name = 'InsufficientLabelsError';
  }
}

export interface FitOptions {
  /**
   * L2 penalty (λ/2)·Σ w² on the weights (never the bias), added to the summed (not averaged)
   * log-loss: a Gaussian prior of variance 1/λ, whose pull fades as labelled data grows, so a large
   * fit stays calibrated while a small or separable one stays finite. Default 1.
   */
  lambda?: number;
  /** per-weight bounds; default unbounded */
  lower?: readonly number[];
  upper?: readonly number[];
  biasLower?: number;
  biasUpper?: number;
  maxIterations?: number;
  /** stop when the projected gradient's largest component ≤ tolerance · total sample weight */
  tolerance?: number;
}

export interface FitResult {
  bias: number;
  weights: number[];
  /** the penalised objective at the solution */
  loss: number;
  iterations: number;
  converged: boolean;
}

export const DEFAULT_LAMBDA = 1;

const softplus = (z: number): number => (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)));
const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));
const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/** Rows in a block: `x` row-major (the samples' width values a row), labels 0/1, sample weights (null: all 1). */
export interface SampleBlock {
  n: number;
  x: Float64Array;
  y: Uint8Array;
  s: Float64Array | null;
}

/**
 * The rows of a fit, visited block by block in a fixed order (the sums below are then the same,
 * bit for bit, however the rows are held): one block for arrays, many for a large fit's compact
 * columns (samples.ts), which never hold a row as an object.
 */
export interface Samples {
  readonly width: number;
  each(): Iterable<SampleBlock>;
}

interface Problem {
  data: Samples;
  lambda: number;
  lo: number[];
  hi: number[];
}

/** θ = [bias, w₁ … w_d]. */
function objective(p: Problem, theta: readonly number[]): number {
  let f = 0;
  const d = p.data.width;
  for (const { n, x, y, s } of p.data.each()) {
    for (let i = 0; i < n; i++) {
      const at = i * d;
      let z = theta[0]!;
      for (let j = 0; j < d; j++) z += theta[j + 1]! * x[at + j]!;
      f += (s ? s[i]! : 1) * (softplus(z) - y[i]! * z);
    }
  }
  for (let k = 1; k < theta.length; k++) f += 0.5 * p.lambda * theta[k]! * theta[k]!;
  return f;
}

function derivatives(p: Problem, theta: readonly number[]): { g: number[]; H: number[][] } {
  const m = theta.length;
  const d = p.data.width;
  const g = new Array<number>(m).fill(0);
  const H = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  const row = new Array<number>(m).fill(1);
  for (const { n, x, y, s } of p.data.each()) {
    for (let i = 0; i < n; i++) {
      const at = i * d;
      let z = theta[0]!;
      for (let j = 0; j < d; j++) {
        row[j + 1] = x[at + j]!;
        z += theta[j + 1]! * x[at + j]!;
      }
      const q = sigmoid(z);
      const w = s ? s[i]! : 1;
      const r = w * (q - y[i]!);
      const h = w * q * (1 - q);
      for (let a = 0; a < m; a++) {
        g[a]! += r * row[a]!;
        if (h === 0) continue;
        const hx = h * row[a]!;
        const Ha = H[a]!;
        for (let b = a; b < m; b++) Ha[b]! += hx * row[b]!;
      }
    }
  }
  for (let k = 1; k < m; k++) {
    g[k]! += p.lambda * theta[k]!;
    H[k]![k]! += p.lambda;
  }
  for (let a = 0; a < m; a++) for (let b = 0; b < a; b++) H[a]![b] = H[b]![a]!;
  return { g, H };
}

/** Checks every row and sums the sample weights (all, and the fraud rows'), in row order. */
function validate(data: Samples): { total: number; positive: number } {
  const d = data.width;
  let fraud = 0;
  let legit = 0;
  let total = 0;
  let positive = 0;
  let row = 0;
  for (const { n, x, y, s } of data.each()) {
    for (let i = 0; i < n; i++, row++) {
      for (let j = i * d; j < (i + 1) * d; j++)
        if (!Number.isFinite(x[j]!)) throw new RangeError(`fit: row ${row} has a non-finite feature`);
      const w = s ? s[i]! : 1;
      if (!(Number.isFinite(w) && w >= 0)) throw new RangeError(`fit: row ${row} has an invalid sample weight`);
      if (y[i] !== 0 && y[i] !== 1) throw new RangeError(`fit: row ${row} has a label other than 0 or 1`);
      total += w;
      if (y[i] === 1) positive += w;
      if (w > 0) {
        if (y[i] === 1) fraud++;
        else legit++;
      }
    }
  }
  if (fraud === 0 || legit === 0) throw new InsufficientLabelsError(fraud, legit);
  return { total, positive };
}

/** Rows given as arrays, as one block. */
export function arraySamples(
  X: readonly (readonly number[])[],
  y: readonly number[],
  s: readonly number[] | undefined,
  d: number,
): Samples {
  if (X.length !== y.length || (s !== undefined && X.length !== s.length))
    throw new RangeError('fit: X, y and the sample weights differ in length');
  const block: SampleBlock = {
    n: X.length,
    x: new Float64Array(X.length * d),
    y: new Uint8Array(X.length),
    s: s ? Float64Array.from(s) : null,
  };
  for (let i = 0; i < X.length; i++) {
    const row = X[i]!;
    if (row.length !== d) throw new RangeError(`fit: row ${i} has ${row.length} features, expected ${d}`);
    // A label other than 0 or 1 would wrap in the byte column, so it is refused here.
    if (y[i] !== 0 && y[i] !== 1) throw new RangeError(`fit: row ${i} has a label other than 0 or 1`);
    block.x.set(row, i * d);
    block.y[i] = y[i]!;
  }
  return { width: d, each: () => [block] };
}

/**
 * Minimises Σ sᵢ·logloss(yᵢ, σ(b + w·xᵢ)) + (λ/2)·‖w‖² subject to lower ≤ w ≤ upper.
 * Deterministic: the same input gives the same output, bit for bit.
 */
export function fitLogistic(
  X: readonly (readonly number[])[],
  y: readonly (0 | 1)[],
  options: FitOptions & { sampleWeights?: readonly number[] } = {},
): FitResult {
  return fitSamples(arraySamples(X, y, options.sampleWeights, X[0]?.length ?? options.lower?.length ?? 0), options);
}

/** fitLogistic over rows held in blocks (samples.ts): the same arithmetic, in the same order. */
export function fitSamples(data: Samples, options: FitOptions = {}): FitResult {
  const d = data.width;
  const { total, positive } = validate(data);
  const lambda = options.lambda ?? DEFAULT_LAMBDA;
  if (!(Number.isFinite(lambda) && lambda >= 0)) throw new RangeError('fit: lambda must be a finite number ≥ 0');
  const lo = [options.biasLower ?? -Infinity, ...(options.lower ?? new Array<number>(d).fill(-Infinity))];
  const hi = [options.biasUpper ?? Infinity, ...(options.upper ?? new Array<number>(d).fill(Infinity))];
  if (lo.length !== d + 1 || hi.length !== d + 1) throw new RangeError('fit: bounds must have one entry per feature');
  for (let k = 0; k <= d; k++) if (!(lo[k]! <= hi[k]!)) throw new RangeError(`fit: empty bounds for variable ${k}`);
  const p: Problem = { data, lambda, lo, hi };
  const maxIterations = options.maxIterations ?? 200;
  const tolerance = (options.tolerance ?? 1e-9) * Math.max(1, total);

  // Start from the weighted base rate with every weight at (the bound nearest to) zero.
  const theta = lo.map((l, k) => clamp(0, l, hi[k]!));
  theta[0] = clamp(Math.log(positive / (total - positive)), lo[0]!, hi[0]!);
  let f = objective(p, theta);

  for (let iteration = 0; iteration < maxIterations; iteration++) {
    const { g, H } = derivatives(p, theta);
    // A variable at a bound whose gradient pushes it further out is held there.
    const projected = g.map((gk, k) => ((theta[k]! <= lo[k]! && gk > 0) || (theta[k]! >= hi[k]! && gk < 0) ? 0 : gk));
    if (Math.max(...projected.map(Math.abs)) <= tolerance) {
      return { bias: theta[0]!, weights: theta.slice(1), loss: f, iterations: iteration, converged: true };
    }
    // ε-active set (Bertsekas 1982): variables near a bound and pushed towards it take a scaled
    // gradient step that the projection stops at the bound; the rest take the Newton step.
    const eps = Math.min(
      1e-3,
      Math.max(...theta.map((t, k) => Math.abs(t - clamp(t - g[k]! / Math.max(1, total), lo[k]!, hi[k]!)))),
    );
    const free: number[] = [];
    const direction = new Array<number>(d + 1).fill(0);
    for (let k = 0; k <= d; k++) {
      const active = (theta[k]! <= lo[k]! + eps && g[k]! > 0) || (theta[k]! >= hi[k]! - eps && g[k]! < 0);
      if (active) direction[k] = -g[k]! / Math.max(H[k]![k]!, 1e-12);
      else free.push(k);
    }
    if (free.length > 0) {
      const step = solveSpd(
        free.map((a) => free.map((b) => H[a]![b]!)),
        free.map((k) => -g[k]!),
      );
      free.forEach((k, i) => (direction[k] = step[i]!));
    }
    const next =
      lineSearch(p, theta, f, g, direction) ??
      lineSearch(
        p,
        theta,
        f,
        g,
        g.map((gk) => -gk / Math.max(1, total)),
      );
    if (next === null) {
      // No descent along either path: θ is optimal to machine precision.
      return { bias: theta[0]!, weights: theta.slice(1), loss: f, iterations: iteration, converged: true };
    }
    const moved = next.theta.some((t, k) => t !== theta[k]);
    for (let k = 0; k <= d; k++) theta[k] = next.theta[k]!;
    f = next.f;
    if (!moved)
      return { bias: theta[0]!, weights: theta.slice(1), loss: f, iterations: iteration + 1, converged: true };
  }
  return { bias: theta[0]!, weights: theta.slice(1), loss: f, iterations: maxIterations, converged: false };
}

/**
 * Backtracking (Armijo) line search along the projected path θ(α) = P(θ + α·direction): the full
 * step, then the step cut where the first free variable meets its bound, then halvings. The cut
 * step matters when a long Newton step in a flat direction is bent by the projection, where
 * halving alone would only ever earn tiny steps.
 */
function lineSearch(
  p: Problem,
  theta: number[],
  f: number,
  g: number[],
  direction: number[],
): { theta: number[]; f: number } | null {
  const at = (alpha: number) => theta.map((t, k) => clamp(t + alpha * direction[k]!, p.lo[k]!, p.hi[k]!));
  const decrease = (candidate: number[]) => candidate.reduce((a, c, k) => a + g[k]! * (c - theta[k]!), 0);
  const full = at(1);
  const predicted = decrease(full);
  if (predicted < 0 && -predicted <= 1e-11 * Math.max(1, Math.abs(f))) {
    // The predicted decrease is below the precision of f itself, so the Armijo test would only
    // compare rounding noise; near the optimum the full Newton step is the reliable one.
    return { theta: full, f: objective(p, full) };
  }
  let toBound = Infinity;
  for (let k = 0; k < theta.length; k++) {
    const d = direction[k]!;
    const room = d < 0 ? (p.lo[k]! - theta[k]!) / d : d > 0 ? (p.hi[k]! - theta[k]!) / d : Infinity;
    if (room > 0) toBound = Math.min(toBound, room);
  }
  const steps = toBound < 1 && toBound > 1e-12 ? [1, toBound] : [1];
  for (let alpha = 0.5; alpha > 1e-12; alpha /= 2) steps.push(alpha);
  for (const alpha of steps) {
    const candidate = at(alpha);
    const expected = decrease(candidate);
    if (!(expected < 0)) return null;
    const fc = objective(p, candidate);
    if (fc <= f + 1e-4 * expected) return { theta: candidate, f: fc };
  }
  return null;
}
