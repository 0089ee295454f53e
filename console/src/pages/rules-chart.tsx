// A rule's matches per day over the last 30 days (GET /api/v1/rules/stats): real matches and shadow
// matches as two lines, small in the rules list, with axes and a legend on a rule's own page.
import { useEffect, useRef } from 'preact/hooks';
import { CategoryScale, Chart, Filler, Legend, LineController, LineElement, LinearScale, PointElement, Tooltip } from 'chart.js';
import { fmtNumber } from '../ui.tsx';
import { lastDays, type DayCount } from './rules-api.ts';

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, Filler, Tooltip, Legend);

const MATCHED = '#1f4e8c';
const SHADOW = '#b56b00';

/** The totals of a rule's days. */
export function totals(days: DayCount[] | undefined): { matched: number; shadow: number } {
  return (days ?? []).reduce((t, d) => ({ matched: t.matched + d.matched, shadow: t.shadow + d.shadow_matched }), { matched: 0, shadow: 0 });
}

export function HitChart({ name, days, span = 30, large = false }: { name: string; days: DayCount[] | undefined; span?: number; large?: boolean }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const labels = lastDays(span);
  const byDay = new Map((days ?? []).map((d) => [d.day.slice(0, 10), d]));
  const matched = labels.map((l) => byDay.get(l)?.matched ?? 0);
  const shadow = labels.map((l) => byDay.get(l)?.shadow_matched ?? 0);
  const key = JSON.stringify([matched, shadow, large]);
  const t = totals(days);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'line',
      data: {
        labels,
        datasets: [
          { label: 'matched', data: matched, borderColor: MATCHED, backgroundColor: 'rgba(31, 78, 140, 0.15)', fill: 'origin', pointRadius: 0, borderWidth: large ? 2 : 1.5, tension: 0.2 },
          { label: 'shadow matches', data: shadow, borderColor: SHADOW, backgroundColor: SHADOW, borderDash: [4, 3], pointRadius: 0, borderWidth: large ? 2 : 1.5, tension: 0.2 },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { display: large, ticks: { maxTicksLimit: 8, maxRotation: 0 } },
          y: { display: large, beginAtZero: true, suggestedMax: 1, ticks: { precision: 0 }, title: { display: large, text: 'decisions a day' } },
        },
        plugins: {
          legend: { display: large, position: 'bottom', labels: { boxWidth: 14 } },
          tooltip: { enabled: true, callbacks: { label: (c) => `${c.dataset.label}: ${fmtNumber(c.parsed.y)}` } },
        },
      },
    });
    return () => chart.destroy();
  }, [key]);
  const summary = `${name}: ${fmtNumber(t.matched)} matched and ${fmtNumber(t.shadow)} shadow matches in the last ${span} days`;
  return (
    <div class={large ? 'hit-chart large' : 'hit-chart'} data-matched={t.matched} data-shadow={t.shadow}>
      <div class="hit-canvas"><canvas ref={canvas} role="img" aria-label={summary} /></div>
      <small class="hit-totals">
        <span class="hit-key matched" aria-hidden="true" />{fmtNumber(t.matched)} matched
        {' · '}
        <span class="hit-key shadow" aria-hidden="true" />{fmtNumber(t.shadow)} shadow
      </small>
    </div>
  );
}
