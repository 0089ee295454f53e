// What a policy's decisions do to a desk, measured on labelled decisions (docs/api.md, "Decisions by
// money"): the share of fraud stopped, the honest trades turned away, the fraud money let through,
// the reviews it asks for and what it all costs. A review counts as caught (or as an honest trade
// approved) at the reviewer's accuracy: these are the figures after review. Pure: the fit and the
// backtest hand it each decision's log-odds, label, sample weight and amount in the cost currency.
import { logisticScore, riskLevelFor } from '../model/arithmetic.ts';
import { expectedCosts, leastCost, probabilityOf, type CostModel } from '../model/economics.ts';
import { outcomesOf } from '../model/outcome-policy.ts';
import type { Policy } from '../model/policy.ts';
import type { Label } from './metrics.ts';

/** One labelled decision: z = the policy's log-odds, amount in the cost currency (null: not convertible). */
export interface DeskRow {
  z: number;
  label: Label;
  weight: number;
  amount: number | null;
}

type DeskAction = 'approve' | 'review' | 'decline';
export type Decide = (z: number, amount: number | null) => DeskAction;

/** The policy's level → outcome map on the score σ(z); a hold waits for a person, so it counts as a review. */
export function byLevel(policy: Pick<Policy, 'thresholds' | 'outcomes'>): Decide {
  const map = outcomesOf(policy);
  return (z) => {
    const outcome = map[riskLevelFor(logisticScore(z), policy.thresholds)];
    return outcome === 'hold' ? 'review' : outcome;
  };
}

/** The outcome of least expected cost; a trade whose amount cannot be priced falls back to the level map. */
export function byMoney(model: CostModel, fallback: Decide): Decide {
  return (z, amount) =>
    amount === null
      ? fallback(z, amount)
      : leastCost(expectedCosts(probabilityOf(z), amount, model), model.reviewGainMin);
}

export interface DeskOutcomes {
  decisions: number;
  /** share of fraud not approved, a review counting as caught at the reviewer's accuracy */
  stopped_fraud: number | null;
  /** share of honest trades declined, or reviewed and wrongly declined */
  legit_friction: number | null;
  /** share of honest trades not approved outright (declined or sent to review) */
  legit_not_approved: number | null;
  /** share of honest trades declined outright */
  legit_declined: number | null;
  /** share of the fraud money (cost currency) approved, or reviewed and wrongly approved */
  fraud_money_passed: number | null;
  reviews_per_1k: number | null;
  /** share of outright declines that were fraud */
  decline_precision: number | null;
  /** mean realised cost a decision, in the cost currency (decisions with an amount) */
  expected_cost: number | null;
  currency: string;
}

const ratio = (a: number, b: number): number | null => (b > 0 ? Math.round((a / b) * 1e4) / 1e4 : null);

/** The desk's figures for `decide` on `rows`, priced with `model`; each row counts at its sample weight. */
export function deskOutcomes(rows: readonly DeskRow[], decide: Decide, model: CostModel): DeskOutcomes {
  const acc = model.reviewerAccuracy;
  let n = 0;
  let fraud = 0;
  let legit = 0;
  let stopped = 0;
  let friction = 0;
  let notApproved = 0;
  let declinedLegit = 0;
  let fraudMoney = 0;
  let moneyPassed = 0;
  let reviews = 0;
  let declines = 0;
  let declinedFraud = 0;
  let cost = 0;
  let priced = 0;
  for (const r of rows) {
    const w = r.weight;
    const action = decide(r.z, r.amount);
    n += w;
    if (action === 'review') reviews += w;
    if (action === 'decline') declines += w;
    // the share of this decision that ends approved, after a reviewer right `acc` of the time
    const wrong = action === 'review' ? 1 - acc : 0;
    if (r.label === 1) {
      fraud += w;
      const approved = action === 'approve' ? 1 : wrong;
      stopped += w * (1 - approved);
      if (action === 'decline') declinedFraud += w;
      if (r.amount !== null) {
        fraudMoney += w * r.amount;
        moneyPassed += w * r.amount * approved;
      }
    } else {
      legit += w;
      const declined = action === 'decline' ? 1 : wrong;
      friction += w * declined;
      if (action !== 'approve') notApproved += w;
      if (action === 'decline') declinedLegit += w;
    }
    if (r.amount !== null) {
      priced += w;
      cost += w * realisedCost(action, r.label, r.amount, model);
    }
  }
  return {
    decisions: rows.length,
    stopped_fraud: ratio(stopped, fraud),
    legit_friction: ratio(friction, legit),
    legit_not_approved: ratio(notApproved, legit),
    legit_declined: ratio(declinedLegit, legit),
    fraud_money_passed: ratio(moneyPassed, fraudMoney),
    reviews_per_1k: n > 0 ? Math.round((reviews / n) * 1e5) / 100 : null,
    decline_precision: ratio(declinedFraud, declines),
    expected_cost: priced > 0 ? Math.round((cost / priced) * 100) / 100 : null,
    currency: model.currency,
  };
}

