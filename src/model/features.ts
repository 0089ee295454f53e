// The P2P features of issue 10 (docs/signals.md, "P2P patterns"): interactions and aggregates that
// hand-set counters miss. Pure functions of values the model already has; each is non-negative and
// non-decreasing in its risk input, so a risk weight (≥ 0, enforced by the policy) keeps the score
// monotone. Their shape parameters are fixed here rather than in the policy document so that older
// policy files stay valid; the built-in policy version names them (a change here bumps it).

const DAY_MS = 86_400_000;
const clip = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/** A trade gap under this many days is ordinary; dormancy grows by one per doubling beyond it. */
const DORMANT_AFTER_DAYS = 30;
const DORMANT_CAP = 3;
/** Other holders of the entity's identifiers beyond which the signal stops growing (log2 scale). */
const SHARED_IDENTIFIER_CAP = 31;

/**
 * Dormant account waking up: log2 of the gap since its last completed trade over
 * DORMANT_AFTER_DAYS, 0 while within it, capped. No trade yet (or an unknown time): 0.
 */
export function dormancy(lastTradeAt: number | null | undefined, now: number): { value: number; gapDays: number } {
  if (lastTradeAt === null || lastTradeAt === undefined || !Number.isFinite(lastTradeAt) || lastTradeAt <= 0)
    return { value: 0, gapDays: 0 };
  const gapDays = Math.max(0, now - lastTradeAt) / DAY_MS;
  return { value: clip(Math.log2(Math.max(1, gapDays / DORMANT_AFTER_DAYS)), 0, DORMANT_CAP), gapDays };
}

/** Other entities holding the entity's identifiers (summed per identifier), on a log2 scale. */
export function sharedIdentifierValue(others: number | undefined): number {
  const n = others !== undefined && Number.isFinite(others) && others > 0 ? others : 0;
  return Math.log2(1 + Math.min(n, SHARED_IDENTIFIER_CAP));
}

/** Decayed disputes lost for a fraud beyond which fraudulent_dispute_losses stops growing (log2 scale: at most 4). */
const FRAUDULENT_LOSSES_CAP = 15;

/**
 * Disputes lost for a fraud (a third-party payment, a fake proof, an underpayment, no payment; the
 * decayed count), on the log2 scale of the other history counts: 1 for one fresh loss, capped.
 */
export function fraudulentLossesValue(decayed: number | undefined): number {
  const n = decayed !== undefined && Number.isFinite(decayed) && decayed > 0 ? decayed : 0;
  return Math.log2(1 + Math.min(n, FRAUDULENT_LOSSES_CAP));
}

/**
 * The exit scam: a trade far above the entity's own size while it is trading above its own pace.
 * √(amount excess × burst) is 0 unless both are present, and grows with either.
 */
export function cashOutBurst(amountExcess: number, burst: number): number {
  return Math.sqrt(Math.max(0, amountExcess) * Math.max(0, burst));
}

/**
 * Method risk up to this level (a bank transfer's default) is not counted as reversible, so a new
 * trader paying by bank transfer is not pushed to `high` for being new; a card (0.8) counts 0.71.
 */
const REVERSIBLE_ABOVE = 0.3;

/** Reversibility on a 0 … 1 scale: the method risk above REVERSIBLE_ABOVE, rescaled. */
const reversibility = (methodRisk: number): number =>
  clip((methodRisk - REVERSIBLE_ABOVE) / (1 - REVERSIBLE_ABOVE), 0, 1);

/**
 * The interactions of issue 20 (docs/signals.md, "Interactions"): products of other signals'
 * values as the model sums them (rounded), so a vector stored before they existed replays them
 * from its stored parts (model/feature-vector.ts, replayableFeatures) to the same number.
 */
export const INTERACTIONS = {
  /** a first trade with this counterparty, paid by a reversible method: new_counterparty × reversibility */
  reversible_new_counterparty: (v: InteractionParts) => v.new_counterparty * reversibility(v.payment_method_risk),
  /** a first trade with a counterparty in another country: new_counterparty × cross_border */
  cross_border_new_counterparty: (v: InteractionParts) => v.new_counterparty * v.cross_border,
} as const;

/** The signal values the interactions are products of (rounded as the model sums them; absent = 0). */
export interface InteractionParts {
  new_counterparty: number;
  payment_method_risk: number;
  cross_border: number;
}

/** A reversible payment method on a young account (throw-away accounts): youth × reversibility. */
export function youngReversible(newAccount: number, methodRisk: number): number {
  return Math.max(0, newAccount) * reversibility(methodRisk);
}

/** A new counterparty on a trade above the entity's own size: the amount excess when the counterparty is new. */
export function newCounterpartyLarge(isNew: boolean, amountExcess: number): number {
  return isNew ? Math.max(0, amountExcess) : 0;
}

/**
 * Lost disputes in excess of the prior's rate: the Beta-smoothed rate `(lost + α) / (trades + α + β)`
 * minus the prior mean `α / (α + β)`, floored at 0. Equal to `(lost − μ·trades) / (trades + α + β)`
 * (μ the prior mean), so it is positive only while more than μ of the trades ended in a lost
 * dispute: a clean record, or one no worse than the population's prior, adds no risk, and a
 * newcomer is not charged the prior's mean for having no record. Non-decreasing in `lost`,
 * non-increasing in `trades` (counts are the decayed ones; negative or non-finite count as 0).
 */
export function disputeExcess(lost: number, trades: number, alpha: number, beta: number): number {
  const l = Number.isFinite(lost) && lost > 0 ? lost : 0;
  const n = Number.isFinite(trades) && trades > 0 ? trades : 0;
  return Math.max(0, (l + alpha) / (n + alpha + beta) - alpha / (alpha + beta));
}
