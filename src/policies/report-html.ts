// A fitted policy's report as one self-contained HTML page (docs/api.md, "Policies"): the plots are drawn on
// the server with Vega-Lite → Vega → SVG and inlined, so the page loads nothing, runs no script
// and works offline. Every value is escaped before it reaches the markup.
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { SIGNAL_NAMES } from '../model/policy.ts';
import type { Metrics } from './metrics.ts';
import type { LevelFigure } from './operating.ts';
import type { PlotData, ShapePlot } from './plots.ts';
import { frontierSpec, moneySection, type MoneyReportLike } from './report-money.ts';

/** The columns of a level's figures the page shows (older reports stored only these). */
type ThresholdFigure = Pick<LevelFigure, 'risk_level' | 'min_score' | 'share_flagged' | 'precision' | 'recall'>;

interface ReportLike extends MoneyReportLike {
  labels: { fraud: number; legit: number };
  /** absent in reports stored before labels were counted by source */
  label_sources?: Record<string, number>;
  sampling?: { decisions: number; weight: number; left_out: number };
  train?: { decisions: number; fraud: number };
  holdout: { decisions: number; fraud: number };
  metrics: { base: Metrics; candidate: Metrics };
  thresholds: ThresholdFigure[];
  bias?: { base: number; candidate: number };
  weights: Record<string, { base: number; candidate: number }>;
  /** absent in reports stored before shapes */
  shapes?: { base: Record<string, unknown>; candidate: Record<string, unknown> };
  plots?: PlotData;
}

interface RecordLike {
  version: string;
  parent_version: string | null;
  created_at: string;
  status: string;
}

const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const fmt = (x: number | null | undefined, digits = 3): string =>
  x === null || x === undefined ? '—' : x.toFixed(digits);

const COLORS = { domain: ['base', 'candidate'], range: ['#8c8c8c', '#1f6feb'] };
const LABEL_COLORS = { domain: ['fraud', 'legit'], range: ['#d1242f', '#2da44e'] };

async function svg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const base = (title: string) =>
  ({ $schema: 'https://vega.github.io/schema/vega-lite/v5.json', title, width: 300, height: 260 }) as const;

function rocSpec(plots: PlotData): TopLevelSpec {
  const values = (['base', 'candidate'] as const).flatMap((p) =>
    plots[p].curve.map((c) => ({ policy: p, fpr: c.fpr, tpr: c.tpr, threshold: c.threshold })),
  );
  return {
    ...base('ROC (holdout)'),
    data: { values },
    mark: { type: 'line', interpolate: 'step-after', point: false },
    encoding: {
      x: { field: 'fpr', type: 'quantitative', title: 'false positive rate', scale: { domain: [0, 1] } },
      y: { field: 'tpr', type: 'quantitative', title: 'true positive rate', scale: { domain: [0, 1] } },
      color: { field: 'policy', type: 'nominal', scale: COLORS },
      order: { field: 'threshold', sort: 'descending' },
    },
  };
}

function prSpec(plots: PlotData): TopLevelSpec {
  const values = (['base', 'candidate'] as const).flatMap((p) =>
    plots[p].curve
      .slice(1)
      .map((c) => ({ policy: p, recall: c.recall, precision: c.precision, threshold: c.threshold })),
  );
  return {
    ...base('Precision–recall (holdout)'),
    data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'recall', type: 'quantitative', scale: { domain: [0, 1] } },
      y: { field: 'precision', type: 'quantitative', scale: { domain: [0, 1] } },
      color: { field: 'policy', type: 'nominal', scale: COLORS },
      order: { field: 'threshold', sort: 'descending' },
    },
  };
}

