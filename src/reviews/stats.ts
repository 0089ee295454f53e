// The queue's figures (docs/api.md, "Reviews", GET /api/v1/reviews/stats), for the console and
// `vouch reviews stats`: counts grouped in the store (review-stats-repository.ts), and the median
// from the last day's resolutions only (a day of a desk's work is small; the median is taken here,
// portably).
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { Static } from 'typebox';
import type { StatsSchema } from './schemas.ts';
import { countReviewLabels } from '../audit/decision-history-repository.ts';
import { latestFitAt } from '../policies/policy-document-repository.ts';
import { overdueCount, resolvedSince, reviewCounts } from './review-stats-repository.ts';

export type ReviewStats = Static<typeof StatsSchema>;

const DAY_MS = 86_400_000;
const OUTCOMES = ['review', 'hold', 'approve'] as const;

/** `owner` undefined: every client's reviews of the environment (an admin, or the CLI). */
export async function reviewStats(
  db: Kysely<Database>,
  environment: Environment,
  owner: string | undefined,
  now: number,
): Promise<ReviewStats> {
  const grouped = await reviewCounts(db, environment, owner);
  const overdue = await overdueCount(db, environment, owner, now);
  const lastDay = await resolvedSince(db, environment, owner, now - DAY_MS);

  const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, { open: 0, resolved: 0 }])) as ReviewStats['by_outcome'];
  const agreement = { approve: 0, decline: 0 };
  let open = 0;
  for (const g of grouped) {
    const n = Number(g.n);
    const resolved = g.status === 'resolved';
    if (!resolved) open += n;
    const bucket = (byOutcome as Record<string, { open: number; resolved: number }>)[g.outcome];
    if (bucket) bucket[resolved ? 'resolved' : 'open'] += n;
    if (resolved && (g.resolution === 'approve' || g.resolution === 'decline')) agreement[g.resolution] += n;
  }

  const minutes = lastDay.map((r) => (Number(r.resolved_at) - Number(r.opened_at)) / 60_000).sort((a, b) => a - b);
  const mid = minutes.length >> 1;
  const median =
    minutes.length === 0 ? null : minutes.length % 2 ? minutes[mid]! : (minutes[mid - 1]! + minutes[mid]!) / 2;

  return {
    open,
    overdue: Number(overdue?.n ?? 0),
    resolved_24h: minutes.length,
    median_minutes_to_resolve: median === null ? null : Math.round(median * 10) / 10,
    by_outcome: byOutcome,
    agreement,
    review_labels_since_last_fit: await reviewLabelsSinceLastFit(db, environment, owner),
  };
}

/**
 * Score decisions labelled by a review after the environment's latest fit: the labels the next fit
 * will have that the last one did not. A fit's lease row is gone once it ends (policies/jobs.ts),
 * so "the latest fit" is the latest policy a fit made (source 'fit', created when the fit finished).
 */
async function reviewLabelsSinceLastFit(
  db: Kysely<Database>,
  environment: Environment,
  owner: string | undefined,
): Promise<number> {
  const fit = await latestFitAt(db, environment);
  const since = fit?.at !== null && fit?.at !== undefined ? Number(fit.at) : undefined;
  return countReviewLabels(db, environment, since, owner);
}
