// Reviews (docs/api.md, "Reviews"): the desk's queue, unresolved reviews due first with the overdue
// ones in red, filters, a "Next" button that claims the review due first and opens it, and the
// keyboard (J/K move, Enter open, N next), reviews selected to assign to oneself or release at once
// (desk-bulk.tsx), and each analyst's figures (desk-analysts.tsx). A review's page: reviews-view.tsx.
// A principal without reviews:write sees the same queue without anything that claims or resolves.
import './reviews.css';
import { useState } from 'preact/hooks';
import { currentSession, hasScope, type ApiProblem } from '../api.ts';
import {
  Empty,
  ErrorBox,
  Link,
  Loader,
  fmtDate,
  fmtMoney,
  fmtNumber,
  LevelBadge,
  navigate,
  toProblem,
  useLoad,
} from '../ui.tsx';
import { OutcomeBadge } from './decision-rules.tsx';
import { rememberOrder, reviewsApi, type Review, type ReviewStats } from './reviews-api.ts';
import { QueueFilters, DEFAULT, apiFilters, type Filters } from './reviews-filters.tsx';
import { KeyLegend, useKeys, type KeyAction } from './reviews-keys.tsx';
import { ReviewPage } from './reviews-view.tsx';
import { Due, ReviewStatus, takeFlash, useNext } from './reviews-parts.tsx';
import { Breakable } from './rules-parts.tsx';
import { BulkBar, useSelection } from './desk-bulk.tsx';
import { AnalystFigures } from './desk-analysts.tsx';

/** /reviews and /reviews/{id}: `rest` is what follows /reviews/. */
export function ReviewsSection({ rest }: { rest: string }) {
  return rest ? <ReviewPage id={rest} /> : <QueuePage />;
}

const ruleNames = (r: Review): string[] => (r.rules as Array<{ name?: string }>).map((x) => x.name ?? '?');

function Figures({ s }: { s: ReviewStats }) {
  return (
    <dl class="facts review-figures">
      <div>
        <dt>Open</dt>
        <dd class="big" data-figure="open">
          {fmtNumber(s.open)}
        </dd>
      </div>
      <div class={s.overdue > 0 ? 'overdue-box' : undefined}>
        <dt>Overdue</dt>
        <dd class="big" data-figure="overdue">
          {fmtNumber(s.overdue)}
        </dd>
      </div>
      <div>
        <dt>Resolved, 24 h</dt>
        <dd class="big" data-figure="resolved">
          {fmtNumber(s.resolved_24h)}
        </dd>
      </div>
      <div>
        <dt>Median time to resolve</dt>
        <dd class="big">
          {s.median_minutes_to_resolve === null ? '—' : `${fmtNumber(s.median_minutes_to_resolve)} min`}
        </dd>
      </div>
      <div>
        <dt>Verdicts</dt>
        <dd>
          {fmtNumber(s.agreement.approve)} approved · {fmtNumber(s.agreement.decline)} declined
        </dd>
      </div>
    </dl>
  );
}

