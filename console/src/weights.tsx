// A fitted policy's weights before and after (the report's last plot), drawn from its JSON report.
import { useEffect, useRef } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { EVERY_LABEL, countDrawnLabels, rowsStyle } from './charts.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

/** `shaped`: the candidate's shaped signals, named so on the axis (their weight is only a first slope). */
export function WeightsChart({
  weights,
  shaped = new Set(),
}: {
  weights: Record<string, { base: number; candidate: number }>;
  shaped?: ReadonlySet<string>;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const names = Object.keys(weights);
  const key = JSON.stringify(weights);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: names.map((n) => (shaped.has(n) ? `${n} (shaped)` : n)),
        datasets: [
          { label: 'base', data: names.map((n) => weights[n]!.base), backgroundColor: '#9aa5b4' },
          { label: 'candidate', data: names.map((n) => weights[n]!.candidate), backgroundColor: '#1f4e8c' },
        ],
      },
      options: {
        indexAxis: 'y',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { title: { display: true, text: 'weight (log-odds per unit)' } }, y: EVERY_LABEL },
      },
      plugins: [countDrawnLabels],
    });
    return () => chart.destroy();
  }, [key]);
  return (
    <figure class="waterfall">
      {/* a style property set through the DOM, which the CSP (no inline style attributes) allows */}
      <div class="chart rows" style={rowsStyle(names.length)}>
        <canvas
          ref={canvas}
          role="img"
          aria-label={`Weights of ${names.length} signals, base policy against the candidate`}
        />
      </div>
      <figcaption class="muted">
        Weights before (base) and after (candidate) the fit; the table below lists them. A shaped signal's weight is its
        slope up to its first knot: its curve is drawn below.
      </figcaption>
    </figure>
  );
}
