// Decisions: the audit trail of scores and analyses, filterable, and one decision's reasons.
import { useState } from 'preact/hooks';
import { api, currentSession, hasScope, query, type ApiProblem } from '../api.ts';
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
  localToIso,
  navigate,
  toProblem,
  useAction,
  useLoad,
} from '../ui.tsx';
import {
  isDispute,
  LEVELS,
  type Decision,
  type DecisionList,
  type DisputeResult,
  type Label,
  type ScoreResult,
} from '../types.ts';
import { SignalTable, Waterfall } from '../waterfall.tsx';
import { NetworkPeers, SafeAmount, tradeAmount, words, disputeRequest, type ScoreRequest } from './decision-facts.tsx';
import { DecisionRules, OutcomeBadge, outcomeOf } from './decision-rules.tsx';
import { OUTCOMES } from './rules-api.ts';

interface Filters {
  kind: string;
  risk_level: string;
  outcome: string;
  label: string;
  entity_id: string;
  since: string;
  until: string;
}
const NO_FILTERS: Filters = { kind: '', risk_level: '', outcome: '', label: '', entity_id: '', since: '', until: '' };

/** A paginated decision list for the given API filters; used by Decisions, Disputes and Entities. */
export function useDecisionList(params: Record<string, string | undefined>) {
  const [extra, setExtra] = useState<{
    key: string;
    rows: Decision[];
    cursor: string | null;
    error?: ApiProblem;
    busy?: boolean;
  }>();
  const key = JSON.stringify(params);
  const first = useLoad(() => api<DecisionList>('GET', `/api/v1/decisions${query({ ...params, limit: 50 })}`), [key]);
  const more = extra?.key === key ? extra : undefined;
  const rows = [...(first.data?.data ?? []), ...(more?.rows ?? [])];
  const cursor = more ? more.cursor : (first.data?.next_cursor ?? null);
  const loadMore = async () => {
    if (!cursor) return;
    setExtra({ key, rows: more?.rows ?? [], cursor, busy: true });
    try {
      const page = await api<DecisionList>('GET', `/api/v1/decisions${query({ ...params, limit: 50, cursor })}`);
      setExtra({ key, rows: [...(more?.rows ?? []), ...page.data], cursor: page.next_cursor });
    } catch (err) {
      setExtra({ key, rows: more?.rows ?? [], cursor, error: toProblem(err) });
    }
  };
  return { first, rows, cursor, loadMore, more };
}

export function DecisionsPage() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [openId, setOpenId] = useState('');
  const list = useDecisionList({
    kind: filters.kind || undefined,
    risk_level: filters.risk_level || undefined,
    outcome: filters.outcome || undefined,
    label: filters.label || undefined,
    entity_id: filters.entity_id.trim() || undefined,
    since: localToIso(filters.since),
    until: localToIso(filters.until),
  });
  const set = (k: keyof Filters) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setDraft({ ...draft, [k]: e.currentTarget.value });
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);
  return (
    <section aria-labelledby="h-decisions">
      <h1 id="h-decisions">Decisions</h1>
      <PerClientNote what="decisions" />
      <form
        class="row open-by-id"
        onSubmit={(e) => {
          e.preventDefault();
          if (openId.trim()) navigate(`/decisions/${encodeURIComponent(openId.trim())}`);
        }}
      >
        <Field label="Decision ID">
          <input value={openId} placeholder="dec_… or dan_…" onInput={(e) => setOpenId(e.currentTarget.value)} />
        </Field>
        <button type="submit">Open decision</button>
      </form>
      <form
        class="filters"
        aria-label="Filter decisions"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        <Field label="Kind">
          <select value={draft.kind} onChange={set('kind')}>
            <option value="">Any</option>
            <option value="score">Score</option>
            <option value="dispute">Dispute analysis</option>
          </select>
        </Field>
        <Field label="Risk level">
          <select value={draft.risk_level} onChange={set('risk_level')}>
            <option value="">Any</option>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Outcome">
          <select value={draft.outcome} onChange={set('outcome')}>
            <option value="">Any</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Label">
          <select value={draft.label} onChange={set('label')}>
            <option value="">Any</option>
            <option value="fraud">Fraud</option>
            <option value="legit">Legit</option>
            <option value="none">Unlabelled</option>
          </select>
        </Field>
        <Field label="Entity">
          <input value={draft.entity_id} placeholder="hashed entity id" onInput={set('entity_id')} />
        </Field>
        <Field label="Since">
          <input type="datetime-local" value={draft.since} onInput={set('since')} />
        </Field>
        <Field label="Until">
          <input type="datetime-local" value={draft.until} onInput={set('until')} />
        </Field>
        <div class="actions">
          <button class="primary" type="submit">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(NO_FILTERS);
              setFilters(NO_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <DecisionTable
        list={list}
        empty={
          filtered
            ? 'No decision matches these filters. Widen the time range or clear a filter.'
            : `No decisions yet. Every POST /api/v1/trust/score and /api/v1/dispute/analyze call${ownOnly() ? " made with this client's credentials" : ''} is recorded here.`
        }
      />
    </section>
  );
}

