// The safe amount's step (docs/decisions.md, "safe_amount method") by a closed form instead of a
// bisection over the amount (issue 42, item 4).
// The three amount signals are functions of one number, the amount excess e (amount-signals.ts):
// amount_vs_history and new_counterparty_large_trade are e (or max(noHistoryValue, e)),
// cash_out_burst is √(e·burst). The model sums them rounded to 4 decimals (arithmetic.ts,
// modelValue), so the score is a step function of two integers, k = round(10⁴·e) and
// j = round(10⁴·√(e·burst)), and its step lies on a breakpoint e = (k − ½)/10⁴ or
// e = ((j − ½)/10⁴)²/burst. Those are found with the model's own sum of the values (no
// logarithm), by secant steps from the straight line between the ends (exact at once when the
// amount weights are plain: the score is then linear in k); the breakpoint is inverted into an
// amount with one exponential, and the minor unit below it is confirmed on the real search
// predicate (u below high, u + 1 not), its neighbours tried when rounding puts it a unit or a few
// off. Whatever is not confirmed goes back to the bisection (safe-amount.ts), so exactness never
// rests on the closed form.
import type { Policy } from '../model/policy.ts';
import { logisticScore } from '../model/arithmetic.ts';
import { AMOUNT_SIGNALS, type AmountTerms } from '../model/amount-signals.ts';

/** modelValue's grid: 4 decimals. */
const GRID = 1e4;

/** A shape's smallest slope within this factor of its largest: see monotoneByConstruction. */
const SLOPE_RATIO = 1e-6;

/** Amount signal values up to this (the cap, and the burst under cash_out_burst's root): see monotoneByConstruction. */
const MAX_VALUE = 1000;

/** Secant and bisection steps allowed per search (a plain bisection of 0…4·10⁴ takes 16). */
const MAX_STEPS = 40;

/**
 * Whether the fast sum never falls as the amount grows, to the last bit: then it has one step,
 * the bisection's, and a confirmed unit is the bisection's answer. Plain weights and pair weights
 * ≥ 0 give it (every operation on the way is a correctly rounded monotone one). A shaped signal's
 * term is g(v)/v·v (arithmetic.ts, weightAt), within some 5·10⁻¹⁵ of g(v) relatively, so within
 * 5·10⁻¹² of the largest slope for values up to MAX_VALUE; with every slope positive and within
 * SLOPE_RATIO of the largest, one step of a value (10⁻⁴) moves g by at least 10⁻¹⁰ of it, far
 * more. A flat or near-flat piece could wobble by an ulp across the threshold (then the fast sum
 * may have more than one step, and the bisection's pick is its own), so that policy keeps the
 * bisection.
 */
function monotoneByConstruction(policy: Policy, terms: AmountTerms): boolean {
  if (!(terms.cap <= MAX_VALUE && terms.burst <= MAX_VALUE)) return false;
  if (policy.pairs?.some((p) => !(p.weight >= 0))) return false;
  for (const name of AMOUNT_SIGNALS) {
    const weight = (policy.weights as Partial<Policy['weights']>)[name] ?? 0;
    if (!(weight >= 0)) return false;
    const shape = policy.shapes?.[name];
    if (shape === undefined) continue;
    const slopes = weight > 0 ? [weight, ...shape.slopes] : shape.slopes;
    const least = Math.min(...slopes);
    if (!(least > 0) || least < SLOPE_RATIO * Math.max(...slopes)) return false;
  }
  return true;
}

/**
 * The least integer x in [lo, hi] whose log-odds z(x) (non-decreasing) is not `under`; undefined
 * when even z(hi) is under or the steps run out. Secant steps aim at zStar (where the score
 * turns), each checked with its neighbour so an exact aim ends the search at once; when one end
 * stays twice in a row its distance to zStar is halved (the Illinois rule: cash_out_burst's root
 * makes z concave, where plain secant steps creep up on the step from one side).
 */
function firstReaching(
  lo: number,
  hi: number,
  z: (x: number) => number,
  zStar: number,
  under: (z: number) => boolean,
): number | undefined {
  let zHi = z(hi);
  if (under(zHi)) return undefined;
  let zLo = z(lo);
  if (!under(zLo)) return lo;
  let fLo = zLo - zStar;
  let fHi = zHi - zStar;
  let kept = 0;
  for (let step = 0; hi - lo > 1; step++) {
    if (step >= MAX_STEPS) return undefined;
    let x = Math.ceil(lo + (-fLo / (fHi - fLo)) * (hi - lo));
    if (!(x > lo)) x = lo + 1;
    if (!(x < hi)) x = hi - 1;
    const zx = z(x);
    if (under(zx)) {
      [lo, zLo] = [x, zx];
      if (x + 1 < hi) {
        const z1 = z(x + 1);
        if (!under(z1)) return x + 1;
        [lo, zLo] = [x + 1, z1];
      }
      fLo = zLo - zStar;
      if (kept > 0) fHi /= 2;
      kept = 1;
    } else {
      [hi, zHi] = [x, zx];
      if (x - 1 > lo) {
        const z1 = z(x - 1);
        if (under(z1)) return x;
        [hi, zHi] = [x - 1, z1];
      }
      fHi = zHi - zStar;
      if (kept < 0) fLo /= 2;
      kept = -1;
    }
  }
  return hi;
}

