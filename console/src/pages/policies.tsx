// Policies: versions and their status; upload, fit, backtest, shadow and activate (after a
// confirmation showing how the backtest moves decisions between levels); the fit report.
import { useState } from 'preact/hooks';
import { api, hasScope, type ApiProblem } from '../api.ts';
import { Confirm, Empty, ErrorBox, Field, Loader, Loading, fmtDate, localToIso, toProblem, useLoad } from '../ui.tsx';
import { type PolicyDetail, type PolicyList, type ShadowCleared } from '../types.ts';
import { ReportView } from './policy-report.tsx';
import { Activate, BacktestView, type Backtest } from './policy-activate.tsx';
import { ReviewLabelsNote } from './reviews-nav.tsx';

export function PoliciesPage() {
  const list = useLoad(() => api<PolicyList>('GET', '/api/v1/policies'), []);
  const [backtest, setBacktest] = useState<{ version: string; result?: Backtest; error?: ApiProblem }>();
  const [activating, setActivating] = useState<string>();
  const [endingShadow, setEndingShadow] = useState<string>();
  const [report, setReport] = useState<string>();
  const [message, setMessage] = useState<string>();
  const [error, setError] = useState<ApiProblem>();
  const write = hasScope('policy:write');
  const runBacktest = async (version: string) => {
    setBacktest({ version });
    try {
      setBacktest({
        version,
        result: await api<Backtest>('POST', `/api/v1/policies/${encodeURIComponent(version)}/backtest`, {}),
      });
    } catch (err) {
      setBacktest({ version, error: toProblem(err) });
    }
  };
  const shadow = async (version: string) => {
    setError(undefined);
    try {
      await api('POST', `/api/v1/policies/${encodeURIComponent(version)}/shadow`, {});
      setMessage(`Policy ${version} now runs in shadow beside the active one.`);
      list.reload();
    } catch (err) {
      setError(toProblem(err));
    }
  };
  return (
    <section aria-labelledby="h-policies">
      <h1 id="h-policies">Policies</h1>
      <ReviewLabelsNote />
      {message && (
        <p class="ok-msg" role="status">
          {message}
        </p>
      )}
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
                      </td>
                      <td data-label="Summary" class="summary">
                        {p.summary}
                      </td>
                      <td data-label="Parent" class="mono">
                        {p.parent_version ?? '—'}
                      </td>
                      <td data-label="Created">{fmtDate(p.created_at)}</td>
                      <td data-label="" class="actions">
                        <button
                          type="button"
                          aria-label={`Backtest ${p.version}`}
                          onClick={() => runBacktest(p.version)}
                        >
                          Backtest
                        </button>
                        <button
                          type="button"
                          aria-label={`Report of ${p.version}`}
                          onClick={() => setReport(p.version)}
                        >
                          Report
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
      {report && <ReportView version={report} onClose={() => setReport(undefined)} />}
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
            if (done) {
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
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  return (
    <Confirm
      title={`End the shadow run of ${version}?`}
      confirmLabel="End shadow"
      danger
      busy={busy}
      onCancel={() => onClose(false)}
      onConfirm={async () => {
        setBusy(true);
        try {
          await api<ShadowCleared>('DELETE', '/api/v1/policies/shadow');
          onClose(true);
        } catch (err) {
          setError(toProblem(err));
          setBusy(false);
        }
      }}
    >
      <p>
        Scores stop being computed under it beside the active policy; decisions already made keep their shadow scores.
        The active policy is unchanged.
      </p>
      <ErrorBox error={error} what="Could not end the shadow run" />
    </Confirm>
  );
}

function Upload({ onDone }: { onDone: (version: string) => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      setError(toProblem(new Error('The document is not valid JSON.')));
      return;
    }
    setBusy(true);
    try {
      const p = await api<PolicyDetail>('POST', '/api/v1/policies', doc);
      setText('');
      onDone(p.version);
    } catch (err) {
      setError(toProblem(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel card" onSubmit={submit} aria-labelledby="h-upload">
      <h2 id="h-upload">Upload a policy</h2>
      <Field label="Policy file">
        <input
          type="file"
          accept="application/json,.json"
          onChange={async (e) => {
            const f = e.currentTarget.files?.[0];
            if (f) setText(await f.text());
          }}
        />
      </Field>
      <Field label="Policy document (JSON)">
        <textarea rows={6} class="mono" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </Field>
      <ErrorBox error={error} what="Upload refused" />
      <button class="primary" type="submit" disabled={busy || !text.trim()}>
        Upload as candidate
      </button>
    </form>
  );
}

/** The fit's operating-point limits (docs/api.md, "Policies"): a target names exactly one. */
const LIMITS = {
  max_share_flagged: 'at most this share of decisions flagged',
  max_false_positive_rate: 'at most this share of legitimate trades flagged',
  min_precision: 'at least this share of flagged trades fraud',
} as const;
type Limit = keyof typeof LIMITS;

function Fit({ onDone }: { onDone: (version: string) => void }) {
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [holdout, setHoldout] = useState('0.3');
  const [level, setLevel] = useState<'high' | 'critical'>('high');
  const [limit, setLimit] = useState<Limit | ''>('');
  const [percent, setPercent] = useState('5');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    // no limit chosen: no target, and the server keeps the base policy's share flagged at high
    const target = limit ? { level, [limit]: Number(percent) / 100 } : undefined;
    try {
      const p = await api<PolicyDetail>('POST', '/api/v1/policies/fit', {
        since: localToIso(since),
        until: localToIso(until),
        holdout_fraction: Number(holdout),
        ...(target ? { target } : {}),
      });
      onDone(p.version);
    } catch (err) {
      setError(toProblem(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel card" onSubmit={submit} aria-labelledby="h-fit">
      <h2 id="h-fit">Fit a candidate</h2>
      <p class="muted">Fits weights to the labelled decisions (at least 30 fraud and 30 legit).</p>
      <Field label="Decisions since (optional)">
        <input type="datetime-local" value={since} onInput={(e) => setSince(e.currentTarget.value)} />
      </Field>
      <Field label="Decisions until (optional)">
        <input type="datetime-local" value={until} onInput={(e) => setUntil(e.currentTarget.value)} />
      </Field>
      <Field label="Holdout fraction">
        <input
          type="number"
          min={0.05}
          max={0.9}
          step={0.05}
          value={holdout}
          onInput={(e) => setHoldout(e.currentTarget.value)}
        />
      </Field>
      <fieldset class="target">
        <legend>Operating point</legend>
        <p class="muted">
          Sets the candidate's threshold for the level on the holdout. Without a target, <strong>high</strong> flags the
          share the base policy flags.
        </p>
        <Field label="Level">
          <select value={level} onChange={(e) => setLevel(e.currentTarget.value as 'high' | 'critical')}>
            <option value="high">high (and above)</option>
            <option value="critical">critical</option>
          </select>
        </Field>
        <Field label="Target">
          <select value={limit} onChange={(e) => setLimit(e.currentTarget.value as Limit | '')}>
            <option value="">none: keep the base policy's share flagged</option>
            {(Object.keys(LIMITS) as Limit[]).map((k) => (
              <option key={k} value={k}>
                {LIMITS[k]}
              </option>
            ))}
          </select>
        </Field>
        {limit && (
          <Field label="Percent" hint={`${LIMITS[limit]}: ${percent || '…'} %`}>
            <input
              type="number"
              min={0}
              max={100}
              step={0.5}
              required
              value={percent}
              onInput={(e) => setPercent(e.currentTarget.value)}
            />
          </Field>
        )}
      </fieldset>
      <ErrorBox error={error} what="Fit failed" />
      <button class="primary" type="submit" disabled={busy}>
        {busy ? 'Fitting…' : 'Fit'}
      </button>
    </form>
  );
}
