// The money section of a fitted policy's HTML report (docs/api.md, "Decisions by money"): for a fit
// with the cost objective, what it assumed, the base beside the candidate in the desk's terms, and
// the frontier of other decline costs and capacities, drawn (fraud stopped against honest friction,
// one line per capacity, the candidate's own point marked) and listed. Pure: report-html.ts renders
// the chart's spec to inline SVG as it does every plot. Every value is escaped before the markup.
import type { TopLevelSpec } from 'vega-lite';
import type { CostReport } from './cost-fit.ts';
import type { DeskOutcomes, FrontierPoint } from './desk-outcomes.ts';

/** What a cost fit adds to the report; reports of other fits (and older ones) have none of it. */
export type MoneyReportLike = Partial<Omit<CostReport, 'objective'>> & { objective?: string };

const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const pct = (x: number | null | undefined, digits = 1): string =>
  typeof x === 'number' && Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : '—';
const money = (x: number | null | undefined, currency: string): string =>
  typeof x === 'number' && Number.isFinite(x) ? `${x.toFixed(2)} ${esc(currency)}` : '—';
const count = (x: number | null | undefined): string =>
  typeof x === 'number' && Number.isFinite(x) ? String(Math.round(x * 100) / 100) : '—';

/** A decline cost as the chart labels it: "1%+20" (rate of the amount + fixed, in the cost currency). */
export const declineLabel = (d: { rate: number; fixed: number }): string =>
  `${Math.round(d.rate * 1e4) / 100}%+${Math.round(d.fixed * 100) / 100}`;
export const capacityLabel = (perDay: number | null): string =>
  perDay === null
    ? 'no limit on reviews'
    : perDay === 0
      ? 'no reviews'
      : `${Math.round(perDay * 100) / 100} reviews/day`;

const ROWS: ReadonlyArray<{ key: keyof DeskOutcomes; name: string; kind: 'share' | 'count' | 'money' }> = [
  { key: 'stopped_fraud', name: 'fraud stopped', kind: 'share' },
  { key: 'legit_friction', name: 'honest friction', kind: 'share' },
  { key: 'legit_declined', name: 'honest declined', kind: 'share' },
  { key: 'fraud_money_passed', name: 'fraud money passed', kind: 'share' },
  { key: 'reviews_per_1k', name: 'reviews per 1,000', kind: 'count' },
  { key: 'decline_precision', name: 'decline precision', kind: 'share' },
  { key: 'expected_cost', name: 'expected cost / decision', kind: 'money' },
];

function figure(o: DeskOutcomes, row: (typeof ROWS)[number]): string {
  const x = o[row.key] as number | null;
  return row.kind === 'share' ? pct(x) : row.kind === 'money' ? money(x, o.currency) : count(x);
}

