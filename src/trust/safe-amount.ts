// safe_amount (CONTRACT §5): the largest amount, in the request's currency, for which the same
// entity and context would score below the policy's `high` threshold. Exact on the currency's
// minor-unit grid: the returned amount a scores below `high` and a + one minor unit scores at or
// above it, both checked with the full model (computeSignals + scoreFromSignals), so rounding of
// signal values, the sort order of the sum and Math.round's half-up are all the real ones.
//
// Only the amount-dependent signals move with the amount, and each is non-decreasing in it, so the
// score is a non-decreasing step function of the amount: a bisection over integer minor units,
// re-evaluating only those signals, finds the step. About fifty evaluations of three logarithms.
import cc from 'currency-codes';
import type { Policy, SignalName } from '../config/policy.ts';
import { amountValues, assembleSignals, computeSignals, prepare, scoreFromSignals, type Prepared } from './model.ts';
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

function scoreAt(prepared: Prepared, policy: Policy, amount: number): number {
  const raw = { ...prepared.fixed, ...amountValues(prepared.terms, amount) } as Record<SignalName, number>;
  return scoreFromSignals(policy.bias, assembleSignals(raw, policy));
}

/**
 * The safe amount for `request`'s entity, context and currency (its amount is ignored): a number of
 * the currency's minor units, rounded down; null when no amount reaches `high`, 0 when even one
 * minor unit does.
 */
export function safeAmount(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number): number | null {
  const high = policy.thresholds.high;
  const prepared = prepare(profile, request, policy, now);
  const digits = minorUnitDigits(request.currency, policy.cryptoAssets);
  const scale = 10 ** digits;
  const at = (units: number) => units / scale;
  const below = (units: number) => scoreAt(prepared, policy, at(units)) < high;

  // The amount signals saturate (their caps): the score for an unbounded amount is the largest.
  if (scoreAt(prepared, policy, Infinity) < high) return null;
  if (!below(1)) return 0;
  let lo = 1;
  let hi: number;
  const t = prepared.terms;
  if (t.hasHistory) {
    // Every amount signal is at its cap from ln a = mean + std·(tolerance + cap) on.
    const saturated = Math.exp(t.logMean + t.std * (t.toleranceSigma + t.cap));
    hi = Math.min(MAX_UNITS, Math.max(2, Math.ceil(saturated * scale) + 1));
  } else hi = MAX_UNITS;
  if (below(hi)) return at(hi);
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (below(mid)) lo = mid;
    else hi = mid;
  }
  return at(lo);
}

/** Checks a safe amount against the full model (used by tests and by the docs' worked examples). */
export function scoreForAmount(profile: EntityProfile, request: ScoreRequest, policy: Policy, now: number, amount: number): number {
  return scoreFromSignals(policy.bias, computeSignals(profile, { ...request, amount }, policy, now));
}