export function DecisionTable({
  list,
  empty,
  feature = 'The decision list',
}: {
  list: ReturnType<typeof useDecisionList>;
  empty: string;
  feature?: string;
}) {
  return (
    <Loader state={list.first} feature={feature}>
      {() =>
        list.rows.length === 0 ? (
          <Empty>{empty}</Empty>
        ) : (
          <>
            <div class="table-wrap">
              <table class="stack">
                <caption class="sr-only">Decisions, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Subject</th>
                    <th scope="col" class="num">
                      Amount
                    </th>
                    <th scope="col">Reason</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Level</th>
                    <th scope="col">Label</th>
                  </tr>
                </thead>
                <tbody>
                  {list.rows.map((d) => (
                    <DecisionRow key={d.id} d={d} />
                  ))}
                </tbody>
              </table>
            </div>
            <ErrorBox error={list.more?.error} what="Could not load more" />
            {list.cursor && (
              <button type="button" onClick={list.loadMore} disabled={list.more?.busy}>
                {list.more?.busy ? 'Loading…' : 'Load more'}
              </button>
            )}
          </>
        )
      }
    </Loader>
  );
}

function DecisionRow({ d }: { d: Decision }) {
  const dispute = isDispute(d);
  const r = d.result as Partial<ScoreResult & DisputeResult>;
  return (
    <tr>
      <td data-label="Time">
        <Link to={dispute ? `/disputes/${encodeURIComponent(d.id)}` : `/decisions/${encodeURIComponent(d.id)}`}>
          {fmtDate(d.created_at)}
        </Link>
      </td>
      <td data-label="Kind">{dispute ? 'dispute' : 'score'}</td>
      <td data-label="Subject" class="mono trunc" title={d.subject_id}>
        {d.subject_id}
      </td>
      <td data-label="Amount" class="num amount">
        {tradeAmount(d)}
      </td>
      <td data-label="Reason">{words(disputeRequest(d)?.reason) ?? <span class="muted">—</span>}</td>
      <td data-label="Outcome">
        {dispute ? (
          (r.recommendation ?? '—').replace(/_/g, ' ')
        ) : outcomeOf(d).outcome ? (
          <>
            <OutcomeBadge outcome={outcomeOf(d).outcome} />{' '}
            <small class="muted nowrap">score {fmtNumber(r.score)}</small>
          </>
        ) : (
          fmtNumber(r.score)
        )}
      </td>
      <td data-label="Level">
        <LevelBadge level={r.risk_level} />
      </td>
      <td data-label="Label">
        {d.label ? (
          <span class={`badge label-${d.label.label}`}>{d.label.label}</span>
        ) : (
          <span class="muted">none</span>
        )}
      </td>
    </tr>
  );
}

export function DecisionPage({ id }: { id: string }) {
  const state = useLoad(() => api<Decision>('GET', `/api/v1/decisions/${encodeURIComponent(id)}`), [id]);
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
              <ScoreView d={d} />
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
        await api<Label>('POST', `/api/v1/decisions/${encodeURIComponent(d.id)}/label`, {
          label: value,
          ...(note.trim() ? { note: note.trim() } : {}),
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
        <div class="actions" role="group" aria-label="Label this decision">
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
      <small class="muted">
        ({label.source}, {fmtDate(label.labelled_at)})
      </small>
      {label.note && <p class="label-note">“{label.note}”</p>}
    </>
  );
}

/** Whether the signed-in client sees only its own decisions: every role but admin does. */
export const ownOnly = (): boolean => currentSession()?.role !== 'admin';

/** Decisions are recorded per client: a non-admin is told it sees its own client's only. */
export function PerClientNote({ what }: { what: string }) {
  const session = currentSession();
  if (!session || !ownOnly()) return null;
  return (
    <p class="note" role="note">
      Decisions are recorded per client: <strong>{session.clientName}</strong> sees only the {what} made with its own
      credentials. To see another client's {what}, sign in as that client or as an admin client.
    </p>
  );
}
