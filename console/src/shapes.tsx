// A fitted policy's shaped signals (docs/signals.md, "Shaped signals"), drawn from its JSON report:
// a shaped signal's `weight` is only its first slope (often 0, the fit's knots doing the work), so
// the report's weights table alone would read "weight 0" for a signal that does count. Each shaped
// signal gets a small line chart of its contribution against its value, base beside candidate.
import { useEffect, useRef } from 'preact/hooks';
import {
  CategoryScale,
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  Tooltip,
} from 'chart.js';
import { fmtNumber } from './ui.tsx';

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, Tooltip, Legend);

export interface Shape {
  knots: number[];
  slopes: number[];
}
export type Shapes = Record<string, Shape | undefined>;

/**
 * g(x) = w·min(x, k₁) + Σᵢ sᵢ·clip(x − kᵢ, 0, kᵢ₊₁ − kᵢ), the last slope continuing: the
 * contribution in log-odds, as the service scores it (docs/signals.md, "Shaped signals").
 */
function contribution(weight: number, shape: Shape | undefined, x: number): number {
  if (!shape || shape.knots.length === 0) return weight * x;
  let g = weight * Math.min(x, shape.knots[0]!);
  for (let i = 0; i < shape.knots.length && x > shape.knots[i]!; i++) {
    const end = i + 1 < shape.knots.length ? Math.min(x, shape.knots[i + 1]!) : x;
    g += (shape.slopes[i] ?? 0) * (end - shape.knots[i]!);
  }
  return g;
}

/** The value range drawn: past the last knot by half its value, so the last slope shows. */
function xs(shapes: Array<Shape | undefined>): number[] {
  const last = Math.max(1, ...shapes.flatMap((s) => s?.knots ?? []));
  const end = last * 1.5;
  const points = new Set<number>([0, end, ...shapes.flatMap((s) => s?.knots ?? [])]);
  for (let i = 1; i < 24; i++) points.add((end * i) / 24);
  return [...points].sort((a, b) => a - b);
}

/** One shaped signal: contribution (log-odds) against value under the base and the candidate. */
function ShapeChart({
  name,
  weight,
  shapes,
}: {
  name: string;
  weight: { base: number; candidate: number };
  shapes: { base?: Shape; candidate?: Shape };
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const key = JSON.stringify([name, weight, shapes]);
  const at = xs([shapes.base, shapes.candidate]);
  const end = at[at.length - 1]!;
  const candidateEnd = contribution(weight.candidate, shapes.candidate, end);
  useEffect(() => {
    if (!canvas.current) return;
    const line = (w: number, shape: Shape | undefined) => at.map((x) => ({ x, y: contribution(w, shape, x) }));
    const chart = new Chart(canvas.current, {
      type: 'line',
      data: {
        datasets: [
          {
            label: 'base',
            data: line(weight.base, shapes.base),
            borderColor: '#9aa5b4',
            backgroundColor: '#9aa5b4',
            borderDash: [4, 3],
            pointRadius: 0,
            borderWidth: 2,
          },
          {
            label: 'candidate',
            data: line(weight.candidate, shapes.candidate),
            borderColor: '#1f4e8c',
            backgroundColor: '#1f4e8c',
            pointRadius: 0,
            borderWidth: 2,
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        parsing: false,
        scales: {
          x: { type: 'linear', min: 0, max: end, title: { display: true, text: 'signal value' } },
          y: { title: { display: true, text: 'log-odds' } },
        },
        plugins: {
          legend: { position: 'bottom', labels: { boxWidth: 14 } },
          tooltip: {
            callbacks: { label: (c) => `${c.dataset.label}: ${fmtNumber(c.parsed.y)} at ${fmtNumber(c.parsed.x)}` },
          },
        },
      },
    });
    return () => chart.destroy();
  }, [key]);
  const knots = shapes.candidate?.knots ?? [];
  const summary = `${name}: contribution rises to ${fmtNumber(candidateEnd)} log-odds at value ${fmtNumber(end)} under the candidate; slope ${fmtNumber(weight.candidate)} up to ${fmtNumber(knots[0])}, then ${(shapes.candidate?.slopes ?? []).map((s, i) => `${fmtNumber(s)} from ${fmtNumber(knots[i])}`).join(', ')}`;
  return (
    <figure class="shape" data-signal={name}>
      <figcaption class="mono">{name}</figcaption>
      <div class="shape-chart">
        <canvas ref={canvas} role="img" aria-label={summary} />
      </div>
      <p class="muted small">{summary}.</p>
    </figure>
  );
}

/** Every signal either policy shapes, one small chart each. */
export function ShapesView({
  weights,
  shapes,
}: {
  weights: Record<string, { base: number; candidate: number }>;
  shapes: { base: Shapes; candidate: Shapes };
}) {
  const names = [...new Set([...Object.keys(shapes.candidate), ...Object.keys(shapes.base)])].filter(
    (n) => shapes.candidate[n] || shapes.base[n],
  );
  if (names.length === 0) return null;
  return (
    <section aria-labelledby="h-shapes">
      <h3 id="h-shapes">Shaped signals</h3>
      <p class="muted">
        A shaped signal's contribution bends at its knots: its weight is only the slope up to the first knot (0 when the
        labels gave no evidence there), so it is drawn as a curve of its contribution against its value.
      </p>
      <div class="shapes">
        {names.map((n) => (
          <ShapeChart
            key={n}
            name={n}
            weight={weights[n] ?? { base: 0, candidate: 0 }}
            shapes={{ base: shapes.base[n], candidate: shapes.candidate[n] }}
          />
        ))}
      </div>
    </section>
  );
}