function calibrationSpec(plots: PlotData): TopLevelSpec {
  const values = (['base', 'candidate'] as const).flatMap((p) =>
    plots[p].calibration
      .filter((b) => b.count > 0)
      .map((b) => ({ policy: p, predicted: b.mean_predicted, observed: b.observed_rate, count: b.count })),
  );
  return {
    ...base('Calibration: score/100 against observed fraud rate'),
    layer: [
      {
        data: {
          values: [
            { x: 0, y: 0 },
            { x: 1, y: 1 },
          ],
        },
        mark: { type: 'line', strokeDash: [4, 4], color: '#bbbbbb' },
        encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } },
      },
      {
        data: { values },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'predicted', type: 'quantitative', title: 'mean score / 100', scale: { domain: [0, 1] } },
          y: { field: 'observed', type: 'quantitative', title: 'observed fraud rate', scale: { domain: [0, 1] } },
          color: { field: 'policy', type: 'nominal', scale: COLORS },
        },
      },
    ],
  } as TopLevelSpec;
}

function histogramSpec(plots: PlotData, policy: 'base' | 'candidate'): TopLevelSpec {
  const h = plots[policy].histogram;
  // Shares within each label: fraud is rare, and in raw counts its bars would not show.
  const values = (['fraud', 'legit'] as const).flatMap((label) => {
    const total = h[label].reduce((a, n) => a + n, 0);
    return h[label].map((count, b) => ({
      label,
      bin: `${b * 10}–${b === 9 ? 100 : b * 10 + 9}`,
      count,
      share: total > 0 ? count / total : 0,
    }));
  });
  return {
    ...base(`Score distribution by label (${policy})`),
    data: { values },
    mark: 'bar',
    encoding: {
      x: { field: 'bin', type: 'ordinal', title: 'score', sort: null },
      y: { field: 'share', type: 'quantitative', title: "share of the label's decisions", axis: { format: '%' } },
      color: { field: 'label', type: 'nominal', scale: LABEL_COLORS },
      xOffset: { field: 'label' },
    },
  } as TopLevelSpec;
}

function shapeSpec(shape: ShapePlot): TopLevelSpec {
  const values = (['base', 'candidate'] as const).flatMap((p) =>
    shape.points.map((pt) => ({ policy: p, value: pt.value, contribution: pt[p] })),
  );
  return {
    ...base(`${shape.name}: contribution by value`),
    data: { values },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'value', type: 'quantitative', title: `${shape.name} value` },
      y: { field: 'contribution', type: 'quantitative', title: 'contribution (log-odds)' },
      color: { field: 'policy', type: 'nominal', scale: COLORS },
    },
  };
}

