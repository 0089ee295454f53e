// One decision: the score's facts, labelling it, the rules that fired and why the score is what it is.
import { useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import {
  Empty,
  ErrorBox,
  Field,
  LevelBadge,
  Link,
  Loader,
  fmtDate,
  fmtMoney,
  fmtNumber,
  useAction,
  useLoad,
} from '../ui.tsx';
import { isDispute, type Decision, type Label, type ScoreResult } from '../types.ts';
import { SignalTable, Waterfall } from '../waterfall.tsx';
import { NetworkPeers, SafeAmount, type ScoreRequest } from './decision-facts.tsx';
import { DecisionRules, OutcomeBadge, outcomeOf } from './decision-rules.tsx';
import { MoneyWhy } from './decision-money.tsx';
import { whoName } from './actors.ts';

export function DecisionPage({ id }: { id: string }) {
  const state = useLoad(() => vouch.GET('/api/v1/decisions/{id}', { params: { path: { id } } }), [id]);
  return (
    <section aria-labelledby="h-decision">
      <p>
        <Link to="/decisions">← All decisions</Link>
      </p>
      <h1 id="h-decision">
        Decision <span class="mono">{id}</span>
      </h1>
      {state.error?.status === 404 ? (
        <Empty>
          No decision with this id is visible to this client. Check the id, or sign in as the client that made it.
        </Empty>
      ) : (
        <Loader state={state} feature="This decision">
          {(d) =>
            isDispute(d) ? (
              <p>
                This is a dispute analysis:{' '}
                <Link to={`/disputes/${encodeURIComponent(d.id)}`}>open it on the Disputes page</Link>.
              </p>
            ) : (
              // keyed by the decision: its label and note are state, never carried to the next one
              <ScoreView key={d.id} d={d} />
            )
          }
        </Loader>
      )}
    </section>
  );
}

function ScoreView({ d }: { d: Decision }) {
  const r = d.result as ScoreResult;
  const asked = (d.request ?? null) as ScoreRequest | null;
  const [label, setLabel] = useState<Label | null | undefined>(d.label);
  const [note, setNote] = useState('');
  const { busy, error, run } = useAction({ settle: true });
  const send = (value: 'fraud' | 'legit') =>
    run(async () =>
      setLabel(
        await vouch.POST('/api/v1/decisions/{id}/label', {
          params: { path: { id: d.id } },
          body: { label: value, ...(note.trim() ? { note: note.trim() } : {}) },
        }),
      ),
    );
  return (
    <>
      <dl class="facts">
        <div>
          <dt>Score</dt>
          <dd class="big">{fmtNumber(r.score)}</dd>
        </div>
        <div>
          <dt>Level</dt>
          <dd>
            <LevelBadge level={r.risk_level} />
          </dd>
        </div>
        <div>
          <dt>Outcome</dt>
          <dd>
            <OutcomeBadge outcome={outcomeOf(d).outcome} />
          </dd>
        </div>
        <div>
          <dt>Amount</dt>
          <dd>
            {asked?.amount !== undefined ? (
              fmtMoney(asked.amount, asked.currency)
            ) : (
              <span class="muted">not recorded</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Safe amount</dt>
          <dd>
            <SafeAmount amount={r.safe_amount} currency={asked?.currency} />
          </dd>
        </div>
        {asked?.payment_method && (
          <div>
            <dt>Payment</dt>
            <dd>
              {asked.payment_method.replace(/_/g, ' ')}
              {asked.side ? ` (${asked.side})` : ''}
            </dd>
          </div>
        )}
        <div>
          <dt>Trade</dt>
          <dd class="mono">{d.trade_id ?? <span class="muted">none given</span>}</dd>
        </div>
        <div>
          <dt>Entity</dt>
          <dd class="mono trunc">
            <Link to={`/entities/${encodeURIComponent(r.entity_id)}`}>{r.entity_id}</Link>
          </dd>
        </div>
        <div>
          <dt>Scored</dt>
          <dd>{fmtDate(r.scored_at ?? d.created_at)}</dd>
        </div>
        <div>
          <dt>Policy</dt>
          <dd class="mono">{d.policy_version}</dd>
        </div>
        <div>
          <dt>Label</dt>
          <dd>{label ? <LabelFact label={label} /> : <span class="muted">none</span>}</dd>
        </div>
      </dl>
      {hasScope('labels:write') && (
        <div class="actions label-actions" role="group" aria-label="Label this decision">
          <Field label="Note (optional)">
            <input
              value={note}
              maxLength={500}
              placeholder="why, for whoever reads this later"
              onInput={(e) => setNote(e.currentTarget.value)}
            />
          </Field>
          <button type="button" class="danger" disabled={busy} onClick={() => send('fraud')}>
            Fraud
          </button>
          <button type="button" class="ok" disabled={busy} onClick={() => send('legit')}>
            Legit
          </button>
        </div>
      )}
      <ErrorBox error={error} what="Could not label" />
      <MoneyWhy result={{ ...r, outcome: outcomeOf(d).outcome }} rules={outcomeOf(d).rules} />
      <DecisionRules d={d} />
      {d.network_peers && d.network_peers.length > 0 && (
        <NetworkPeers peers={d.network_peers} signal={r.signals.find((s) => s.name === 'network_flags')} />
      )}
      <h2>Why this score</h2>
      {r.signals.length === 0 ? (
        <Empty>No signal moved this score: it is the policy's baseline for an entity with no history.</Empty>
      ) : (
        <Waterfall score={r.score} signals={r.signals} policyVersion={d.policy_version} />
      )}
      <SignalTable r={r} />
    </>
  );
}

/** The label, where it came from and when, and the labeller's note when there is one. */
function LabelFact({ label }: { label: Label }) {
  return (
    <>
      <span class={`badge label-${label.label}`}>{label.label}</span>{' '}
      <small class="muted" title={label.labelled_by ?? undefined}>
        ({label.source}, {fmtDate(label.labelled_at)}
        {label.labelled_by && `, by ${whoName(label.labelled_by_actor, label.labelled_by)}`})
      </small>
      {label.note && <p class="label-note">“{label.note}”</p>}
    </>
  );
}