function QueuePage() {
  const write = hasScope('reviews:write');
  const [draft, setDraft] = useState<Filters>(DEFAULT);
  const [filters, setFilters] = useState<Filters>(DEFAULT);
  const [more, setMore] = useState<{ key: string; rows: Review[]; cursor: string | null; error?: ApiProblem }>();
  const [selected, setSelected] = useState(0);
  const [message] = useState(takeFlash);
  const key = JSON.stringify(filters);
  const stats = useLoad(() => reviewsApi.stats(), [key]);
  const first = useLoad(() => reviewsApi.list(apiFilters(filters)), [key]);
  const extra = more?.key === key ? more : undefined;
  const unresolvedOnly = filters.status === 'unresolved';
  const all = [...(first.data?.data ?? []), ...(extra?.rows ?? [])];
  const rows = unresolvedOnly ? all.filter((r) => r.status !== 'resolved') : all;
  // unresolved rows come first: once a resolved one is listed, no unresolved one follows
  const cursor =
    unresolvedOnly && rows.length < all.length ? null : extra ? extra.cursor : (first.data?.next_cursor ?? null);
  rememberOrder(rows.map((r) => r.id));
  const at = Math.min(selected, Math.max(0, rows.length - 1));
  const { next, busy, error, none } = useNext();
  // only unresolved reviews can be claimed or released
  const selection = useSelection(rows.filter((r) => r.status !== 'resolved').map((r) => r.id));
  const loadMore = async () => {
    if (!cursor) return;
    try {
      const page = await reviewsApi.list(apiFilters(filters), cursor);
      setMore({ key, rows: [...(extra?.rows ?? []), ...page.data], cursor: page.next_cursor });
    } catch (err) {
      setMore({ key, rows: extra?.rows ?? [], cursor, error: toProblem(err) });
    }
  };
  const move = (step: number) => {
    const to = Math.max(0, Math.min(rows.length - 1, at + step));
    setSelected(to);
    // the row's link takes the focus: Enter opens it, and a screen reader reads where the selection is
    document.querySelector<HTMLAnchorElement>(`tr[data-review="${rows[to]?.id}"] a`)?.focus();
  };
  const keys: KeyAction[] = [
    { key: 'J', does: 'next in the list', run: () => move(1) },
    { key: 'K', does: 'previous', run: () => move(-1) },
    {
      key: 'Enter',
      does: 'open the selected review',
      run: () => rows[at] && navigate(`/reviews/${encodeURIComponent(rows[at]!.id)}`),
    },
    ...(write ? [{ key: 'N', does: 'claim the next review due and open it', run: next }] : []),
  ];
  useKeys(keys);
  return (
    <section aria-labelledby="h-reviews" class="reviews">
      <div class="title-row">
        <h1 id="h-reviews">Reviews</h1>
        {write && (
          <button class="primary" type="button" disabled={busy} onClick={next} aria-keyshortcuts="n">
            {busy ? 'Claiming…' : 'Next'}
          </button>
        )}
      </div>
      <p class="muted intro">
        Scores whose outcome is <em>review</em> or <em>hold</em>, and the sampled approvals, wait here, due first. A
        verdict labels the decision (source <em>review</em>), so the desk's work is what the next fit learns from.
        {!write &&
          (currentSession()?.kind === 'person'
            ? ' Your role reads the queue; working reviews (claiming, verdicts) is for analysts and above.'
            : ' This client may read the queue (reviews:read) but not claim or resolve (reviews:write).')}
      </p>
      {message && (
        <p class="ok-msg" role="status">
          {message}
        </p>
      )}
      {none && (
        <p class="ok-msg" role="status">
          No open review is left to claim.
        </p>
      )}
      <ErrorBox error={error} what="Could not claim the next review" />
      {stats.data && <Figures s={stats.data} />}
      <AnalystFigures />
      <QueueFilters
        draft={draft}
        setDraft={setDraft}
        apply={(f) => {
          setSelected(0);
          setFilters(f);
        }}
      />
      <KeyLegend actions={keys} />
      {write && (
        <BulkBar
          selection={selection}
          onDone={() => {
            first.reload();
            stats.reload();
          }}
        />
      )}
      <Loader state={first} feature="The review queue">
        {() =>
          rows.length === 0 ? (
            <Empty>
              {key === JSON.stringify(DEFAULT)
                ? 'The queue is empty: no review is waiting. Scores whose outcome is review or hold open one here.'
                : 'No review matches these filters.'}
            </Empty>
          ) : (
            <>
              <div class="table-wrap">
                <table class="stack review-queue">
                  <caption class="sr-only">Reviews, due first; J and K move the selection, Enter opens it</caption>
                  <thead>
                    <tr>
                      {write && (
                        <th scope="col" class="select">
                          <input
                            type="checkbox"
                            aria-label="Select every unresolved review shown"
                            checked={selection.all}
                            onChange={selection.toggleAll}
                          />
                        </th>
                      )}
                      <th scope="col">Due</th>
                      <th scope="col">Review</th>
                      <th scope="col">Outcome</th>
                      <th scope="col" class="num">
                        Score
                      </th>
                      <th scope="col" class="num">
                        Amount
                      </th>
                      <th scope="col">Entity</th>
                      <th scope="col">Rules</th>
                      <th scope="col">Status</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((r, i) => (
                      <tr
                        key={r.id}
                        data-review={r.id}
                        class={
                          [i === at ? 'selected' : '', r.overdue ? 'overdue-row' : ''].join(' ').trim() || undefined
                        }
                        aria-current={i === at ? 'true' : undefined}
                        onClick={() => setSelected(i)}
                      >
                        {write && (
                          <td data-label="Select" class="select">
                            {r.status !== 'resolved' && (
                              <input
                                type="checkbox"
                                aria-label={`Select ${r.id}`}
                                checked={selection.has(r.id)}
                                onClick={(e) => e.stopPropagation()}
                                onChange={(e) => selection.toggle(r.id, e.currentTarget.checked)}
                              />
                            )}
                          </td>
                        )}
                        <td data-label="Due">
                          <Due r={r} />
                        </td>
                        <td data-label="Review">
                          <Link to={`/reviews/${encodeURIComponent(r.id)}`} class="mono">
                            {r.id}
                          </Link>
                          <div class="muted small">opened {fmtDate(r.opened_at)}</div>
                        </td>
                        <td data-label="Outcome">
                          <OutcomeBadge outcome={r.outcome} />
                          {r.reason === 'sample' && <small class="muted"> sampled</small>}
                        </td>
                        <td data-label="Score" class="num">
                          {fmtNumber(r.score)} <LevelBadge level={r.risk_level ?? undefined} />
                        </td>
                        <td data-label="Amount" class="num nowrap">
                          {fmtMoney(r.amount, r.currency ?? undefined)}
                        </td>
                        <td data-label="Entity" class="mono trunc" title={r.entity_id}>
                          {r.entity_id}
                        </td>
                        <td data-label="Rules">
                          {ruleNames(r).length ? (
                            ruleNames(r).map((n) => (
                              <span key={n} class="mono rule-chip">
                                <Breakable name={n} />
                              </span>
                            ))
                          ) : (
                            <span class="muted">policy</span>
                          )}
                        </td>
                        <td data-label="Status">
                          <ReviewStatus r={r} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <ErrorBox error={extra?.error} what="Could not load more" />
              {cursor && (
                <button type="button" onClick={() => void loadMore()}>
                  Load more
                </button>
              )}
            </>
          )
        }
      </Loader>
    </section>
  );
}
