// safe_amount (docs/api.md, "Trust scoring"): the largest amount, in the request's currency, for which the same
// entity and context would score below the policy's `high` threshold. Exact on the currency's
// minor-unit grid: the returned amount a scores below `high` and a + one minor unit scores at or
// above it, both checked with the full model's sum (the values, order and rounding of
// computeSignals + scoreFromSignals), so rounding of signal values, the sort order of the sum and
// Math.round's half-up are all the real ones.
//
// Only the amount-dependent signals move with the amount, and each is non-decreasing in it, so the
// score is a non-decreasing step function of the amount. The step is found on a fast sum (the rest
// summed once): first by a closed form (safe-amount-closed.ts: the breakpoint of the 4-decimal
// values, inverted into an amount and confirmed on the unit and the next, two or three fast
// evaluations as a rule), else by a bisection over integer minor units (about fifty); two
// full-model scores then confirm it.
import cc from 'currency-codes';
import type { Policy } from '../model/policy.ts';
import { logisticScore, scoreFromSignals } from '../model/arithmetic.ts';
import { computeSignals, prepare, type Prepared } from '../model/signal-model.ts';
import type { EntityProfile, ScoreRequest } from '../model/types.ts';
import {
  costModelOf,
  expectedCosts,
  inCostCurrency,
  leastCost,
  probabilityOf,
  type CostModel,
  type Economics,
} from '../model/economics.ts';
import { newAccountsOf } from '../model/new-accounts.ts';
import { amountSums, fastLogOdds } from './amount-sums.ts';
import { closedFormStep } from './safe-amount-closed.ts';

/** ISO 4217 minor-unit digits by code (currency-codes searches its list on every call). */
const isoDigits = new Map<string, number>();

/** Crypto assets are quoted to 8 decimals (a satoshi); fiat to its ISO 4217 minor unit, else 2. */
export function minorUnitDigits(currency: string, cryptoAssets: readonly string[]): number {
  if (cryptoAssets.includes(currency)) return 8;
  let digits = isoDigits.get(currency);
  if (digits === undefined) {
    const listed = cc.code(currency)?.digits;
    digits = typeof listed === 'number' && Number.isInteger(listed) && listed >= 0 && listed <= 8 ? listed : 2;
    // Bounded: codes reach here validated, but a direct caller may pass anything.
    if (isoDigits.size < 1024) isoDigits.set(currency, digits);
  }
  return digits;
}

/**
 * The largest grid point considered (2^51 minor units: 22.5 million BTC, 2.25·10^13 USD). Below it
 * k / 10^digits and (k + 1) / 10^digits are distinct doubles, so "one minor unit more" means
 * something; a threshold beyond it is reported as this amount.
 */
export const MAX_UNITS = 2 ** 51;

/**
 * With the policy's economics (docs/api.md, "Decisions by money"): the largest amount, in minor
 * units of `currency` rounded down, whose least-cost outcome is approve — p moves with the amount
 * through the amount signals, so it is found by the same bisection; null when every amount is
 * approved, 0 when not one minor unit is. Undefined when the amount cannot be put in the cost
 * currency (the threshold's safe amount then stands).
 */
function safeAmountByCost(
  prepared: Prepared,
  currency: string,
  policy: Policy,
  economics: Economics,
): number | null | undefined {
  const model = costModelOf(economics);
  const unit = inCostCurrency(1, currency, model, newAccountsOf(policy).referenceAmounts);
  if (unit === null || !(unit > 0) || !Number.isFinite(unit)) return undefined;
  const z = fastLogOdds(prepared, policy);
  const scale = 10 ** minorUnitDigits(currency, policy.cryptoAssets);
  const approved = (amount: number): boolean => {
    const p = probabilityOf(z(amount));
    if (amount === Infinity) {
      // as the amount grows, each cost grows as its slope: approve stays cheapest when its slope is the least
      const approve = p * model.lossRate;
      const decline = (1 - p) * model.declineRate;
      return approve <= decline && approve <= (1 - model.reviewerAccuracy) * (approve + decline);
    }
    return leastCost(expectedCosts(p, amount * unit, model), model.reviewGainMin) === 'approve';
  };
  // With p held still, the boundary has a closed form; p moves little with the amount, so a few
  // rounds of it land on the boundary, which two tests confirm. Else (p moved too much) the bisection.
  const units = nearBoundary(model, (amount) => probabilityOf(z(amount)), unit, scale, approved);
  if (units !== undefined) return units === null ? null : units / scale;
  const found = locate(approved, (u) => u / scale, MAX_UNITS);
  return found === null ? null : found / scale;
}

/**
 * The largest amount (cost currency) approved at a fixed p: approve ≤ decline, and a review does not
 * save its gain over approve. Infinity when no amount is too large.
 */
function approvedUpTo(m: CostModel, p: number): number {
  const a = p * m.lossRate - (1 - p) * m.declineRate;
  const byDecline = a > 0 ? ((1 - p) * m.declineFixed) / a : Infinity;
  const b = m.reviewerAccuracy * p * m.lossRate - (1 - m.reviewerAccuracy) * (1 - p) * m.declineRate;
  const byReview =
    b > 0 ? (m.reviewCost + m.reviewGainMin + (1 - m.reviewerAccuracy) * (1 - p) * m.declineFixed) / b : Infinity;
  return Math.min(byDecline, byReview);
}

