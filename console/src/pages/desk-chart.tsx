// One chart of the desk's day (desk-charts.tsx, desk-analysts.tsx): a figure with its caption, the
// Chart.js canvas named by a one-sentence summary (what a screen reader hears), and the same figures
// as a table under "The figures as a table". The canvas records what it drew (charts.ts,
// recordDrawn) for the browser tests.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  Tooltip,
  type ChartConfiguration,
  type ChartOptions,
} from 'chart.js';
import { countDrawnLabels, recordDrawn, rowsStyle, shortDay } from '../charts.ts';

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Tooltip,
  Legend,
);

/** The desk's colours: an outcome's, and the review and fraud series'. */
export const COLOURS = {
  approve: '#1b7f3b',
  review: '#1f4e8c',
  hold: '#b56b00',
  decline: '#b3261e',
  late: '#d9822b',
  line: '#14243b',
  minutes: '#7a4fb5',
};

/** The x axis of a per-day chart: short day names, a handful of ticks. */
export function dayAxis(days: string[]) {
  return {
    ticks: {
      maxTicksLimit: 8,
      maxRotation: 0,
      autoSkipPadding: 10,
      callback: (_v: unknown, i: number) => shortDay(days[i]),
    },
  };
}

/** What every desk chart shares: sized by its box, drawn at once, the legend under it. */
export function baseOptions(extra: ChartOptions = {}): ChartOptions {
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    interaction: { mode: 'index', intersect: false },
    ...extra,
    plugins: {
      legend: { position: 'bottom', labels: { boxWidth: 14 } },
      ...extra.plugins,
    },
  };
}

export const total = (values: number[]) => values.reduce((n, v) => n + v, 0);

export function DeskChart({
  name,
  caption,
  summary,
  config,
  table,
  rows,
  children,
}: {
  name: string;
  caption: string;
  /** the chart in one sentence: the canvas's accessible name */
  summary: string;
  config: ChartConfiguration;
  /** the chart's figures as a table: the fallback for whoever cannot see the canvas */
  table: ComponentChildren;
  /** a horizontal bar chart's categories: the chart is as tall as they need */
  rows?: number;
  /** shown between the caption and the chart (e.g. a currency choice) */
  children?: ComponentChildren;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const key = JSON.stringify([config.data, rows]);
  useEffect(() => {
    if (!canvas.current) return;
    const plugins = [...(config.plugins ?? []), recordDrawn, ...(rows ? [countDrawnLabels as never] : [])];
    const chart = new Chart(canvas.current, { ...config, plugins });
    return () => chart.destroy();
  }, [key]);
  const id = `chart-${name}`;
  return (
    <figure class="waterfall desk-chart" data-chart={name} aria-labelledby={id}>
      <figcaption id={id}>
        <strong>{caption}</strong>
      </figcaption>
      {children}
      <div class={rows ? 'chart rows' : 'chart'} style={rows ? rowsStyle(rows) : undefined}>
        <canvas ref={canvas} role="img" aria-label={summary} />
      </div>
      <details>
        <summary class="small">The figures as a table</summary>
        {table}
      </details>
    </figure>
  );
}
