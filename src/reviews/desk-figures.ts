// The desk's day, the pure part (docs/api.md, "Reviews", GET /api/v1/desk/day): the rows the store
// grouped (desk-day.ts) as the response's figures, one row per UTC day, and the top rules.
import type { RuleStats } from '../rules/stats.ts';
import type { DeskDay } from './desk-schemas.ts';

type DayFigures = DeskDay['days'][number];
const DAY_MS = 86_400_000;
const TOP_RULES = 10;

/** Score decisions of a day grouped by outcome, label and their review's verdict. */
export interface DecisionGroup {
  day: number;
  outcome: string | null;
  label: string | null;
  resolution: string | null;
  n: number;
}

/**
 * What became of a labelled decision's trade: declined (the outcome, or its review's verdict),
 * passed (approved, or its review approved it), or neither yet (a review not resolved).
 */
function fate(outcome: string | null, resolution: string | null): 'declined' | 'passed' | 'pending' {
  if (outcome === 'decline') return 'declined';
  if (outcome === 'approve') return 'passed';
  if (resolution === 'decline') return 'declined';
  return resolution === 'approve' ? 'passed' : 'pending';
}

const round8 = (n: number) => Math.round(n * 1e8) / 1e8;

interface Grouped {
  groups: DecisionGroup[];
  passed: Map<number, Map<string, number>>;
  reviews: { opened: Array<{ day: number; n: number }>; resolved: Array<{ day: number; n: number; late: number }> };
  medians: Map<string, number>;
  /** unresolved now: the backlog at each day's end counts back from it */
  open: number;
}

/** One row per UTC day of the window, oldest first, days without anything included. */
export function assembleDays(since: number, days: number, g: Grouped): DayFigures[] {
  const first = Math.floor(since / DAY_MS);
  const rows: DayFigures[] = Array.from({ length: days }, (_, i) => ({
    day: new Date((first + i) * DAY_MS).toISOString().slice(0, 10),
    approve: 0,
    review: 0,
    hold: 0,
    decline: 0,
    fraud_caught: 0,
    fraud_money_passed: {},
    legit_declined: 0,
    reviews_opened: 0,
    reviews_resolved: 0,
    resolved_late: 0,
    median_minutes_to_resolve: g.medians.get(String(first + i)) ?? null,
    open_at_end: 0,
  }));
  const at = (day: number) => rows[day - first];
  for (const d of g.groups) {
    const row = at(d.day);
    if (!row) continue;
    if (d.outcome === 'approve' || d.outcome === 'review' || d.outcome === 'hold' || d.outcome === 'decline')
      row[d.outcome] += d.n;
    if (fate(d.outcome, d.resolution) !== 'declined') continue;
    if (d.label === 'fraud') row.fraud_caught += d.n;
    else if (d.label === 'legit') row.legit_declined += d.n;
  }
  for (const [day, byCurrency] of g.passed) {
    const row = at(day);
    if (row) for (const [c, amount] of byCurrency) row.fraud_money_passed[c] = round8(amount);
  }
  for (const o of g.reviews.opened) if (at(o.day)) at(o.day)!.reviews_opened += o.n;
  for (const r of g.reviews.resolved) {
    const row = at(r.day);
    if (row) {
      row.reviews_resolved += r.n;
      row.resolved_late += r.late;
    }
  }
  // the backlog at a day's end: unresolved now, less those opened since, plus those resolved since
  let open = g.open;
  for (let i = rows.length - 1; i >= 0; i--) {
    rows[i]!.open_at_end = open;
    open += rows[i]!.reviews_resolved - rows[i]!.reviews_opened;
  }
  return rows;
}

/** The rules with the most (active) matches in the window, most first. */
export function topRules(data: RuleStats['data']): DeskDay['top_rules'] {
  return data
    .map((r) => ({ rule_id: r.rule_id, name: r.name, hits: r.days.reduce((n, d) => n + d.matched, 0) }))
    .filter((r) => r.hits > 0)
    .sort((a, b) => b.hits - a.hits || a.name.localeCompare(b.name))
    .slice(0, TOP_RULES);
}
