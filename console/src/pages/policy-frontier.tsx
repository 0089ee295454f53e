// A cost fit's frontier (docs/api.md, "Decisions by money"): what the candidate's decisions would do
// at other decline costs and review capacities, as fraud stopped against honest friction, one line
// per capacity. A point is chosen on the chart or, from the keyboard, in the list beside it; "Use
// this point" derives a new candidate with that point's economics.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  Chart,
  Legend,
  LineElement,
  LinearScale,
  PointElement,
  ScatterController,
  Tooltip,
  type ChartDataset,
  type TooltipItem,
} from 'chart.js';
import { ErrorBox, fmtMoney, fmtPercent, useAction } from '../ui.tsx';
import {
  candidateIndex,
  capacityWords,
  declineShort,
  deriveEconomics,
  economicsAt,
  outcomeLines,
  suggestVersion,
  type DeskOutcomes,
  type Economics,
  type FrontierPoint,
} from '../money.ts';

import { labelPoints, pointName, pointTitle, series, xy, type XY } from './policy-frontier-chart.ts';

Chart.register(ScatterController, LineElement, PointElement, LinearScale, Tooltip, Legend);

const SERIES = ['#1f4e8c', '#b56b00', '#1b7f3b', '#7b3fa0', '#5b6675', '#0e7490'];
const CANDIDATE = '#b3261e';
const CHOSEN = '#ffb000';

