// Policies: versions and their status; upload, fit, backtest, shadow and activate (after a
// confirmation showing how the backtest moves decisions between levels); the fit report; a
// version's economics at /policies/{version} (policy-economics.tsx), where a candidate derived from
// the economics form or from a point of a fit's frontier is shown.
// Uploading and fitting a candidate are in policy-candidates.tsx.
import { useState } from 'preact/hooks';
import { type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import { may } from '../permissions.ts';
import { Done, Empty, ErrorBox, Loader, Loading, fmtDate, navigate, toProblem, useLoad } from '../ui.tsx';
import { ConfirmDelete } from '../confirm-delete.tsx';
import type { Change } from '../people-types.ts';
import { ReportView } from './policy-report.tsx';
import { Activate, BacktestView, backtestOf, type Backtest } from './policy-activate.tsx';
import { Fit, Upload } from './policy-candidates.tsx';
import { ReviewLabelsNote } from './policy-labels.tsx';
import { EconomicsPanel } from './policy-economics.tsx';
import { whoName } from './actors.ts';

const policyPath = (version: string) => `/policies/${encodeURIComponent(version)}`;

/** `version`: the version whose economics are open (the path /policies/{version}). */
export function PoliciesPage({ version }: { version?: string }) {
  const list = useLoad(() => vouch.GET('/api/v1/policies'), []);
  const [backtest, setBacktest] = useState<{ version: string; result?: Backtest; error?: ApiProblem }>();
  const [activating, setActivating] = useState<string>();
  const [endingShadow, setEndingShadow] = useState<string>();
  const [report, setReport] = useState<string>();
  const [message, setMessage] = useState<string | Change>();
  const [error, setError] = useState<ApiProblem>();
  const [derived, setDerived] = useState<{ version: string; note: string }>();
  const write = may('policy:write', 'operator');
  // a backtest reads every decision and holds the job slot: an operator's act (docs/api.md, "Policies")
  const backtests = may('policy:read', 'operator');
  const showDerived = (v: string, note: string) => {
    setDerived({ version: v, note });
    setReport(undefined);
    list.reload();
    navigate(policyPath(v));
  };
  const runBacktest = async (version: string) => {
    setBacktest({ version });
    try {
      setBacktest({
        version,
        result: await backtestOf(version),
      });
    } catch (err) {
      setBacktest({ version, error: toProblem(err) });
    }
  };
  const shadow = async (version: string) => {
    setError(undefined);
    try {
      await vouch.POST('/api/v1/policies/{version}/shadow', { params: { path: { version } }, body: {} });
      setMessage(`Policy ${version} now runs in shadow beside the active one.`);
      list.reload();
    } catch (err) {
      setError(toProblem(err));
    }
  };
  return (
    <section aria-labelledby="h-policies">
      <h1 id="h-policies">Policies</h1>
      <ReviewLabelsNote policies={list.data} />
      <Done outcome={message} />
      <ErrorBox error={error} what="The action failed" />
      <Loader state={list} feature="Policy management">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No policies stored. The built-in policy is stored when the service starts; upload one below.</Empty>
          ) : (
            <div class="table-wrap">
              <table class="stack">
                <caption class="sr-only">Policy versions</caption>
                <thead>
                  <tr>
                    <th scope="col">Version</th>
                    <th scope="col">Status</th>
                    <th scope="col">Summary</th>
                    <th scope="col">Parent</th>
                    <th scope="col">Created</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((p) => (
                    <tr key={p.version} class={p.status === 'active' ? 'attention' : undefined}>
                      <td data-label="Version" class="mono">
                        {p.version}
                      </td>
                      <td data-label="Status">
                        <span class={`badge status-${p.status}`}>{p.status}</span>
                        {p.status === 'active' && p.activated_by && (
                          <small class="muted by"> by {p.activated_by.name}</small>
                        )}
                      </td>
                      <td data-label="Summary" class="summary">
                        {p.summary}
                      </td>
                      <td data-label="Parent" class="mono">
                        {p.parent_version ?? '—'}
                      </td>
                      <td data-label="Created">
                        {fmtDate(p.created_at)}
                        {p.created_by && (
                          <small class="muted by" title={p.created_by}>
                            {' '}
                            by {whoName(p.created_by_actor, p.created_by)}
                          </small>
                        )}
                      </td>
                      <td data-label="" class="actions">
                        {backtests && (
                          <button
                            type="button"
                            aria-label={`Backtest ${p.version}`}
                            onClick={() => runBacktest(p.version)}
                          >
                            Backtest
                          </button>
                        )}
                        <button
                          type="button"
                          aria-label={`Report of ${p.version}`}
                          onClick={() => setReport(p.version)}
                        >
                          Report
                        </button>
                        <button
                          type="button"
                          aria-label={`Economics of ${p.version}`}
                          onClick={() => navigate(policyPath(p.version))}
                        >
                          Economics
                        </button>
                        {write && p.status !== 'active' && p.status !== 'shadow' && (
                          <button type="button" aria-label={`Shadow ${p.version}`} onClick={() => shadow(p.version)}>
                            Shadow
                          </button>
                        )}
                        {write && p.status === 'shadow' && (
                          <button
                            type="button"
                            class="danger"
                            aria-label={`End shadow of ${p.version}`}
                            onClick={() => setEndingShadow(p.version)}
                          >
                            End shadow
                          </button>
                        )}
                        {write && p.status !== 'active' && (
                          <button
                            type="button"
                            class="primary"
                            aria-label={`Activate ${p.version}`}
                            onClick={() => setActivating(p.version)}
                          >
                            Activate
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loader>
      {version && (
        <EconomicsPanel
          version={version}
          note={derived?.version === version ? derived.note : undefined}
          onClose={() => navigate('/policies')}
          onDerived={(v) =>
            showDerived(
              v,
              `Candidate ${v} derived from ${version} with these economics: backtest it, then activate it.`,
            )
          }
        />
      )}
      {backtest && !activating && (
        <section class="panel" aria-labelledby="h-backtest">
          <h2 id="h-backtest">
            Backtest of <span class="mono">{backtest.version}</span>
          </h2>
          {backtest.error ? (
            <ErrorBox error={backtest.error} what="Backtest failed" />
          ) : backtest.result ? (
            <BacktestView b={backtest.result} />
          ) : (
            <Loading what="Replaying stored decisions" />
          )}
        </section>
      )}
      {report && (
        <ReportView
          version={report}
          onClose={() => setReport(undefined)}
          onDerived={(v, from) =>
            showDerived(
              v,
              `Candidate ${v} derived from ${from} at the frontier point chosen: backtest it, then activate it.`,
            )
          }
        />
      )}
      {write && (
        <div class="cards">
          <Upload
            onDone={(v) => {
              setMessage(`Policy ${v} stored as a candidate.`);
              list.reload();
            }}
          />
          <Fit
            onDone={(v) => {
              setMessage(`Fitted policy ${v} stored as a candidate; see its report.`);
              setReport(v);
              list.reload();
            }}
          />
        </div>
      )}
      {endingShadow && (
        <EndShadow
          version={endingShadow}
          onClose={(done) => {
            setEndingShadow(undefined);
            if (done) {
              setMessage(`Policy ${endingShadow} no longer runs in shadow.`);
              list.reload();
            }
          }}
        />
      )}
      {activating && (
        <Activate
          version={activating}
          active={list.data?.data.find((p) => p.status === 'active')?.version}
          onClose={(done) => {
            setActivating(undefined);
            if (typeof done !== 'boolean') setMessage(done);
            else if (done) {
              setMessage(`Policy ${activating} is now active.`);
              list.reload();
            }
          }}
        />
      )}
    </section>
  );
}

/** Ends shadow mode (DELETE /api/v1/policies/shadow) after a confirmation. */
function EndShadow({ version, onClose }: { version: string; onClose: (done: boolean) => void }) {
  return (
    <ConfirmDelete
      title={`End the shadow run of ${version}?`}
      confirmLabel="End shadow"
      failed="Could not end the shadow run"
      onCancel={() => onClose(false)}
      remove={async () => {
        await vouch.DELETE('/api/v1/policies/shadow');
        onClose(true);
      }}
    >
      <p>
        Scores stop being computed under it beside the active policy; decisions already made keep their shadow scores.
        The active policy is unchanged.
      </p>
    </ConfirmDelete>
  );
}
