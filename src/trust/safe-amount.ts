// safe_amount (CONTRACT §5): the largest amount, in the request's currency, for which the same
// entity and context would score below the policy's `high` threshold. Exact on the currency's
// minor-unit grid: the returned amount a scores below `high` and a + one minor unit scores at or
// above it, both checked with the full model (computeSignals + scoreFromSignals), so rounding of
// signal values, the sort order of the sum and Math.round's half-up are all the real ones.
//
// Only the amount-dependent signals move with the amount, and each is non-decreasing in it, so the
// score is a non-decreasing step function of the amount: a bisection over integer minor units,
// re-evaluating only those signals on top of the rest summed once, finds the step (about fifty
// evaluations of three logarithms); two full-model scores then confirm it. ~40 µs in all.
import cc from 'currency-codes';
import type { Policy, SignalName } from '../config/policy.ts';
import { AMOUNT_SIGNALS, amountValues, assembleSignals, computeSignals, prepare, round4, scoreFromSignals, type Prepared } from './model.ts';
import type { EntityProfile, ScoreRequest } from './types.ts';

/** Crypto assets are quoted to 8 decimals (a satoshi); fiat to its ISO 4217 minor unit, else 2. */
export function minorUnitDigits(currency: string, cryptoAssets: readonly string[]): number {
  if (cryptoAssets.includes(currency)) return 8;
  const digits = cc.code(currency)?.digits;
  return typeof digits === 'number' && Number.isInteger(digits) && digits >= 0 && digits <= 8 ? digits : 2;
}

/**
 * The largest grid point considered (2^51 minor units: 22.5 million BTC, 2.25·10^13 USD). Below it
 * k / 10^digits and (k + 1) / 10^digits are distinct doubles, so "one minor unit more" means
 * something; a threshold beyond it is reported as this amount.
 */
export const MAX_UNITS = 2 ** 51;

/** The score exactly as computeSignals + scoreFromSignals give it (same rounding, order and sum). */
function scoreAt(prepared: Prepared, policy: Policy, amount: number): number {
  const raw = { ...prepared.fixed, ...amountValues(prepared.terms, amount) } as Record<SignalName, number>;
  return scoreFromSignals(policy.bias, assembleSignals(raw, policy));
}

const contribution = (weight: number, raw: number) => {
  const v = Number.isFinite(raw) ? round4(raw) : 0;
  return weight * v;
};

/**
 * The same score with the fixed part summed once, in name order: equal to scoreAt except when z
 * lies within a few ulps of a rounding boundary (the sum's order differs). Used to find the step
 * quickly; the answer is then checked with scoreAt.
 */
function fastScorer(prepared: Prepared, policy: Policy): (amount: number) => number {
  let fixedZ = policy.bias;
  for (const [name, raw] of Object.entries(prepared.fixed) as [SignalName, number][]) fixedZ += contribution(policy.weights[name], raw);
  const w = AMOUNT_SIGNALS.map((n) => policy.weights[n]);
  return (amount) => {
    const v = amountValues(prepared.terms, amount);
    const z = fixedZ + contribution(w[0]!, v[AMOUNT_SIGNALS[0]]) + contribution(w[1]!, v[AMOUNT_SIGNALS[1]]) + contribution(w[2]!, v[AMOUNT_SIGNALS[2]]);
    return Math.round(100 / (1 + Math.exp(-z)));
  };
}

/**
 * The safe amount for `request`'s entity, context and currency (its amount is ignored): a number of
 * the currency's minor units, rounded down; null when no amount reaches `high`, 0 when even one
 * minor unit does.
 */
export function safeAmount(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number): number | null {
  const high = policy.thresholds.high;
  const prepared = prepare(profile, request, policy, now);
  const scale = 10 ** minorUnitDigits(request.currency, policy.cryptoAssets);
  const at = (units: number) => units / scale;
  const exact = (amount: number) => scoreAt(prepared, policy, amount) < high;
  const fast = fastScorer(prepared, policy);
  const t = prepared.terms;
  // Every amount signal is at its cap from ln a = mean + std·(tolerance + cap) on.
  const top = t.hasHistory ? Math.min(MAX_UNITS, Math.max(2, Math.ceil(Math.exp(t.logMean + t.std * (t.toleranceSigma + t.cap)) * scale) + 1)) : MAX_UNITS;

  const found = locate((amount) => fast(amount) < high, at, top);
  // Checked with the exact score; in the rare case the fast sum sat on a rounding boundary, redo it exactly.
  const ok = found === null ? exact(Infinity)
    : found === 0 ? !exact(at(1))
      : found === top ? exact(at(top))
        : exact(at(found)) && !exact(at(found + 1));
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
export function scoreForAmount(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number, amount: number): number {
  return scoreFromSignals(policy.bias, computeSignals(profile, { ...request, amount }, policy, now));
}
