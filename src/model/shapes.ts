// Shaped signals (docs/signals.md, "Shaped signals"): a signal's contribution as a monotone
// piecewise-linear function g of its value instead of one slope. A shape is
// `{ knots: [k₁ < … < k_m], slopes: [s₁ … s_m] }` next to the signal's weight w:
//
//   g(x) = w·min(x, k₁) + Σᵢ sᵢ·clip(x − kᵢ, 0, kᵢ₊₁ − kᵢ)      (k_{m+1} = +∞)
//
// so the weight stays the slope from 0 to the first knot, each knot starts the next slope, and the
// last slope continues beyond the last knot (the signals are capped, so it never runs far). g(0) = 0
// and, every slope having the sign of the signal's direction (policy.ts checks it), g is monotone
// by construction. Pure: the live model, replays, the fit and safe_amount all evaluate the same g.
import type { SignalName } from './policy.ts';

export interface Shape {
  knots: number[];
  slopes: number[];
}

export type Shapes = Partial<Record<SignalName, Shape>>;

/** g(x) for a shape over the weight w (see the header). */
export function evaluateShape(weight: number, shape: Shape, x: number): number {
  const { knots, slopes } = shape;
  let g = weight * Math.min(x, knots[0]!);
  for (let i = 0; i < knots.length && x > knots[i]!; i++) {
    const end = i + 1 < knots.length ? Math.min(x, knots[i + 1]!) : x;
    g += slopes[i]! * (end - knots[i]!);
  }
  return g;
}

/**
 * The weight the score sums for `value` (already as modelValue gives it): the plain weight up to
 * the first knot (so a shaped signal below its first bend scores bit for bit as an unshaped one),
 * beyond it the effective slope g(value)/value, so weight·value is g(value) to the last bit or
 * one rounding of it. It is not rounded further: a coarser effective weight would step down where
 * the value steps up, and break monotonicity.
 */
export function effectiveWeight(weight: number, shape: Shape | undefined, value: number): number {
  if (shape === undefined || !(value > shape.knots[0]!)) return weight;
  return evaluateShape(weight, shape, value) / value;
}

// ---- the fit's side: knots from data, ramp columns, and back to shapes ----

/**
 * The signals a fit may shape: counts, rates and overshoots, whose risk need not grow in proportion
 * (a third trade in an hour is ordinary, a thirtieth is not). Not shaped: the 0/1 signals (one step
 * has no shape), payment_method_risk (its values are the policy's own rating table, already a
 * free value per method) and the products of two signals (interactions), kept as one slope so
 * they stay readable.
 */
export const SHAPEABLE: ReadonlySet<SignalName> = new Set<SignalName>([
  'completed_trades',
  'dispute_rate',
  'cancellation_rate',
  'chargebacks',
  'fraud_reports',
  'new_account',
  'velocity_trades',
  'velocity_volume',
  'amount_vs_history',
  'linked_flagged_entities',
  'cash_out_burst',
  'dormant_reactivation',
  'shared_identifier_entities',
  'new_counterparty_large_trade',
  'network_flags',
  'ring_flagged_entities',
  'ring_size',
]);

/**
 * Knot rule (docs/learning.md, "Shaped signals"): the 25, 50, 75 and 90 % quantiles of the
 * signal's non-zero training values (a zero contributes nothing whatever the slopes), duplicates
 * removed, keeping only knots with at least MIN_SIDE non-zero values at or below and MIN_SIDE
 * strictly above: a slope no data can estimate is not fitted. Binary signals thus get no knot.
 */
const KNOT_QUANTILES = [0.25, 0.5, 0.75, 0.9];
const MIN_SIDE = 30;

/** One signal's plan: its position in SIGNAL_NAMES and its knots (empty: a single column, linear). */
interface SignalPlan {
  name: SignalName;
  knots: number[];
}

/** The expansion of a SIGNAL_NAMES-ordered vector into the fit's columns: one plan per signal, in order. */
export type ExpansionPlan = readonly SignalPlan[];