/** What one decision costs once its label is known (the review's wrong share priced as its wrong outcome). */
function realisedCost(action: DeskAction, label: Label, amount: number, m: CostModel): number {
  const loss = m.lossRate * amount;
  const turnedAway = m.declineRate * amount + m.declineFixed;
  const wrongOutcome = label === 1 ? loss : turnedAway;
  if (action === 'review') return m.reviewCost + (1 - m.reviewerAccuracy) * wrongOutcome;
  if (action === 'approve') return label === 1 ? loss : 0;
  return label === 1 ? 0 : turnedAway;
}

/** What a review saves over the better of approve and decline for a row (≤ 0: a review never pays there). */
function reviewGain(z: number, amount: number, model: CostModel): number {
  const c = expectedCosts(probabilityOf(z), amount, model);
  return Math.min(c.approve, c.decline) - c.review;
}

/**
 * The least `reviewGainMin` whose reviews stay within `share` of the decisions (weighted): the
 * reviews go where they save the most. 0 when every review that pays fits; above the largest gain
 * when not even the first does. Rows of one gain enter together, as a threshold must take them.
 */
export function gainForCapacity(rows: readonly DeskRow[], model: CostModel, share: number): number {
  const gains: Array<{ gain: number; weight: number }> = [];
  let total = 0;
  for (const r of rows) {
    total += r.weight;
    if (r.amount === null) continue;
    const gain = reviewGain(r.z, r.amount, model);
    if (gain > 0) gains.push({ gain, weight: r.weight });
  }
  const room = share * total;
  gains.sort((a, b) => b.gain - a.gain);
  let used = 0;
  let i = 0;
  while (i < gains.length) {
    let j = i;
    let w = 0;
    while (j < gains.length && gains[j]!.gain === gains[i]!.gain) w += gains[j++]!.weight;
    if (used + w > room) {
      // the threshold sits between the last gain taken and this one, rounded up to a cent's hundredth
      const above = gains[i]!.gain;
      const taken = i > 0 ? gains[i - 1]!.gain : above * 2 + 1;
      // (bounded as the policy schema bounds a cost, so a fitted document always validates)
      return Math.min(1e12, Math.ceil(((above + taken) / 2) * 1e4) / 1e4);
    }
    used += w;
    i = j;
  }
  return 0;
}

/** One setting of the desk's costs and capacity, and what the policy's decisions would do under it. */
export interface FrontierPoint {
  decline_cost: { rate: number; fixed: number };
  /** null: no limit on reviews */
  reviews_per_day: number | null;
  review_gain_min: number;
  outcomes: DeskOutcomes;
}

/** The decline costs tried, as multiples of the desk's own; and the capacities, as multiples of its own. */
const DECLINE_SCALES = [0.25, 0.5, 1, 2, 4] as const;
const CAPACITY_SCALES = [0, 0.5, 1, 2] as const;
/** Without a stated capacity: reviews per 1,000 decisions tried, and no limit. */
const CAPACITY_PER_1K = [0, 25, 50, 100] as const;

/**
 * The frontier a desk chooses from: for each decline cost and capacity, the reviewGainMin that
 * capacity allows on `setOn` (the fit's train side) and the outcomes on `measureOn` (its holdout).
 * Each point's figures are priced with that point's decline cost.
 */
export function frontier(
  setOn: readonly DeskRow[],
  measureOn: readonly DeskRow[],
  model: CostModel,
  capacity: { reviewsPerDay: number | null; decisionsPerDay: number | null },
  fallback: Decide,
): FrontierPoint[] {
  const perDay =
    capacity.reviewsPerDay !== null
      ? CAPACITY_SCALES.map((k) => capacity.reviewsPerDay! * k)
      : capacity.decisionsPerDay !== null
        ? [...CAPACITY_PER_1K.map((k) => (k / 1000) * capacity.decisionsPerDay!), null]
        : [null];
  const points: FrontierPoint[] = [];
  for (const k of DECLINE_SCALES) {
    const rate = Math.min(1, Math.round(model.declineRate * k * 1e6) / 1e6);
    const fixed = Math.round(model.declineFixed * k * 100) / 100;
    for (const reviews of perDay) {
      const priced: CostModel = { ...model, declineRate: rate, declineFixed: fixed };
      const share =
        reviews === null || capacity.decisionsPerDay === null
          ? null
          : reviews / Math.max(capacity.decisionsPerDay, 1e-9);
      const gainMin = share === null ? 0 : gainForCapacity(setOn, priced, share);
      const decide = byMoney({ ...priced, reviewGainMin: gainMin }, fallback);
      points.push({
        decline_cost: { rate, fixed },
        reviews_per_day: reviews === null ? null : Math.round(reviews * 100) / 100,
        review_gain_min: gainMin,
        outcomes: deskOutcomes(measureOn, decide, priced),
      });
    }
  }
  return points;
}
