// The fit's cost objective (docs/api.md, "Decisions by money"): the candidate keeps the desk's
// economics with `reviewGainMin` set on the train side so that its reviews per day stay within the
// desk's capacity, and the report puts the base and the candidate side by side on the holdout in
// the desk's terms (fraud stopped, honest friction, fraud money passed, reviews, cost), with the
// frontier of other decline costs and capacities the desk may pick from. Pure.
import { costModelOf, inCostCurrency, type CostModel, type Economics } from '../model/economics.ts';
import { newAccountsOf } from '../model/new-accounts.ts';
import type { Policy } from '../model/policy.ts';
import {
  byLevel,
  byMoney,
  deskOutcomes,
  frontier,
  gainForCapacity,
  type Decide,
  type DeskOutcomes,
  type DeskRow,
} from './desk-outcomes.ts';
import type { FrontierPoint } from './desk-outcomes.ts';
import type { SampleColumns } from './samples.ts';

/**
 * The economics a cost fit uses when neither the request nor the base policy has any
 * (docs/decisions.md): the whole loss of a fraud, 1 % of the amount plus 20 USD to turn an honest
 * trader away, 3 USD a review by a reviewer right 95 % of the time, no capacity limit.
 */
export const DEFAULT_ECONOMICS: Economics = {
  currency: 'USD',
  lossRate: 1,
  declineCost: { rate: 0.01, fixed: 20 },
  reviewCost: 3,
  reviewerAccuracy: 0.95,
};

/**
 * The economics a fit optimises for: the request's, else the base policy's, else the defaults; none
 * with the `target` objective, or without `cost` asked for when neither has economics.
 */
export function fitEconomics(
  request: { objective?: 'cost' | 'target'; economics?: Economics },
  base: Pick<Policy, 'economics'>,
): Economics | undefined {
  if (request.objective === 'target') return undefined;
  const stated = request.economics ?? base.economics;
  if (stated) return stated;
  return request.objective === 'cost' ? DEFAULT_ECONOMICS : undefined;
}

/** What the job measured besides the labels: the decision rate, and the reviewers against later labels. */
export interface CostInputs {
  economics: Economics;
  /** score decisions a day in the fit's window (all of them, labelled or not); null when unknown */
  decisionsPerDay: number | null;
  /** resolved reviews whose decisions were later labelled by an event or the API, and how many agreed */
  reviewerChecks?: { reviews: number; agreed: number };
}

/** Resolved reviews later labelled that it takes before their agreement replaces the stated accuracy. */
export const MIN_REVIEWER_CHECKS = 50;

export interface CostReport {
  objective: 'cost';
  /** the candidate's economics, reviewGainMin included */
  economics: Economics;
  capacity: { reviews_per_day: number | null; decisions_per_day: number | null; review_share: number | null };
  reviewer_accuracy: { reviews: number; measured: number | null; used: number };
  outcomes: { base: DeskOutcomes; candidate: DeskOutcomes };
  frontier: FrontierPoint[];
}

/** The holdout (or train) rows as the desk figures take them: log-odds, label, weight, amount in the cost currency. */
function deskRows(side: SampleColumns, policy: Policy, model: CostModel, reference: Record<string, number>): DeskRow[] {
  const z = side.logOdds(policy);
  const weights = side.weights();
  return side.outcomes(z).map((o, i) => ({
    z: z[i]!,
    label: o.label,
    weight: weights[i]!,
    amount:
      o.amount === null || o.amount === undefined || o.currency === null || o.currency === undefined
        ? null
        : inCostCurrency(o.amount, o.currency, model, reference),
  }));
}

/** The base's own money decisions, its amounts converted from the fit's cost currency to its own. */
function baseByMoney(own: CostModel, fit: CostModel, base: Policy, reference: Record<string, number>): Decide {
  const factor = inCostCurrency(1, fit.currency, own, reference);
  const decide = byMoney(own, byLevel(base));
  return (z, amount) => decide(z, amount === null || factor === null ? null : amount * factor);
}

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/** The candidate's economics and the cost report, for a candidate already fitted on `train`. */
export function costObjective(
  sides: { train: SampleColumns; holdout: SampleColumns },
  base: Policy,
  candidate: Policy,
  inputs: CostInputs,
): CostReport {
  const checks = inputs.reviewerChecks ?? { reviews: 0, agreed: 0 };
  const measured = checks.reviews > 0 ? round4(checks.agreed / checks.reviews) : null;
  const stated = costModelOf(inputs.economics).reviewerAccuracy;
  const accuracy =
    measured !== null && checks.reviews >= MIN_REVIEWER_CHECKS ? Math.min(1, Math.max(0.5, measured)) : stated;
  const model: CostModel = { ...costModelOf(inputs.economics), reviewerAccuracy: accuracy };
  const reference = newAccountsOf(base).referenceAmounts;
  const train = deskRows(sides.train, candidate, model, reference);
  const held = deskRows(sides.holdout, candidate, model, reference);
  const reviewsPerDay = inputs.economics.reviewsPerDay ?? null;
  const share =
    reviewsPerDay !== null && inputs.decisionsPerDay !== null && inputs.decisionsPerDay > 0
      ? reviewsPerDay / inputs.decisionsPerDay
      : null;
  const gainMin = share === null ? 0 : gainForCapacity(train, model, share);
  const economics: Economics = {
    ...inputs.economics,
    reviewerAccuracy: accuracy,
    reviewGainMin: gainMin,
  };
  const fallback = byLevel(candidate);
  const baseDecide = base.economics ? baseByMoney(costModelOf(base.economics), model, base, reference) : byLevel(base);
  return {
    objective: 'cost',
    economics,
    capacity: {
      reviews_per_day: reviewsPerDay,
      decisions_per_day: inputs.decisionsPerDay === null ? null : Math.round(inputs.decisionsPerDay * 100) / 100,
      review_share: share === null ? null : round4(share),
    },
    reviewer_accuracy: { reviews: checks.reviews, measured, used: accuracy },
    outcomes: {
      base: deskOutcomes(deskRows(sides.holdout, base, model, reference), baseDecide, model),
      candidate: deskOutcomes(held, byMoney({ ...model, reviewGainMin: gainMin }, fallback), model),
    },
    frontier: frontier(train, held, model, { reviewsPerDay, decisionsPerDay: inputs.decisionsPerDay }, fallback),
  };
}

/** A labelled decision of a backtest: the replayed policy's log-odds and the request's money. */
export interface ReplayedMoney {
  z: number;
  label: 0 | 1;
  amount: number | null;
  currency: string | null;
}

/**
 * A backtest's desk figures: the policy's own decisions (by money with economics, else by its
 * level map), priced with its economics or, without them, the defaults (DEFAULT_ECONOMICS).
 */
export function replayedOutcomes(
  policy: Pick<Policy, 'thresholds' | 'outcomes' | 'economics' | 'newAccounts'>,
  rows: readonly ReplayedMoney[],
): DeskOutcomes {
  const model = costModelOf(policy.economics ?? DEFAULT_ECONOMICS);
  const reference = newAccountsOf(policy).referenceAmounts;
  const decide = policy.economics ? byMoney(model, byLevel(policy)) : byLevel(policy);
  return deskOutcomes(
    rows.map((r) => ({
      z: r.z,
      label: r.label,
      weight: 1,
      amount: r.amount === null || r.currency === null ? null : inCostCurrency(r.amount, r.currency, model, reference),
    })),
    decide,
    model,
  );
}
