// Which label a stored score decision contributes to a fit (docs/api.md, "Policies"): its own label when it
// has one (API or event, §8); otherwise `legit` when it is older than assume_legit_after_days and
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
  if (typeof d.tradeId === 'string' && d.tradeId !== '' && rules.now - d.createdAt > days * DAY_MS && rules.completed(d.entityId, d.tradeId)) return 0;
  return null;
}

/** An in-memory completion index over events (for tests and offline runs; a store would query). */
export function completionIndex(events: Iterable<{ type: string; entity_id: string; trade_id?: string }>): (entityId: string, tradeId: string) => boolean {
  const done = new Set<string>();
  for (const e of events) if (e.type === 'trade.completed' && e.trade_id !== undefined) done.add(`${e.entity_id}\0${e.trade_id}`);
  return (entityId, tradeId) => done.has(`${entityId}\0${tradeId}`);
}