/** Knots for one signal from its training values (any order; zeros ignored). */
export function knotsFromValues(values: ArrayLike<number>): number[] {
  // A typed array sorts numerically and holds a large fit's column outside the JS heap.
  const kept = new Float64Array(values.length);
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v !== 0 && Number.isFinite(v)) kept[m++] = v;
  }
  const positive = kept.subarray(0, m).sort();
  const knots: number[] = [];
  for (const q of KNOT_QUANTILES) {
    const k = positive[Math.min(positive.length - 1, Math.floor(q * positive.length))];
    if (k === undefined || !(k > 0) || knots.includes(k)) continue;
    const atOrBelow = upperBound(positive, k);
    if (atOrBelow >= MIN_SIDE && positive.length - atOrBelow >= MIN_SIDE) knots.push(k);
  }
  return knots.sort((a, b) => a - b);
}

/** Index of the first element > x in a sorted array. */
function upperBound(sorted: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The plan for vectors in `names` order: the knot rule on each shapeable signal's column (its
 * values in row order, `column(j)`; `shapeable(name)` false: one linear column).
 */
export function planShapes(
  names: readonly SignalName[],
  column: (j: number) => ArrayLike<number>,
  shapeable: (name: SignalName) => boolean = () => true,
): ExpansionPlan {
  return names.map((name, j) => ({ name, knots: shapeable(name) ? knotsFromValues(column(j)) : [] }));
}

/**
 * A vector's fit columns: per signal min(x, k₁) and the ramps clip(x − kᵢ, 0, kᵢ₊₁ − kᵢ) (the last
 * unbounded), so Σ θ·columns is exactly evaluateShape with weight θ₀ and slopes θ₁…; an unshaped
 * signal is its value. Written into `out` from `offset` when given (a row of a preallocated
 * matrix, no allocation per row), else into a new array.
 */
export function expand(vector: ArrayLike<number>, plan: ExpansionPlan): number[];
export function expand<T extends { [i: number]: number }>(
  vector: ArrayLike<number>,
  plan: ExpansionPlan,
  out: T,
  offset?: number,
): T;
export function expand(
  vector: ArrayLike<number>,
  plan: ExpansionPlan,
  out: { [i: number]: number } = [],
  offset = 0,
): { [i: number]: number } {
  let c = offset;
  plan.forEach((p, j) => {
    const x = vector[j]!;
    const { knots } = p;
    if (knots.length === 0) {
      out[c++] = x;
      return;
    }
    out[c++] = Math.min(x, knots[0]!);
    for (let i = 0; i < knots.length; i++) {
      const end = i + 1 < knots.length ? Math.min(x, knots[i + 1]!) : x;
      out[c++] = Math.max(0, end - knots[i]!);
    }
  });
  return out;
}

/** Per column, the index of its signal in the plan (for per-signal bounds). */
export function columnSignals(plan: ExpansionPlan): number[] {
  return plan.flatMap((p, j) => new Array<number>(1 + p.knots.length).fill(j));
}

/**
 * A shape with `round` applied to its slopes: a knot whose slope equals the one before it bends
 * nothing and is dropped (g is unchanged), and a shape left without knots is a plain weight.
 */
export function simplify(weight: number, shape: Shape, round: (x: number) => number = (x) => x): Shape | undefined {
  const knots: number[] = [];
  const slopes: number[] = [];
  let previous = weight;
  shape.knots.forEach((k, i) => {
    const s = round(shape.slopes[i]!);
    if (s === previous) return;
    knots.push(k);
    slopes.push(s);
    previous = s;
  });
  return knots.length > 0 ? { knots, slopes } : undefined;
}

/** Fitted column coefficients (in plan order) back to a weight per signal and the shapes. */
export function collapse(plan: ExpansionPlan, theta: readonly number[]): { weights: number[]; shapes: Shapes } {
  const weights: number[] = [];
  const shapes: Shapes = {};
  let c = 0;
  for (const p of plan) {
    const weight = theta[c++]!;
    weights.push(weight);
    const slopes = p.knots.map(() => theta[c++]!);
    const shape = p.knots.length > 0 ? simplify(weight, { knots: [...p.knots], slopes }) : undefined;
    if (shape) shapes[p.name] = shape;
  }
  return { weights, shapes };
}