/** The least amount whose excess (amount-signals.ts, amountExcess) reaches e, 0 < e ≤ cap. */
function amountFor(t: AmountTerms, e: number): number {
  const overLimit = t.limit * Math.exp(t.std * e);
  if (!t.hasHistory) return overLimit;
  const own = Math.exp(t.logMean + t.std * (t.toleranceSigma + e));
  return t.clean && t.limit > 0 ? Math.max(own, overLimit) : own;
}

/**
 * The safe amount's step in minor units by the closed form: u in [1, top) with below(u / scale)
 * and not below((u + 1) / scale), `below` being the bisection's own predicate (the fast sum's
 * score under high); undefined when the closed form does not apply, the step is not inside the
 * grid (null, 0 and top are the bisection's first three tests), or the candidate is not confirmed.
 * `ofValues` is the same sum as `below`'s, of the amount signals' raw values (amount-sums.ts).
 */
export function closedFormStep(
  t: AmountTerms,
  policy: Policy,
  ofValues: (values: readonly number[]) => number,
  below: (amount: number) => boolean,
  scale: number,
  top: number,
): number | undefined {
  // Without a history or a tier limit the excess is 0 at every amount: no step inside the grid.
  if (!(t.hasHistory || t.limit > 0) || !monotoneByConstruction(policy, t)) return undefined;
  const high = policy.thresholds.high;
  // Math.round rounds half up: the score reaches high from 100·σ(z) = high − ½ on.
  const zStar = Math.log((high - 0.5) / (100.5 - high));
  const under = (z: number) => logisticScore(z) < high;
  const burst = Math.max(0, t.burst);
  const plain = t.hasHistory || t.clean;
  const values = [0, 0, 0];
  const zAt = (k: number, j: number): number => {
    values[0] = plain ? k / GRID : Math.max(t.noHistoryValue, k / GRID);
    values[1] = j / GRID;
    values[2] = t.newCounterparty ? k / GRID : 0;
    return ofValues(values);
  };
  const J = (e: number) => Math.round(Math.sqrt(e * burst) * GRID);
  const kCap = Math.round(t.cap * GRID);
  // Within k's cell (where round(10⁴·e) = k) j only grows: the cell's largest score is at its end.
  const cellEnd = (k: number) => (k >= kCap ? t.cap : (k + 0.5) / GRID);
  const k = firstReaching(0, kCap, (x) => zAt(x, J(cellEnd(x))), zStar, under);
  if (k === undefined) return undefined;
  const start = (k - 0.5) / GRID;
  const j0 = k === 0 ? 0 : J(start);
  let e: number;
  if (k > 0 && !under(zAt(k, j0))) e = start;
  else {
    // The step is where √(e·burst) rounds up to j inside the cell.
    const j = firstReaching(j0, J(cellEnd(k)), (x) => zAt(k, x), zStar, under);
    if (j === undefined || j === j0) return undefined;
    e = Math.max(start, ((j - 0.5) / GRID) ** 2 / burst);
  }
  return settle(Math.ceil(amountFor(t, e) * scale) - 1, (u) => below(u / scale), top);
}

/** Doublings tried outward from the candidate (to 2⁶ units away) before giving it up. */
const MAX_DOUBLINGS = 6;

/**
 * The step near candidate u, on the real predicate: u when it is below and u + 1 not; else
 * outward by 1, 2, 4… units until the step is bracketed, then halving. Rounding puts the
 * candidate a unit off, a few more on the largest grids (10⁻⁸ of ten million is finer than the
 * doubles' ln can tell apart); undefined when the step is not in [1, top) near u.
 */
function settle(u: number, below: (units: number) => boolean, top: number): number | undefined {
  if (!(u >= 1 && u < top)) return undefined;
  let lo: number;
  let hi: number;
  if (below(u)) {
    lo = u;
    for (let d = 1; ; d *= 2) {
      const x = Math.min(u + d, top);
      if (!below(x)) {
        hi = x;
        break;
      }
      lo = x;
      if (x === top || d >= 2 ** MAX_DOUBLINGS) return undefined;
    }
  } else {
    hi = u;
    for (let d = 1; ; d *= 2) {
      const x = u - d;
      if (x < 1 || d > 2 ** MAX_DOUBLINGS) return undefined;
      if (below(x)) {
        lo = x;
        break;
      }
      hi = x;
    }
  }
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (below(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}
