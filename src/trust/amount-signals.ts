// The signals that depend on the request's amount, apart from the rest of the model: they are
// the part safe-amount.ts evaluates again and again while it searches for the largest safe amount,
// so they are computed from fixed per-entity terms, and also without allocating.
import type { SignalName } from '../policies/policy.ts';
import { cashOutBurst, newCounterpartyLarge } from './features.ts';

const clip = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/** The signals whose value depends on the request's amount (non-decreasing in it). */
export const AMOUNT_SIGNALS = ['amount_vs_history', 'cash_out_burst', 'new_counterparty_large_trade'] as const satisfies readonly SignalName[];
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
}

/** Standard deviations of ln(amount) above the entity's mean, beyond the tolerance, capped; 0 without history. */
function amountExcess(t: AmountTerms, amount: number): number {
  if (!t.hasHistory) return 0;
  if (!(amount > 0)) return 0;
  return clip((Math.log(amount) - t.logMean) / t.std - t.toleranceSigma, 0, t.cap);
}

/** Raw values of the amount-dependent signals; each is non-decreasing in `amount` (+∞ gives the caps). */
export function amountValues(t: AmountTerms, amount: number): Record<AmountSignal, number> {
  const excess = amountExcess(t, amount);
  return {
    amount_vs_history: t.hasHistory ? excess : t.noHistoryValue,
    cash_out_burst: cashOutBurst(excess, t.burst),
    new_counterparty_large_trade: newCounterpartyLarge(t.newCounterparty, excess),
  };
}

/** amountValues into `out`, in AMOUNT_SIGNALS order, without allocating (safe-amount.ts's search). */
export function amountValuesInto(t: AmountTerms, amount: number, out: number[]): void {
  const excess = amountExcess(t, amount);
  out[0] = t.hasHistory ? excess : t.noHistoryValue;
  out[1] = cashOutBurst(excess, t.burst);
  out[2] = newCounterpartyLarge(t.newCounterparty, excess);
}
