// A rule's matches per day over the last 30 days (GET /api/v1/rules/stats): real matches and shadow
// matches as bars side by side each day, small in the rules list, with axes and a legend on a rule's own page.
import { useEffect, useRef } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { fmtNumber, fmtPercent } from '../ui.tsx';
import { lastDays, type DayCount } from './rules-api.ts';

Chart.register(BarController, BarElement, LinearScale, CategoryScale, Tooltip, Legend);

const MATCHED = '#1f4e8c';
const dayFmt = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });
/** "2026-11-04" → "4 Nov" in the user's locale. */
const shortDay = (day: string | undefined) => (day ? dayFmt.format(new Date(`${day}T00:00:00Z`)) : '');
const SHADOW = '#b56b00';

/** The totals of a rule's days. */
function totals(days: DayCount[] | undefined): { matched: number; shadow: number } {
  return (days ?? []).reduce((t, d) => ({ matched: t.matched + d.matched, shadow: t.shadow + d.shadow_matched }), {
    matched: 0,
    shadow: 0,
  });
}

/**
 * A rule's matches per day, real and shadow; with `scored` (score decisions per day) the totals name
 * the hit rate: the share of the window's score decisions it matched.
 */
export function HitChart({
  name,
  days,
  scored,
  span = 30,
  large = false,
}: {
  name: string;
  days: DayCount[] | undefined;
  scored?: Map<string, number>;
  span?: number;
  large?: boolean;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const labels = lastDays(span);
  const byDay = new Map((days ?? []).map((d) => [d.day.slice(0, 10), d]));
  const matched = labels.map((l) => byDay.get(l)?.matched ?? 0);
  const shadow = labels.map((l) => byDay.get(l)?.shadow_matched ?? 0);
  const key = JSON.stringify([matched, shadow, large]);
  const t = totals(days);
  const decisions = labels.reduce((n, l) => n + (scored?.get(l) ?? 0), 0);
  const rate = (n: number) => (scored && decisions > 0 ? ` (${fmtPercent(n / decisions)})` : '');
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels,
        datasets: [
          {
            label: 'matched',
            data: matched,
            backgroundColor: MATCHED,
            barPercentage: 1,
            categoryPercentage: 0.85,
            minBarLength: 0,
          },
          {
            label: 'shadow matches',
            data: shadow,
            backgroundColor: SHADOW,
            barPercentage: 1,
            categoryPercentage: 0.85,
            minBarLength: 0,
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: {
            display: large,
            ticks: { maxTicksLimit: 7, maxRotation: 0, autoSkipPadding: 12, callback: (_v, i) => shortDay(labels[i]) },
          },
          y: {
            display: large,
            beginAtZero: true,
            suggestedMax: 1,
            ticks: { precision: 0 },
            title: { display: large, text: 'decisions a day' },
          },
        },
        plugins: {
          legend: { display: large, position: 'bottom', labels: { boxWidth: 14 } },
          tooltip: { enabled: true, callbacks: { label: (c) => `${c.dataset.label}: ${fmtNumber(c.parsed.y)}` } },
        },
      },
    });
    return () => chart.destroy();
  }, [key]);
  const summary = `${name}: ${fmtNumber(t.matched)} matched${rate(t.matched)} and ${fmtNumber(t.shadow)} shadow matches${rate(t.shadow)} in the last ${span} days${scored ? `, of ${fmtNumber(decisions)} score decisions` : ''}`;
  return (
    <div class={large ? 'hit-chart large' : 'hit-chart'} data-matched={t.matched} data-shadow={t.shadow}>
      <div class="hit-canvas">
        <canvas ref={canvas} role="img" aria-label={summary} />
      </div>
      <small class="hit-totals">
        <span class="hit-key matched" aria-hidden="true" />
        {fmtNumber(t.matched)} matched{rate(t.matched)}
        {' · '}
        <span class="hit-key shadow" aria-hidden="true" />
        {fmtNumber(t.shadow)} shadow{rate(t.shadow)}
        {large && scored && <> · of {fmtNumber(decisions)} score decisions</>}
      </small>
    </div>
  );
}