function metricsTable(m: ReportLike['metrics']): string {
  const rows = (['roc_auc', 'average_precision', 'brier', 'calibration_error'] as const)
    .map((k) => `<tr><th>${k}</th><td>${fmt(m.base[k])}</td><td>${fmt(m.candidate[k])}</td></tr>`)
    .join('');
  return `<table><thead><tr><th>metric (holdout)</th><th>base</th><th>candidate</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function thresholdTable(t: ThresholdFigure[]): string {
  const rows = t
    .map(
      (f) =>
        `<tr><th>${esc(f.risk_level)}</th><td>${f.min_score}</td><td>${fmt(f.share_flagged)}</td><td>${fmt(f.precision)}</td><td>${fmt(f.recall)}</td></tr>`,
    )
    .join('');
  return `<table><thead><tr><th>level</th><th>min score</th><th>share flagged</th><th>precision</th><th>recall</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function weightsTable(r: ReportLike): string {
  const names = [
    ...SIGNAL_NAMES.filter((n) => r.weights[n]),
    ...Object.keys(r.weights).filter((n) => !(SIGNAL_NAMES as string[]).includes(n)),
  ];
  const bias = r.bias
    ? `<tr><th>(bias)</th><td>${fmt(r.bias.base, 4)}</td><td>${fmt(r.bias.candidate, 4)}</td><td>${fmt(r.bias.candidate - r.bias.base, 4)}</td></tr>`
    : '';
  // A shaped signal's weight is its first slope; its curve is drawn under "Shaped signals".
  const shaped = (side: 'base' | 'candidate', n: string) => (r.shapes?.[side][n] ? ' (shaped)' : '');
  const rows = names
    .map((n) => {
      const w = r.weights[n]!;
      return `<tr><th>${esc(n)}</th><td>${fmt(w.base, 4)}${shaped('base', n)}</td><td>${fmt(w.candidate, 4)}${shaped('candidate', n)}</td><td>${fmt(w.candidate - w.base, 4)}</td></tr>`;
    })
    .join('');
  return `<table><thead><tr><th>signal</th><th>base</th><th>candidate</th><th>change</th></tr></thead><tbody>${bias}${rows}</tbody></table>`;
}

/** Where the labels came from, and what the sampled approvals stood for (docs/learning.md, "Labels from reviews"). */
function sourcesLine(r: ReportLike): string {
  const sources = r.label_sources;
  if (!sources) return '';
  const parts = Object.entries(sources)
    .map(([k, n]) => `${esc(k)} ${Number(n)}`)
    .join(', ');
  const s = r.sampling;
  const sampled =
    s && s.decisions > 0
      ? ` Sampled approvals: ${Number(s.decisions)} reviewed, weighted to stand for ${fmt(s.weight, 0)} approvals (${Number(s.left_out)} unsampled approvals left out for them).`
      : '';
  return ` By source: ${parts}.${sampled}`;
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1f2328;max-width:1100px}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:right}th:first-child{text-align:left}
thead th{background:#f6f8fa}tr.own th,tr.own td{background:#fff1f0;font-weight:600}table.frontier td{white-space:nowrap}.plots{display:flex;flex-wrap:wrap;gap:1rem}.plots figure{margin:0}.note{color:#59636e}`;

export async function reportHtml(record: RecordLike, report: ReportLike): Promise<string> {
  const plots = report.plots;
  const figures = plots
    ? (
        await Promise.all(
          [
            rocSpec(plots),
            prSpec(plots),
            calibrationSpec(plots),
            histogramSpec(plots, 'base'),
            histogramSpec(plots, 'candidate'),
          ].map(svg),
        )
      )
        .map((s) => `<figure>${s}</figure>`)
        .join('')
    : '<p class="note">This report was stored without plot data.</p>';
  const shapes = plots?.shapes ?? [];
  const shapeFigures =
    shapes.length > 0
      ? `<h2>Shaped signals</h2><p class="note">Each shaped signal's contribution to the log-odds against its value (docs/signals.md, "Shaped signals"); the weight shown in a score is the slope from 0 to the value.</p><div class="plots">${(await Promise.all(shapes.map((s) => svg(shapeSpec(s))))).map((s) => `<figure>${s}</figure>`).join('')}</div>`
      : '';
  // a cost fit's figures and frontier (report-money.ts); nothing for a fit without the cost objective
  const frontier = report.outcomes ? frontierSpec(report) : undefined;
  const money = moneySection(report, frontier ? await svg(frontier) : undefined);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Vouch policy ${esc(record.version)}: report</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head>
<body>
<h1>Policy ${esc(record.version)}</h1>
<p>Fitted from <b>${esc(record.parent_version ?? '—')}</b> on ${esc(record.created_at)}; status <b>${esc(record.status)}</b>.
Labels: ${report.labels.fraud} fraud, ${report.labels.legit} legit.${sourcesLine(report)} Holdout (entities never seen by the fit): ${report.holdout.decisions} decisions, ${report.holdout.fraud} fraud.</p>
<h2>Holdout metrics</h2>${metricsTable(report.metrics)}
<h2>Plots</h2><div class="plots">${figures}</div>
<h2>What each level would flag (candidate, holdout)</h2>${thresholdTable(report.thresholds)}
${money}
<h2>Weights</h2>${weightsTable(report)}
${shapeFigures}
<p class="note">Scores are 100·σ(bias + Σ weight·value), a shaped signal's weight being its effective slope at the value; every figure above is on the holdout, which the fit never saw.</p>
</body></html>
`;
}