/** The boundary in minor units by the closed form's fixed point, when the exact test confirms it; else undefined. */
function nearBoundary(
  m: CostModel,
  pAt: (amount: number) => number,
  unit: number,
  scale: number,
  approved: (amount: number) => boolean,
): number | null | undefined {
  let amount = 1 / scale;
  for (let round = 0; round < 4; round++) {
    const next = approvedUpTo(m, pAt(amount)) / unit;
    if (!Number.isFinite(next)) return approved(Infinity) ? null : undefined;
    amount = Math.max(next, 1 / scale);
  }
  const units = Math.min(MAX_UNITS, Math.floor(amount * scale));
  for (const u of [units, units - 1, units + 1]) {
    if (u < 1 || u >= MAX_UNITS) continue;
    if (approved(u / scale) && !approved((u + 1) / scale)) return u;
  }
  return undefined;
}

/**
 * The safe amount for `request`'s entity, context and currency (its amount is ignored): a number of
 * the currency's minor units, rounded down; null when no amount reaches `high`, 0 when even one
 * minor unit does.
 */
export function safeAmount(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number): number | null {
  return safeAmountFrom(prepare(profile, request, policy, now), request.currency, policy);
}

/**
 * How the threshold's step was found (bench/safe-amount.ts counts them): by the closed form; by
 * the bisection's first tests alone (null, 0 or the grid's end: no step inside the grid); by the
 * bisection, the closed form not confirmed or not applicable; and, on top of either, again by a
 * bisection on the exact score because the fast sum sat on a rounding boundary.
 */
export interface SafeAmountPaths {
  closed: number;
  ends: number;
  bisection: number;
  exactBisection: number;
}

/**
 * safeAmount from the prepared terms a score was computed with (model.ts, evaluate): no second pass over the profile.
 */
export function safeAmountFrom(
  prepared: Prepared,
  currency: string,
  policy: Policy,
  paths?: SafeAmountPaths,
): number | null {
  return searched(prepared, currency, policy, true, paths);
}

/**
 * safeAmountFrom without the closed form: the bisection alone, as before issue 42. The same answer on
 * every input (test/trust/safe-amount-closed-form.test.ts checks it); kept as the reference and the
 * bench's "before".
 */
export function safeAmountByBisection(prepared: Prepared, currency: string, policy: Policy): number | null {
  return searched(prepared, currency, policy, false);
}

function searched(
  prepared: Prepared,
  currency: string,
  policy: Policy,
  closedForm: boolean,
  paths?: SafeAmountPaths,
): number | null {
  if (policy.economics) {
    const byCost = safeAmountByCost(prepared, currency, policy, policy.economics);
    if (byCost !== undefined) return byCost;
  }
  const high = policy.thresholds.high;
  const scale = 10 ** minorUnitDigits(currency, policy.cryptoAssets);
  const at = (units: number) => units / scale;
  const sums = amountSums(prepared, policy);
  const exact = (amount: number) => sums.exact(amount) < high;
  const fastBelow = (amount: number) => logisticScore(sums.fast(amount)) < high;
  const t = prepared.terms;
  // Every amount signal is at its cap from ln a = mean + std·(tolerance + cap) on (the history's excess).
  // With a tier limit, the excess over the limit saturates from limit·e^(std·cap) on.
  const saturated = Math.max(
    Math.exp(t.logMean + t.std * (t.toleranceSigma + t.cap)),
    t.limit * Math.exp(t.std * t.cap),
  );
  const top = t.hasHistory ? Math.min(MAX_UNITS, Math.max(2, Math.ceil(saturated * scale) + 1)) : MAX_UNITS;

  // A unit the closed form confirms is the bisection's answer: the fast sum, non-decreasing in the
  // amount, has exactly one step (safe-amount-closed.ts says when that holds to the bit).
  const closed = closedForm ? closedFormStep(t, policy, sums.fastOfValues, fastBelow, scale, top) : undefined;
  const found = closed ?? locate(fastBelow, at, top);
  if (paths) {
    if (closed !== undefined) paths.closed++;
    else if (found === null || found === 0 || found === top) paths.ends++;
    else paths.bisection++;
  }
  // Checked with the exact score; in the rare case the fast sum sat on a rounding boundary, redo it exactly.
  const ok =
    found === null
      ? exact(Infinity)
      : found === 0
        ? !exact(at(1))
        : found === top
          ? exact(at(top))
          : exact(at(found)) && !exact(at(found + 1));
  if (!ok && paths) paths.exactBisection++;
  const units = ok ? found : locate(exact, at, top);
  return units === null ? null : at(units);
}

/**
 * The answer in minor units under `below` (an amount → score < high test, non-increasing in the
 * amount): null when even an unbounded amount is below, 0 when one unit is not, `top` when the
 * step lies beyond it, else the last unit below.
 */
function locate(below: (amount: number) => boolean, at: (units: number) => number, top: number): number | null {
  // The amount signals saturate (their caps): the score for an unbounded amount is the largest.
  if (below(Infinity)) return null;
  if (!below(at(1))) return 0;
  if (below(at(top))) return top;
  let lo = 1;
  let hi = top;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (below(at(mid))) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Checks a safe amount against the full model (used by tests and by the docs' worked examples). */
export function scoreForAmount(
  profile: EntityProfile,
  request: ScoreRequest,
  policy: Policy,
  now: number,
  amount: number,
): number {
  return scoreFromSignals(policy.bias, computeSignals(profile, { ...request, amount }, policy, now));
}
