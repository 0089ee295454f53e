// Which label a stored score decision contributes to a fit (docs/api.md, "Policies"): its own label when it
// has one (API, event or review); otherwise `legit` when it is older than assume_legit_after_days and
// its trade later completed; otherwise none, and it is left out. Pure: the caller looks up
// completions (a trade.completed event for the same entity with the same trade_id).
import type { Label } from './metrics.ts';

export const DEFAULT_ASSUME_LEGIT_AFTER_DAYS = 60;
const DAY_MS = 86_400_000;

export interface LabelSource {
  /** when the decision was made, epoch ms */
  createdAt: number;
  entityId: string;
  /** the request's context.trade_id, when given */
  tradeId?: string | null;
  label?: 'fraud' | 'legit' | null;
}

export interface LabelRules {
  /** the fit's time, epoch ms */
  now: number;
  assumeLegitAfterDays?: number;
  /** whether a trade.completed event exists for this entity and trade */
  completed: (entityId: string, tradeId: string) => boolean;
}

export function trainingLabel(d: LabelSource, rules: LabelRules): Label | null {
  if (d.label === 'fraud') return 1;
  if (d.label === 'legit') return 0;
  const days = rules.assumeLegitAfterDays ?? DEFAULT_ASSUME_LEGIT_AFTER_DAYS;
  // "Older than N days" is strict: a decision exactly N days old is still waiting for its outcome.
  if (
    typeof d.tradeId === 'string' &&
    d.tradeId !== '' &&
    rules.now - d.createdAt > days * DAY_MS &&
    rules.completed(d.entityId, d.tradeId)
  )
    return 0;
  return null;
}

/** An in-memory completion index over events (for tests and offline runs; a store would query). */
export function completionIndex(
  events: Iterable<{ type: string; entity_id: string; trade_id?: string }>,
): (entityId: string, tradeId: string) => boolean {
  const done = new Set<string>();
  for (const e of events)
    if (e.type === 'trade.completed' && e.trade_id !== undefined) done.add(`${e.entity_id}\0${e.trade_id}`);
  return (entityId, tradeId) => done.has(`${entityId}\0${tradeId}`);
}

/** Where a training label came from, as the fit's report counts it (docs/learning.md, "Labels from reviews"). */
export type LabelOrigin = 'api' | 'event' | 'review' | 'assumed';
export const LABEL_ORIGINS: readonly LabelOrigin[] = ['api', 'event', 'review', 'assumed'];

/**
 * The largest inverse-probability weight a sampled review label gets. At 1,000 (a rate of 0.1 %)
 * one label already stands for a thousand approvals; a mistyped rate of 1e-6 would otherwise let a
 * single reviewer's verdict (right 95 % of the time, not 100 %) outweigh every other label of the
 * fit and swamp its Newton steps. The cap biases the estimate only below a rate of 0.001.
 */
export const MAX_SAMPLE_WEIGHT = 1000;

/** The review a decision opened, as the fit reads it (the reviews table, docs/api.md "Reviews"). */
interface ReviewFacts {
  /** 'outcome' (a review or hold outcome) or 'sample' (an approval drawn at the policy's rate) */
  reason: string;
  /** the rate a sampled review was drawn at */
  sampleRate: number | null;
  /** 'approve' | 'decline' once resolved */
  resolution: string | null;
}

export interface ExampleSource extends LabelSource {
  /** the decision's label_source: 'api' | 'event' | 'review' (null for rows stored before sources) */
  labelSource?: string | null;
  /** the decision's outcome (null before outcomes existed) */
  outcome?: string | null;
  review?: ReviewFacts | null;
  /** the deciding policy's review sample rate (0 or null: approvals were not sampled) */
  samplingRate?: number | null;
}

export interface TrainingExample {
  label: Label;
  source: LabelOrigin;
  /** the sample weight of the fit: 1, or 1/rate (capped) for a sampled approval */
  weight: number;
  /** an approval drawn for review at the policy's sample rate */
  sampled: boolean;
}

const usableRate = (r: number | null | undefined): r is number =>
  typeof r === 'number' && Number.isFinite(r) && r > 0 && r < 1;

/** An unsampled approval with a label that sampled approvals stand for (the report counts them). */
export const LEFT_OUT = 'left_out';

/**
 * A decision as a training example (docs/learning.md, "Labels from reviews"); null when it has no label, LEFT_OUT when
 * it has one but sampled approvals stand for it. Approvals made while the policy sampled them for review are a
 * population of their own: a label that arrives whether or not the decision was sampled (api, event) counts with weight
 * 1; otherwise only a sampled approval counts, with weight 1/rate (Horvitz–Thompson), and an unsampled one is left out,
 * since its only label would be the assumed legit whose bias the sampling exists to remove. Every other decision counts
 * with weight 1, as trainingLabel says.
 */
export function trainingExample(d: ExampleSource, rules: LabelRules): TrainingExample | typeof LEFT_OUT | null {
  const label = trainingLabel(d, rules);
  if (label === null) return null;
  const explicit = d.label === 'fraud' || d.label === 'legit';
  // An approve resolution without a label is legit only through the assumption; it was still the
  // reviewer who said so, so it counts as a review label.
  const source: LabelOrigin = explicit
    ? d.labelSource === 'event'
      ? 'event'
      : d.labelSource === 'review'
        ? 'review'
        : 'api'
    : d.review?.resolution === 'approve'
      ? 'review'
      : 'assumed';
  if (d.outcome !== 'approve') return { label, source, weight: 1, sampled: false };
  const sampled = d.review?.reason === 'sample';
  const rate = sampled ? d.review!.sampleRate : d.samplingRate;
  if (!usableRate(rate)) return { label, source, weight: 1, sampled };
  if (source === 'api' || source === 'event') return { label, source, weight: 1, sampled };
  if (!sampled) return LEFT_OUT;
  return { label, source, weight: Math.min(1 / rate, MAX_SAMPLE_WEIGHT), sampled };
}