function outcomesTable(outcomes: CostReport['outcomes']): string {
  const rows = ROWS.map(
    (r) => `<tr><th>${r.name}</th><td>${figure(outcomes.base, r)}</td><td>${figure(outcomes.candidate, r)}</td></tr>`,
  ).join('');
  return `<table class="outcomes"><thead><tr><th>holdout, after review (${outcomes.candidate.decisions} decisions)</th><th>base</th><th>candidate</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The frontier point the candidate sits on: its own decline cost and capacity. */
export function candidatePoint(r: MoneyReportLike): FrontierPoint | undefined {
  const e = r.economics;
  if (!e || !r.frontier) return undefined;
  const capacity = e.reviewsPerDay ?? null;
  const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  return r.frontier.find(
    (p) =>
      near(p.decline_cost.rate, e.declineCost.rate) &&
      near(p.decline_cost.fixed, e.declineCost.fixed) &&
      (p.reviews_per_day === null || capacity === null
        ? p.reviews_per_day === capacity
        : near(p.reviews_per_day, capacity)),
  );
}

/** Fraud stopped against honest friction, a line per capacity by decline cost; the candidate and base marked. */
export function frontierSpec(r: MoneyReportLike): TopLevelSpec | undefined {
  const frontier = r.frontier ?? [];
  const own = candidatePoint(r);
  // each decline cost is named once, on the candidate's capacity line: on every line they would overlap
  const named = own ? own.reviews_per_day : frontier[0]?.reviews_per_day;
  const values = frontier
    .filter((p) => p.outcomes.legit_friction !== null && p.outcomes.stopped_fraud !== null)
    .map((p) => ({
      capacity: capacityLabel(p.reviews_per_day),
      capacity_order: p.reviews_per_day ?? Number.MAX_SAFE_INTEGER,
      decline: declineLabel(p.decline_cost),
      decline_order: p.decline_cost.fixed + p.decline_cost.rate,
      friction: p.outcomes.legit_friction! * 100,
      stopped: p.outcomes.stopped_fraud! * 100,
      candidate: p === own,
      named: p.reviews_per_day === named,
    }));
  if (values.length === 0) return undefined;
  // not from zero: the points sit close together, and the differences between them are the choice
  const x = {
    field: 'friction',
    type: 'quantitative',
    title: 'honest friction (% of honest trades)',
    scale: { zero: false, nice: true },
  } as const;
  const y = {
    field: 'stopped',
    type: 'quantitative',
    title: 'fraud stopped (% of fraud)',
    scale: { zero: false, nice: true },
  } as const;
  const base = r.outcomes?.base;
  const marks: unknown[] = [
    {
      mark: { type: 'line', point: { size: 40 } },
      encoding: {
        x,
        y,
        color: { field: 'capacity', type: 'nominal', sort: { field: 'capacity_order' }, title: 'capacity' },
        order: { field: 'decline_order', type: 'quantitative' },
      },
    },
    {
      transform: [{ filter: 'datum.named' }],
      mark: { type: 'text', align: 'left', dx: 6, dy: -8, fontSize: 10, color: '#1f2328' },
      encoding: { x, y, text: { field: 'decline', type: 'nominal' } },
    },
    {
      transform: [{ filter: 'datum.candidate' }],
      mark: { type: 'point', shape: 'diamond', size: 220, filled: true, color: '#d1242f', opacity: 1 },
      encoding: { x, y },
    },
  ];
  if (base && base.legit_friction !== null && base.stopped_fraud !== null)
    marks.push({
      data: { values: [{ friction: base.legit_friction * 100, stopped: base.stopped_fraud * 100 }] },
      mark: { type: 'point', shape: 'cross', size: 200, filled: true, color: '#1f2328', opacity: 1 },
      encoding: { x, y },
    });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: 'Frontier: fraud stopped against honest friction (holdout)',
    width: 520,
    height: 340,
    data: { values },
    layer: marks,
  } as TopLevelSpec;
}

function frontierTable(r: MoneyReportLike): string {
  const e = r.economics!;
  const own = candidatePoint(r);
  const rows = (r.frontier ?? [])
    .map((p) => {
      const o = p.outcomes;
      const mark = p === own ? ' class="own"' : '';
      return `<tr${mark}><th>${esc(declineLabel(p.decline_cost))}${p === own ? ' (candidate)' : ''}</th><td>${esc(capacityLabel(p.reviews_per_day))}</td><td>${money(p.review_gain_min, e.currency)}</td><td>${pct(o.stopped_fraud)}</td><td>${pct(o.legit_friction)}</td><td>${pct(o.fraud_money_passed)}</td><td>${count(o.reviews_per_1k)}</td><td>${money(o.expected_cost, o.currency)}</td></tr>`;
    })
    .join('');
  return `<table class="frontier"><thead><tr><th>decline cost (rate+fixed)</th><th>capacity</th><th>least review saving</th><th>fraud stopped</th><th>honest friction</th><th>fraud money passed</th><th>reviews per 1,000</th><th>cost / decision</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The fit's assumptions in one paragraph. */
function assumptions(r: MoneyReportLike): string {
  const e = r.economics;
  if (!e) return '';
  const c = e.currency;
  const acc = r.reviewer_accuracy;
  const measured =
    acc && acc.measured !== null ? ` (measured ${pct(acc.measured)} on ${acc.reviews} reviews later labelled)` : '';
  const cap = r.capacity;
  const capacity = cap
    ? `; capacity ${esc(capacityLabel(cap.reviews_per_day))}${cap.decisions_per_day !== null ? ` of about ${count(cap.decisions_per_day)} decisions a day` : ''}`
    : '';
  const gain = (e.reviewGainMin ?? 0) > 0 ? `; a review only where it saves at least ${money(e.reviewGainMin, c)}` : '';
  return `<p>Costs in <b>${esc(c)}</b>: an approved fraud loses ${pct(e.lossRate ?? 1)} of its amount; turning an honest trade away costs ${pct(e.declineCost.rate, 2)} of the amount + ${money(e.declineCost.fixed, c)}; a review costs ${money(e.reviewCost, c)}, the reviewers right ${pct(acc?.used ?? e.reviewerAccuracy ?? 0.95)} of the time${measured}${capacity}${gain}.</p>`;
}

/**
 * The section, or '' for a report without the cost objective's figures. `frontierSvg`: the
 * frontierSpec drawn, when there is a frontier.
 */
export function moneySection(r: MoneyReportLike, frontierSvg: string | undefined): string {
  if (!r.outcomes) return '';
  const frontier =
    r.frontier && r.frontier.length > 0 && r.economics
      ? `<h3>Frontier</h3><p class="note">What the candidate's decisions would do at other decline costs (a quarter of the desk's to four times it, labelled rate+fixed on the candidate's capacity) and review capacities. The red diamond is the candidate's own point, the black cross the base policy.</p>${frontierSvg ? `<div class="plots"><figure>${frontierSvg}</figure></div>` : ''}${frontierTable(r)}`
      : '';
  return `<h2>Decisions by money</h2>
<p class="note">Fitted for the least expected cost: each trade gets the cheapest of approve, review and decline for its amount (a review counted as caught, or as an honest trade approved, at the reviewers' accuracy).</p>
${assumptions(r)}${outcomesTable(r.outcomes)}${frontier}`;
}
