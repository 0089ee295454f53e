// A policy's fit report, drawn from its JSON (metrics, thresholds, weights), with the
// self-contained HTML report (the plots) offered as a download.
import { useState } from 'preact/hooks';
import { apiText, type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import { Empty, ErrorBox, Loader, fmtNumber, fmtPercent, toProblem, useLoad } from '../ui.tsx';
import { WeightsChart } from '../weights.tsx';
import { ShapesView, type Shape, type Shapes } from '../shapes.tsx';
import { LabelSourcesView, type LabelSources, type Sampling } from './policy-labels.tsx';
import type { CostReport } from '../money.ts';
import { MoneyReport } from './policy-money.tsx';

// The OpenAPI document types a policy's report (and a backtest) as `unknown`: their shape is read here.
export type Metrics = {
  roc_auc: number | null;
  average_precision: number | null;
  brier: number | null;
  calibration_error: number | null;
};
interface Report extends CostReport {
  labels?: { fraud: number; legit: number };
  /** labelled decisions by where their label came from; absent in reports written before sources */
  label_sources?: LabelSources;
  sampling?: Sampling;
  holdout?: { decisions: number; fraud: number };
  metrics?: { base: Metrics; candidate: Metrics };
  thresholds?: { risk_level: string; min_score: number; share_flagged: number; precision: number; recall: number }[];
  weights?: Record<string, { base: number; candidate: number }>;
  /** the shaped signals of each policy; absent in reports written before shapes */
  shapes?: { base: Shapes; candidate: Shapes };
  /** the operating point the candidate's thresholds were set to meet */
  target?: {
    target: Record<string, string | number>;
    source: 'request' | 'default';
    met: boolean;
    min_score: number;
  } | null;
}

/** A weight, or for a shaped signal the word and its slopes: the weight alone is only the first slope. */
function WeightCell({ weight, shape }: { weight: number; shape: Shape | undefined }) {
  if (!shape) return <>{fmtNumber(weight)}</>;
  return (
    <span
      title={`slope ${fmtNumber(weight)} up to ${fmtNumber(shape.knots[0])}, then ${shape.slopes.map((x, i) => `${fmtNumber(x)} from ${fmtNumber(shape.knots[i])}`).join(', ')}`}
    >
      <span class="badge status-candidate">shaped</span> {fmtNumber(weight)} →{' '}
      {shape.slopes.map((x) => fmtNumber(x)).join(' → ')}
    </span>
  );
}

/** What the fit aimed the thresholds at, and whether the holdout met it. */
function TargetLine({ t }: { t: NonNullable<Report['target']> }) {
  const limit = Object.entries(t.target).find(([k]) => k !== 'level');
  const what = limit ? `${limit[0].replace(/_/g, ' ')} ${fmtPercent(Number(limit[1]))}` : '';
  return (
    <p class="target-outcome">
      Operating point ({t.source === 'request' ? 'asked' : "default: the base policy's share flagged"}):{' '}
      <strong>{String(t.target.level)}</strong> at {what}; {t.met ? 'met' : 'not met on the holdout'} with{' '}
      {String(t.target.level)} from score {fmtNumber(t.min_score)}.
    </p>
  );
}

export const MetricsRow = ({ name, m }: { name: string; m: Metrics }) => (
  <tr>
    <th scope="row" data-label="Policy" class="mono">
      {name}
    </th>
    <td data-label="ROC AUC" class="num">
      {fmtNumber(m.roc_auc)}
    </td>
    <td data-label="Avg. precision" class="num">
      {fmtNumber(m.average_precision)}
    </td>
    <td data-label="Brier" class="num">
      {fmtNumber(m.brier)}
    </td>
    <td data-label="Calibration error" class="num">
      {fmtNumber(m.calibration_error)}
    </td>
  </tr>
);
export const MetricsHead = () => (
  <thead>
    <tr>
      <th scope="col">Policy</th>
      <th scope="col" class="num">
        ROC AUC
      </th>
      <th scope="col" class="num">
        Avg. precision
      </th>
      <th scope="col" class="num">
        Brier
      </th>
      <th scope="col" class="num">
        Calibration error
      </th>
    </tr>
  </thead>
);

export function ReportView({
  version,
  onClose,
  onDerived,
}: {
  version: string;
  onClose: () => void;
  /** a candidate derived from a point of the frontier */
  onDerived: (version: string, from: string) => void;
}) {
  const state = useLoad(() => vouch.GET('/api/v1/policies/{version}', { params: { path: { version } } }), [version]);
  const [error, setError] = useState<ApiProblem>();
  // The HTML report is self-contained (inline plots): it is downloaded and opened as a file, since
  // this page's Content-Security-Policy (nothing inline) would also apply to it in a frame or tab.
  const download = async () => {
    setError(undefined);
    try {
      const html = await apiText(`/api/v1/policies/${encodeURIComponent(version)}/report`, 'text/html');
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([html], { type: 'text/html' }));
      a.download = `vouch-policy-${version}-report.html`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err) {
      setError(toProblem(err));
    }
  };
  return (
    <section class="panel" aria-labelledby="h-report">
      <div class="title-row">
        <h2 id="h-report">
          Report of <span class="mono">{version}</span>
        </h2>
        <button type="button" onClick={onClose}>
          Close report
        </button>
      </div>
      <Loader state={state} feature="The policy report">
        {(p) => {
          const r = p.report as Report | null;
          if (!r) return <Empty>This policy was not fitted, so it has no report. Fit a candidate to get one.</Empty>;
          return (
            <>
              {r.labels && (
                <p>
                  Fitted on {fmtNumber(r.labels.fraud)} fraud and {fmtNumber(r.labels.legit)} legit labels; holdout{' '}
                  {fmtNumber(r.holdout?.decisions)} decisions ({fmtNumber(r.holdout?.fraud)} fraud).
                </p>
              )}
              {r.label_sources && <LabelSourcesView sources={r.label_sources} sampling={r.sampling} />}
              {r.metrics && (
                <div class="table-wrap">
                  <table class="stack">
                    <caption>Holdout metrics</caption>
                    <MetricsHead />
                    <tbody>
                      <MetricsRow name="base" m={r.metrics.base} />
                      <MetricsRow name="candidate" m={r.metrics.candidate} />
                    </tbody>
                  </table>
                </div>
              )}
              {r.thresholds && (
                <div class="table-wrap">
                  <table class="stack">
                    <caption>Thresholds</caption>
                    <thead>
                      <tr>
                        <th scope="col">Level</th>
                        <th scope="col" class="num">
                          Min score
                        </th>
                        <th scope="col" class="num">
                          Flagged
                        </th>
                        <th scope="col" class="num">
                          Precision
                        </th>
                        <th scope="col" class="num">
                          Recall
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {r.thresholds.map((t) => (
                        <tr key={t.risk_level}>
                          <td data-label="Level">{t.risk_level}</td>
                          <td data-label="Min score" class="num">
                            {fmtNumber(t.min_score)}
                          </td>
                          <td data-label="Flagged" class="num">
                            {fmtPercent(t.share_flagged)}
                          </td>
                          <td data-label="Precision" class="num">
                            {fmtNumber(t.precision)}
                          </td>
                          <td data-label="Recall" class="num">
                            {fmtNumber(t.recall)}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              {r.target && <TargetLine t={r.target} />}
              <MoneyReport r={r} version={p.version} onDerived={(v) => onDerived(v, p.version)} />
              {r.weights && Object.keys(r.weights).length > 0 && (
                <WeightsChart weights={r.weights} shaped={new Set(Object.keys(r.shapes?.candidate ?? {}))} />
              )}
              {r.weights && r.shapes && <ShapesView weights={r.weights} shapes={r.shapes} />}
              {r.weights && (
                <div class="table-wrap">
                  <table class="stack">
                    <caption>Weights before and after</caption>
                    <thead>
                      <tr>
                        <th scope="col">Signal</th>
                        <th scope="col" class="num">
                          Base
                        </th>
                        <th scope="col" class="num">
                          Candidate
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {Object.entries(r.weights).map(([k, w]) => (
                        <tr key={k}>
                          <td data-label="Signal" class="mono">
                            {k}
                          </td>
                          <td data-label="Base" class="num">
                            <WeightCell weight={w.base} shape={r.shapes?.base[k]} />
                          </td>
                          <td data-label="Candidate" class="num">
                            <WeightCell weight={w.candidate} shape={r.shapes?.candidate[k]} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
              <p>
                <button type="button" onClick={download}>
                  Download the HTML report with plots
                </button>{' '}
                <small class="muted">
                  ROC, precision–recall, calibration, score distributions{r.frontier ? ', the frontier' : ''}; opens in
                  any browser, offline.
                </small>
              </p>
              <ErrorBox error={error} what="Could not fetch the HTML report" />
            </>
          );
        }}
      </Loader>
    </section>
  );
}
