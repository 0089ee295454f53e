// The signals that depend on the request's amount, apart from the rest of the model: they are
// the part safe-amount.ts evaluates again and again while it searches for the largest safe amount,
// so they are computed from fixed per-entity terms, and also without allocating.
import type { SignalName } from './policy.ts';
import { cashOutBurst, newCounterpartyLarge } from './features.ts';

const clip = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/** The signals whose value depends on the request's amount (non-decreasing in it). */
export const AMOUNT_SIGNALS = [
  'amount_vs_history',
  'cash_out_burst',
  'new_counterparty_large_trade',
] as const satisfies readonly SignalName[];
export type AmountSignal = (typeof AMOUNT_SIGNALS)[number];

/** What the amount-dependent signals need, fixed for one entity and context. */
export interface AmountTerms {
  /** false: no completed trade in this currency; the amount signals are then constant */
  hasHistory: boolean;
  logMean: number;
  std: number;
  toleranceSigma: number;
  cap: number;
  noHistoryValue: number;
  /** the request names a counterparty the entity has never completed a trade with */
  newCounterparty: boolean;
  /** ln of the day's completed trades over the entity's own daily norm + 1, ≥ 0, capped */
  burst: number;
  /**
   * the entity's tier limit in the request's currency (docs/signals.md, "New accounts"); 0: the currency has no
   * reference amount
   */
  limit: number;
  /**
   * no warning sign at all (model.ts, WARNING_SIGNS): only then does an amount within the limit carry no amount risk
   */
  clean: boolean;
}

/**
 * How far the amount lies beyond what the entity has shown it can carry, in standard deviations of
 * ln(amount), capped. With a history in the currency: beyond its own mean and the tolerance; for
 * a clean entity (no warning sign), never more than beyond its tier limit, so an amount within the
 * limit costs nothing. Without a history: beyond the tier limit (0 when the currency has none).
 * Non-decreasing in the amount, non-increasing in the limit, and never lower for an entity with a
 * warning sign than for the same entity without.
 */
function amountExcess(t: AmountTerms, amount: number): number {
  if (!(amount > 0)) return 0;
  const overLimit = t.limit > 0 ? clip(Math.log(amount / t.limit) / t.std, 0, t.cap) : null;
  if (!t.hasHistory) return overLimit ?? 0;
  const own = clip((Math.log(amount) - t.logMean) / t.std - t.toleranceSigma, 0, t.cap);
  return t.clean && overLimit !== null ? Math.min(own, overLimit) : own;
}

/**
 * amount_vs_history: the excess; without a history, at least `noHistoryValue` ("unknown territory")
 * for an entity with a warning sign. A clean entity is measured against its tier limit alone (in a
 * currency without a reference amount: not at all, so a clean record never adds risk there either).
 */
function amountVsHistory(t: AmountTerms, excess: number): number {
  if (t.hasHistory || t.clean) return excess;
  return Math.max(t.noHistoryValue, excess);
}

/**
 * Raw values of the amount-dependent signals, into `out` in AMOUNT_SIGNALS order without allocating
 * (safe-amount.ts's search); each is non-decreasing in `amount` (+∞ gives the caps).
 */
export function amountValuesInto(t: AmountTerms, amount: number, out: number[]): void {
  const excess = amountExcess(t, amount);
  out[0] = amountVsHistory(t, excess);
  out[1] = cashOutBurst(excess, t.burst);
  out[2] = newCounterpartyLarge(t.newCounterparty, excess);
}
