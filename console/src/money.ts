// Decisions by money (docs/api.md, "Decisions by money") as the console reads them: a policy's
// economics, a cost fit's desk figures and frontier, and a score's expected costs. The OpenAPI
// document types a policy's document and report as `unknown`, so their shapes are written here.
import { vouch } from './api-client.ts';
import { fmtMoney, fmtNumber, fmtPercent } from './ui.tsx';
import type { PolicyDetail } from './types.ts';

/** A policy document's `economics` (src/model/economics.ts). */
export interface Economics {
  currency: string;
  lossRate?: number;
  declineCost: { rate: number; fixed: number };
  reviewCost: number;
  reviewerAccuracy?: number;
  reviewsPerDay?: number;
  rates?: Record<string, number>;
  reviewGainMin?: number;
}

/** What a policy's decisions do to the desk on the fit's holdout (shares 0–1, null when nothing to share). */
export interface DeskOutcomes {
  decisions: number;
  stopped_fraud: number | null;
  legit_friction: number | null;
  legit_not_approved: number | null;
  legit_declined: number | null;
  fraud_money_passed: number | null;
  reviews_per_1k: number | null;
  decline_precision: number | null;
  expected_cost: number | null;
  currency: string;
}

/** One decline cost and capacity the desk may choose, and what the candidate's decisions would do under it. */
export interface FrontierPoint {
  decline_cost: { rate: number; fixed: number };
  /** null: no limit on reviews */
  reviews_per_day: number | null;
  review_gain_min: number;
  outcomes: DeskOutcomes;
}

/** What a fit with the cost objective adds to its report. */
export interface CostReport {
  objective?: 'cost' | 'target';
  economics?: Economics;
  capacity?: { reviews_per_day: number | null; decisions_per_day: number | null; review_share: number | null };
  reviewer_accuracy?: { reviews: number; measured: number | null; used: number };
  outcomes?: { base: DeskOutcomes; candidate: DeskOutcomes };
  frontier?: FrontierPoint[];
}

/** What a cost fit assumes when neither the request nor the base policy states economics (src/policies/cost-fit.ts). */
export const DEFAULT_ECONOMICS: Economics = {
  currency: 'USD',
  lossRate: 1,
  declineCost: { rate: 0.01, fixed: 20 },
  reviewCost: 3,
  reviewerAccuracy: 0.95,
};

/** The economics a policy document carries, if any. */
export const economicsOf = (p: PolicyDetail): Economics | undefined =>
  ((p.document ?? {}) as { economics?: Economics }).economics;

/** A probability as a percentage that does not round a small one to 0 ("0.04 %", "4.1 %"). */
export function fmtProbability(p: number | null | undefined): string {
  if (typeof p !== 'number' || !Number.isFinite(p)) return '—';
  const digits = p > 0 && p < 0.01 ? { maximumSignificantDigits: 2 } : { maximumFractionDigits: 1 };
  return new Intl.NumberFormat(undefined, { style: 'percent', ...digits }).format(p);
}

/** A decline cost in words: "1% of the amount + 20.00 USD". */
export const declineWords = (d: { rate: number; fixed: number }, currency: string): string =>
  `${fmtProbability(d.rate)} of the amount + ${fmtMoney(d.fixed, currency)}`;

/** A decline cost short enough to label a point of a chart: "1%+20". */
export const declineShort = (d: { rate: number; fixed: number }): string =>
  `${fmtProbability(d.rate).replace(/\s/g, '')}+${fmtNumber(d.fixed)}`;

/** A capacity in words: "150 reviews a day", "no reviews", "no limit on reviews". */
export function capacityWords(perDay: number | null | undefined): string {
  if (perDay === null || perDay === undefined) return 'no limit on reviews';
  if (perDay === 0) return 'no reviews';
  return `${fmtNumber(perDay)} reviews a day`;
}

/** The figures of a frontier point or a policy's outcomes, one line each, as a tooltip and a list show them. */
export function outcomeLines(o: DeskOutcomes): string[] {
  return [
    `fraud stopped ${fmtPercent(o.stopped_fraud)}`,
    `honest friction ${fmtPercent(o.legit_friction)}`,
    `honest declined ${fmtPercent(o.legit_declined)}`,
    `honest not approved outright ${fmtPercent(o.legit_not_approved)}`,
    `fraud money passed ${fmtPercent(o.fraud_money_passed)}`,
    `reviews per 1,000 ${fmtNumber(o.reviews_per_1k)}`,
    `decline precision ${fmtPercent(o.decline_precision)}`,
    `expected cost ${fmtMoney(o.expected_cost, o.currency)} a decision`,
  ];
}

const sameNumber = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * The frontier point the candidate itself sits on: its own decline cost and capacity (the fit tries
 * the desk's own costs and capacity among the others, src/policies/desk-outcomes.ts).
 */
export function candidateIndex(frontier: readonly FrontierPoint[], e: Economics | undefined): number {
  if (!e) return -1;
  const capacity = e.reviewsPerDay ?? null;
  return frontier.findIndex(
    (p) =>
      sameNumber(p.decline_cost.rate, e.declineCost.rate) &&
      sameNumber(p.decline_cost.fixed, e.declineCost.fixed) &&
      (p.reviews_per_day === null || capacity === null
        ? p.reviews_per_day === capacity
        : sameNumber(p.reviews_per_day, capacity)),
  );
}

/** The economics a frontier point stands for: the fit's, at its decline cost, capacity and least review saving. */
export function economicsAt(e: Economics, p: FrontierPoint): Economics {
  const { reviewsPerDay: _ignored, ...rest } = e;
  return {
    ...rest,
    declineCost: { ...p.decline_cost },
    ...(p.reviews_per_day !== null ? { reviewsPerDay: p.reviews_per_day } : {}),
    reviewGainMin: p.review_gain_min,
  };
}

/**
 * A new candidate: `from` with `economics` merged into its document (POST .../derive, a JSON merge
 * patch: a member set to null is removed, so its default applies).
 */
export const deriveEconomics = (from: string, version: string, economics: Record<string, unknown>) =>
  vouch.POST('/api/v1/policies/{version}/derive', {
    params: { path: { version: from } },
    body: { version, changes: { economics } },
  });

/** A free version name for a derived candidate: the base's, a word and the time (versions are ≤ 64 characters). */
export function suggestVersion(from: string, word: string, now = new Date()): string {
  const stamp = now.toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');
  return `${from.slice(0, 64 - word.length - stamp.length - 2)}-${word}-${stamp}`;
}
