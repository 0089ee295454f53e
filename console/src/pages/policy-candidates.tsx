// New candidate policies: uploading a policy document, and fitting weights to the labelled decisions.
import { useState } from 'preact/hooks';
import { type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import { ErrorBox, Field, localToIso, toProblem } from '../ui.tsx';
import type { components } from '../../../sdk/src/schema.d.ts';

type PolicyDocument = components['schemas']['CreatePolicyRequest'];

export function Upload({ onDone }: { onDone: (version: string) => void }) {
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
      const p = await vouch.POST('/api/v1/policies', { body: doc as PolicyDocument }); // checked by the service
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
export function Fit({ onDone }: { onDone: (version: string) => void }) {
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
      const p = await vouch.POST('/api/v1/policies/fit', {
        body: {
          since: localToIso(since),
          until: localToIso(until),
          holdout_fraction: Number(holdout),
          ...(target ? { target } : {}),
        },
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
