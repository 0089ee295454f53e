// A decision's explanation as a waterfall (floating bars): from the policy's bias, each signal's
// contribution (weight × value, in log-odds) moves the total, which σ turns into the score.
import { useEffect, useRef, useState } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import { hasScope } from './api.ts';
import { vouch } from './api-client.ts';
import { fmtNumber } from './ui.tsx';
import type { ScoreResult, Signal } from './types.ts';
import { EVERY_LABEL, countDrawnLabels, rowsStyle } from './charts.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

const RISK = '#b3261e';
const SAFE = '#1b7f3b';
const NEUTRAL = '#5f6b7a';

/**
 * The bias from the stored policy when this client may read policies; otherwise solved from the score,
 * which is only possible when the score is not clamped at 0 or 100 (then the bias is unknown).
 */
function useBias(
  policyVersion: string,
  score: number,
  signals: Signal[],
): { bias: number | undefined; exact: boolean } {
  const total = signals.reduce((s, x) => s + x.weight * x.value, 0);
  // the score is rounded: solve at its value, which is within half a point of the exact one
  const p = score / 100;
  const derived = { bias: score > 0 && score < 100 ? Math.log(p / (1 - p)) - total : undefined, exact: false };
  const [bias, setBias] = useState<{ bias: number | undefined; exact: boolean }>(derived);
  useEffect(() => {
    let live = true;
    if (!hasScope('policy:read')) return;
    vouch
      .GET('/api/v1/policies/{version}', { params: { path: { version: policyVersion } } })
      .then((p) => {
        // the document is `unknown` in the OpenAPI document: only its bias is read
        const bias = (p.document as { bias?: unknown } | null)?.bias;
        if (live && typeof bias === 'number') setBias({ bias, exact: true });
      })
      .catch(() => {});
    return () => {
      live = false;
    };
  }, [policyVersion]);
  return bias;
}

export function Waterfall({
  score,
  signals,
  policyVersion,
}: {
  score: number;
  signals: Signal[];
  policyVersion: string;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const { bias, exact } = useBias(policyVersion, score, signals);
  const steps: { label: string; from: number; to: number; color: string }[] = [];
  if (bias !== undefined)
    steps.push({ label: exact ? 'bias' : 'bias (solved from the score)', from: 0, to: bias, color: NEUTRAL });
  let at = bias ?? 0;
  for (const s of signals) {
    const c = s.weight * s.value;
    steps.push({ label: s.name, from: at, to: at + c, color: c > 0 ? RISK : SAFE });
    at += c;
  }
  steps.push({
    label: bias === undefined ? 'signals in total' : `total → score ${fmtNumber(score)}`,
    from: 0,
    to: at,
    color: '#1f4e8c',
  });
  const summary =
    bias === undefined
      ? `The ${signals.length} signals add ${fmtNumber(at)} log-odds. The policy's bias is not shown: this client may not read policies (policy:read) and a score of ${score} is at the end of the scale.`
      : `Waterfall from bias ${fmtNumber(bias)} through ${signals.length} signals to ${fmtNumber(at)} log-odds, score ${score}.`;
  const key = JSON.stringify(steps);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: steps.map((s) => s.label),
        datasets: [
          {
            label: 'log-odds',
            data: steps.map((s) => [s.from, s.to] as [number, number]),
            backgroundColor: steps.map((s) => s.color),
            borderSkipped: false,
            barPercentage: 0.8,
          },
        ],
      },
      options: {
        indexAxis: 'y',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { title: { display: true, text: 'log-odds (right is riskier)' } }, y: EVERY_LABEL },
        plugins: {
          tooltip: {
            callbacks: {
              label: (ctx) => {
                const s = steps[ctx.dataIndex]!;
                return (bias !== undefined && ctx.dataIndex === 0) || ctx.dataIndex === steps.length - 1
                  ? fmtNumber(s.to)
                  : `${s.to - s.from > 0 ? '+' : ''}${fmtNumber(s.to - s.from)}`;
              },
            },
          },
        },
      },
      plugins: [countDrawnLabels],
    });
    return () => chart.destroy();
  }, [key]);
  return (
    <figure class="waterfall">
      {/* a style property set through the DOM, which the CSP (no inline style attributes) allows */}
      <div class="chart rows" style={rowsStyle(steps.length)}>
        <canvas ref={canvas} role="img" aria-label={summary} />
      </div>
      <figcaption class="muted">{summary}</figcaption>
    </figure>
  );
}

/** Every signal of a score, largest contribution first; one card per signal on a narrow screen. */
export function SignalTable({ r }: { r: ScoreResult }) {
  if (r.signals.length === 0) return null;
  return (
    <div class="table-wrap">
      <table class="stack">
        <caption>Signals, largest contribution first (log-odds; positive is riskier)</caption>
        <thead>
          <tr>
            <th scope="col">Signal</th>
            <th scope="col">What was seen</th>
            <th scope="col" class="num">
              Value
            </th>
            <th scope="col" class="num">
              Weight
            </th>
            <th scope="col" class="num">
              Contribution
            </th>
          </tr>
        </thead>
        <tbody>
          {r.signals.map((s) => (
            <tr key={s.name}>
              <td data-label="Signal" class="mono">
                {s.name}
              </td>
              <td data-label="What was seen">{s.description}</td>
              <td data-label="Value" class="num">
                {fmtNumber(s.value)}
              </td>
              <td data-label="Weight" class="num">
                {fmtNumber(s.weight)}
              </td>
              <td data-label="Contribution" class={`num ${s.weight * s.value > 0 ? 'risk' : 'safe'}`}>
                {(s.weight * s.value > 0 ? '+' : '') + fmtNumber(s.weight * s.value)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