export function FrontierView({
  frontier,
  economics,
  base,
  version,
  onDerived,
}: {
  frontier: FrontierPoint[];
  economics: Economics;
  base: DeskOutcomes;
  version: string;
  onDerived: (version: string) => void;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [chosen, setChosen] = useState<number>();
  const [name, setName] = useState(() => suggestVersion(version, 'point'));
  const { busy, error, run } = useAction();
  const lines = series(frontier);
  const own = candidateIndex(frontier, economics);
  const currency = economics.currency;
  const key = JSON.stringify([frontier, economics, base, chosen]);
  useEffect(() => {
    if (!canvas.current) return;
    // per dataset, the frontier index of each point it draws
    const indexes = lines.map((l) => l.points.filter((i) => xy(frontier[i]!.outcomes)));
    const ownLine = indexes.findIndex((line) => line.includes(own));
    const datasets: ChartDataset<'scatter', XY[]>[] = lines.map((l, d) => ({
      label: capacityWords(l.perDay),
      data: indexes[d]!.map((i) => xy(frontier[i]!.outcomes)!),
      showLine: true,
      borderColor: SERIES[d % SERIES.length],
      backgroundColor: SERIES[d % SERIES.length],
      borderWidth: 1.5,
      pointRadius: 4,
      pointHoverRadius: 6,
    }));
    const extra: Array<{ label: string; at: XY | null; style: Partial<ChartDataset<'scatter', XY[]>> }> = [
      {
        label: 'this candidate',
        at: own >= 0 ? xy(frontier[own]!.outcomes) : null,
        style: {
          pointStyle: 'rectRot',
          pointRadius: 9,
          borderWidth: 2,
          backgroundColor: CANDIDATE,
          borderColor: '#fff',
        },
      },
      {
        label: 'base policy',
        at: xy(base),
        style: { pointStyle: 'crossRot', pointRadius: 8, borderWidth: 2.5, borderColor: '#1c2430' },
      },
      {
        label: 'chosen',
        at: chosen === undefined ? null : xy(frontier[chosen]!.outcomes),
        style: { pointRadius: 11, borderWidth: 3, borderColor: CHOSEN, backgroundColor: 'rgba(255,176,0,0.15)' },
      },
    ];
    for (const e of extra) if (e.at) datasets.push({ label: e.label, data: [e.at], ...e.style });
    const which = (item: TooltipItem<'scatter'>): { title: string; o: DeskOutcomes; point?: FrontierPoint } => {
      if (item.datasetIndex < lines.length) {
        const p = frontier[indexes[item.datasetIndex]![item.dataIndex]!]!;
        return { title: pointName(p, currency), o: p.outcomes, point: p };
      }
      const label = item.dataset.label ?? '';
      if (label === 'base policy') return { title: 'the base policy', o: base };
      const p = frontier[label === 'chosen' ? chosen! : own]!;
      return { title: `${label}: ${pointName(p, currency)}`, o: p.outcomes, point: p };
    };
    const chart = new Chart(canvas.current, {
      type: 'scatter',
      data: { datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        parsing: false,
        scales: {
          x: {
            title: { display: true, text: 'honest friction (% of honest trades)' },
            ticks: { callback: (v) => `${v}%` },
          },
          y: { title: { display: true, text: 'fraud stopped (% of fraud)' }, ticks: { callback: (v) => `${v}%` } },
        },
        plugins: {
          legend: { position: 'bottom', labels: { boxWidth: 9, boxHeight: 9, usePointStyle: true } },
          tooltip: {
            callbacks: {
              title: (items) => (items[0] ? which(items[0]).title : ''),
              label: (item) => {
                const { o, point } = which(item);
                const gain = point ? [`least a review must save ${fmtMoney(point.review_gain_min, currency)}`] : [];
                return [...outcomeLines(o), ...gain];
              },
            },
          },
        },
        onClick: (event, _active, c) => {
          if (!event.native) return;
          const [hit] = c.getElementsAtEventForMode(event.native, 'nearest', { intersect: true }, false);
          if (!hit) return;
          if (hit.datasetIndex < lines.length) setChosen(indexes[hit.datasetIndex]![hit.index]);
          else if (c.data.datasets[hit.datasetIndex]?.label === 'this candidate' && own >= 0) setChosen(own);
        },
      },
      plugins: [labelPoints(indexes, frontier, Math.max(0, ownLine))],
    });
    return () => chart.destroy();
  }, [key]);
  const ownPoint = own >= 0 ? frontier[own] : undefined;
  const summary =
    `Frontier: fraud stopped against honest friction at ${frontier.length} settings of decline cost and review capacity` +
    (ownPoint
      ? `; this candidate stops ${fmtPercent(ownPoint.outcomes.stopped_fraud)} of fraud at ${fmtPercent(ownPoint.outcomes.legit_friction)} honest friction`
      : '');
  const point = chosen === undefined ? undefined : frontier[chosen];
  const use = () =>
    run(async () => {
      const p = await deriveEconomics(version, name.trim(), { ...economicsAt(economics, point!) });
      onDerived(p.version);
    });
  return (
    <section aria-labelledby="h-frontier" class="frontier">
      <h4 id="h-frontier">Frontier: other decline costs and capacities</h4>
      <p class="muted">
        Each line is a review capacity; along it, the cost of turning an honest trade away grows from a quarter of the
        desk's to four times it (labels: rate + fixed {currency}). Up is more fraud stopped, left fewer honest trades
        put off. Choose a point to derive a candidate with its economics.
      </p>
      <div class="frontier-grid">
        <figure class="frontier-figure">
          <div class="frontier-chart">
            <canvas ref={canvas} role="img" aria-label={summary} />
          </div>
          <figcaption class="muted small">{summary}.</figcaption>
        </figure>
        <div class="frontier-choose">
          <label class="field" for="frontier-point">
            <span>Frontier point</span>
          </label>
          <select
            id="frontier-point"
            value={chosen === undefined ? '' : String(chosen)}
            onChange={(e) => setChosen(e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))}
          >
            <option value="">choose a point…</option>
            {lines.flatMap((l) =>
              l.points.map((i) => {
                const p = frontier[i]!;
                return (
                  <option key={i} value={String(i)}>
                    {declineShort(p.decline_cost)} {currency}, {capacityWords(p.reviews_per_day)}: stops{' '}
                    {fmtPercent(p.outcomes.stopped_fraud)}, friction {fmtPercent(p.outcomes.legit_friction)}
                    {i === own ? ' (this candidate)' : ''}
                  </option>
                );
              }),
            )}
          </select>
          {point ? (
            <div class="frontier-point" aria-live="polite">
              <p>
                <strong>{pointTitle(point, currency, chosen === own)}</strong>
              </p>
              <ul class="figures">
                {[
                  ...outcomeLines(point.outcomes),
                  `least a review must save ${fmtMoney(point.review_gain_min, currency)}`,
                ].map((l) => (
                  <li key={l}>{l}</li>
                ))}
              </ul>
              <label class="field" for="frontier-version">
                <span>New version</span>
              </label>
              <input
                id="frontier-version"
                value={name}
                maxLength={64}
                onInput={(e) => setName(e.currentTarget.value)}
              />
              <ErrorBox error={error} what="Could not derive the candidate" />
              <button type="button" class="primary" disabled={busy || !name.trim()} onClick={() => void use()}>
                {busy ? 'Deriving…' : 'Use this point'}
              </button>
            </div>
          ) : (
            <p class="muted small">Click a point on the chart, or choose it here.</p>
          )}
        </div>
      </div>
    </section>
  );
}
