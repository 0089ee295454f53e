// Decisions by money (docs/api.md, "Decisions by money"): what each outcome is expected to cost the
// desk for a trade of amount a whose probability of fraud is p, in the policy's cost currency —
//   approve = p·lossRate·a
//   decline = (1 − p)·(declineCost.rate·a + declineCost.fixed)
//   review  = reviewCost + (1 − reviewerAccuracy)·(approve + decline)
// (a reviewer right with probability reviewerAccuracy sends a fraud to decline and an honest trade
// to approve; wrong, it costs what the wrong outcome costs). The least of them is the outcome; a
// review only when it saves at least reviewGainMin over the better of the other two. Pure: the
// score path hands it p and the amount.
import { Type, type Static } from 'typebox';
import { CurrencyCode } from './new-accounts.ts';
import type { Outcome } from './outcomes.ts';

const strict = { additionalProperties: false } as const;
const NonNegative = (description: string) => Type.Number({ minimum: 0, maximum: 1e12, description });

export const EconomicsSchema = Type.Object(
  {
    /** the unit of every cost below (ISO 4217, or a crypto asset of the policy's list) */
    currency: Type.String({ pattern: CurrencyCode }),
    lossRate: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    declineCost: Type.Object(
      {
        rate: Type.Number({ minimum: 0, maximum: 1 }),
        fixed: NonNegative('per turned-away trade'),
      },
      strict,
    ),
    reviewCost: NonNegative('one review'),
    reviewerAccuracy: Type.Optional(Type.Number({ minimum: 0.5, maximum: 1 })),
    reviewsPerDay: Type.Optional(Type.Number({ minimum: 0, maximum: 1e9 })),
    /** units of `currency` per unit of another currency; without one, the reference amounts convert */
    rates: Type.Optional(
      Type.Record(Type.String({ pattern: CurrencyCode }), Type.Number({ exclusiveMinimum: 0, maximum: 1e12 }), {
        maxProperties: 400,
      }),
    ),
    /** the least a review must save over the better of approve and decline (the fit sets it from reviewsPerDay) */
    reviewGainMin: Type.Optional(NonNegative('in `currency`')),
  },
  strict,
);
export type Economics = Static<typeof EconomicsSchema>;

/** Economics with every default filled in. */
export interface CostModel {
  currency: string;
  lossRate: number;
  declineRate: number;
  declineFixed: number;
  reviewCost: number;
  reviewerAccuracy: number;
  reviewGainMin: number;
  rates: Readonly<Record<string, number>>;
}

export function costModelOf(e: Economics): CostModel {
  return {
    currency: e.currency,
    lossRate: e.lossRate ?? 1,
    declineRate: e.declineCost.rate,
    declineFixed: e.declineCost.fixed,
    reviewCost: e.reviewCost,
    reviewerAccuracy: e.reviewerAccuracy ?? 0.95,
    reviewGainMin: e.reviewGainMin ?? 0,
    rates: e.rates ?? {},
  };
}

/**
 * `amount` of `currency` in the cost currency: by `rates`, else by the ratio of the two currencies'
 * reference amounts (what a new account may trade in each: the same purchasing power); null when
 * neither says.
 */
export function inCostCurrency(
  amount: number,
  currency: string,
  model: CostModel,
  referenceAmounts: Readonly<Record<string, number>>,
): number | null {
  if (currency === model.currency) return amount;
  if (Object.hasOwn(model.rates, currency)) return amount * model.rates[currency]!;
  const here = Object.hasOwn(referenceAmounts, currency) ? referenceAmounts[currency]! : undefined;
  const there = Object.hasOwn(referenceAmounts, model.currency) ? referenceAmounts[model.currency]! : undefined;
  return here !== undefined && there !== undefined ? (amount * there) / here : null;
}

export interface ExpectedCosts {
  approve: number;
  review: number;
  decline: number;
}

/** Expected costs of each outcome for probability `p` and amount `a` (cost currency). */
export function expectedCosts(p: number, a: number, m: CostModel): ExpectedCosts {
  const approve = p * m.lossRate * a;
  const decline = (1 - p) * (m.declineRate * a + m.declineFixed);
  return { approve, decline, review: m.reviewCost + (1 - m.reviewerAccuracy) * (approve + decline) };
}

/** The outcome of least expected cost; review only when it saves at least `gainMin`; ties go to approve. */
export function leastCost(c: ExpectedCosts, gainMin: number): Extract<Outcome, 'approve' | 'review' | 'decline'> {
  const best = c.approve <= c.decline ? 'approve' : 'decline';
  return c.review + gainMin <= Math.min(c.approve, c.decline) && c.review < Math.min(c.approve, c.decline)
    ? 'review'
    : best;
}

/** p from the policy's log-odds: σ(z). The fitted policies are calibrated; a hand-set one is as its weights are. */
export function probabilityOf(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/** What a score with economics says in money: p, the three costs (cost currency) and the cheapest outcome. */
export interface MoneyDecision {
  fraud_probability: number;
  expected_costs: ExpectedCosts & { currency: string };
  outcome: Extract<Outcome, 'approve' | 'review' | 'decline'>;
}

const cents = (x: number): number => Math.round(x * 100) / 100;

/**
 * The decision by money for a trade: p = σ(bias + Σ weight·value) of the signals as scored, the
 * amount converted to the cost currency; undefined when the amount cannot be converted (then the
 * level → outcome map decides, as without economics).
 */
export function decideByMoney(
  economics: Economics,
  bias: number,
  signals: ReadonlyArray<{ weight: number; value: number }>,
  amount: number,
  currency: string,
  referenceAmounts: Readonly<Record<string, number>>,
): MoneyDecision | undefined {
  const model = costModelOf(economics);
  const a = inCostCurrency(amount, currency, model, referenceAmounts);
  if (a === null || !Number.isFinite(a)) return undefined;
  let z = bias;
  for (const s of signals) z += s.weight * s.value;
  const p = probabilityOf(z);
  const costs = expectedCosts(p, a, model);
  return {
    fraud_probability: Math.round(p * 1e6) / 1e6,
    expected_costs: {
      approve: cents(costs.approve),
      review: cents(costs.review),
      decline: cents(costs.decline),
      currency: model.currency,
    },
    outcome: leastCost(costs, model.reviewGainMin),
  };
}
