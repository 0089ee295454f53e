// Decisions: the audit trail of scores and analyses, filterable; one decision's page is decision-view.tsx.
import { useState } from 'preact/hooks';
import { currentSession, type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { operations } from '../../../sdk/src/schema.d.ts';
import {
  Empty,
  ErrorBox,
  Field,
  LevelBadge,
  Link,
  Loader,
  fmtDate,
  fmtNumber,
  localToIso,
  navigate,
  toProblem,
  useLoad,
} from '../ui.tsx';
import { isDispute, type Decision, type DisputeResult, type ScoreResult } from '../types.ts';
import { tradeAmount, words, disputeRequest } from './decision-facts.tsx';
import { OutcomeBadge, outcomeOf } from './decision-rules.tsx';
import { DecisionFilters, NO_FILTERS, type Filters } from './decisions-filters.tsx';

/** A paginated decision list for the given API filters; used by Decisions, Disputes and Entities. */
/** What GET /api/v1/decisions filters on. */
type DecisionQuery = Omit<NonNullable<operations['listDecisions']['parameters']['query']>, 'cursor' | 'limit'>;

export function useDecisionList(params: DecisionQuery) {
  const [extra, setExtra] = useState<{
    key: string;
    rows: Decision[];
    cursor: string | null;
    error?: ApiProblem;
    busy?: boolean;
  }>();
  const key = JSON.stringify(params);
  const first = useLoad(() => vouch.GET('/api/v1/decisions', { params: { query: { ...params, limit: 50 } } }), [key]);
  const more = extra?.key === key ? extra : undefined;
  const rows = [...(first.data?.data ?? []), ...(more?.rows ?? [])];
  const cursor = more ? more.cursor : (first.data?.next_cursor ?? null);
  const loadMore = async () => {
    if (!cursor) return;
    setExtra({ key, rows: more?.rows ?? [], cursor, busy: true });
    try {
      const page = await vouch.GET('/api/v1/decisions', { params: { query: { ...params, limit: 50, cursor } } });
      setExtra({ key, rows: [...(more?.rows ?? []), ...page.data], cursor: page.next_cursor });
    } catch (err) {
      setExtra({ key, rows: more?.rows ?? [], cursor, error: toProblem(err) });
    }
  };
  return { first, rows, cursor, loadMore, more };
}

/** A form that opens one record's page by the id typed in (a decision, a dispute analysis). */
export function OpenById({
  label,
  placeholder,
  button,
  under,
}: {
  label: string;
  placeholder: string;
  button: string;
  /** the pages' path: the record opens at `${under}/${id}` */
  under: string;
}) {
  const [openId, setOpenId] = useState('');
  return (
    <form
      class="row open-by-id"
      onSubmit={(e) => {
        e.preventDefault();
        if (openId.trim()) navigate(`${under}/${encodeURIComponent(openId.trim())}`);
      }}
    >
      <Field label={label}>
        <input value={openId} placeholder={placeholder} onInput={(e) => setOpenId(e.currentTarget.value)} />
      </Field>
      <button type="submit">{button}</button>
    </form>
  );
}

export function DecisionsPage() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  // the filter form's choices are the API's values
  const list = useDecisionList({
    kind: filters.kind || undefined,
    risk_level: filters.risk_level || undefined,
    outcome: filters.outcome || undefined,
    label: filters.label || undefined,
    entity_id: filters.entity_id.trim() || undefined,
    since: localToIso(filters.since),
    until: localToIso(filters.until),
  } as DecisionQuery);
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);
  return (
    <section aria-labelledby="h-decisions">
      <h1 id="h-decisions">Decisions</h1>
      <PerClientNote what="decisions" />
      <OpenById label="Decision ID" placeholder="dec_… or dan_…" button="Open decision" under="/decisions" />
      <DecisionFilters draft={draft} setDraft={setDraft} apply={setFilters} />
      <DecisionTable
        list={list}
        empty={
          filtered
            ? 'No decision matches these filters. Widen the time range or clear a filter.'
            : 'No decisions yet. Every POST /api/v1/trust/score and /api/v1/dispute/analyze call' +
              (ownOnly() ? " made with this client's credentials" : '') +
              ' is recorded here.'
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

/**
 * Whether the signed-in client sees only its own decisions: every client role but admin does. A
 * person sees the environment's, whatever their role (docs/api.md, "People").
 */
export const ownOnly = (): boolean => {
  const s = currentSession();
  return s?.kind === 'client' && s.role !== 'admin';
};

/** Decisions are recorded per client: a non-admin is told it sees its own client's only. */
export function PerClientNote({ what }: { what: string }) {
  const session = currentSession();
  if (!session || !ownOnly()) return null;
  return (
    <p class="note" role="note">
      Decisions are recorded per client: <strong>{session.name}</strong> sees only the {what} made with its own
      credentials. To see another client's {what}, sign in as that client or as an admin client.
    </p>
  );
}
