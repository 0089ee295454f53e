// One review (GET /api/v1/reviews/{id}): what is due and who holds it, the decision's matched rules
// with the values they read, its waterfall and signals, the peers whose flags it carried, the
// entity's ring, its other reviews and labels, and beside them the verdict (reviews-resolve.tsx).
// Keys: J/K the next/previous review of the queue, A approve, D decline, L the list, N claim next.
import { useRef, useState } from 'preact/hooks';
import { api, currentSession, hasScope, type ApiProblem } from '../api.ts';
import {
  Empty,
  ErrorBox,
  Link,
  Loader,
  LevelBadge,
  fmtDate,
  fmtMoney,
  fmtNumber,
  navigate,
  toProblem,
  useLoad,
} from '../ui.tsx';
import type { Decision, ScoreResult } from '../types.ts';
import { SignalTable, Waterfall } from '../waterfall.tsx';
import { NetworkPeers, SafeAmount } from './decision-facts.tsx';
import { DecisionRules, OutcomeBadge } from './decision-rules.tsx';
import { EntityRing } from './entity-ring.tsx';
import { neighbour, reviewsApi, reviewsChanged, type Review, type ReviewDetail } from './reviews-api.ts';
import { KeyLegend, useKeys, type KeyAction } from './reviews-keys.tsx';
import { NO_VERDICT, ResolveForm, type Verdict } from './reviews-resolve.tsx';
import { Due, ReviewStatus, flashOnQueue, span, useNext } from './reviews-parts.tsx';

export function ReviewPage({ id }: { id: string }) {
  const state = useLoad(() => reviewsApi.get(id), [id]);
  return (
    <section aria-labelledby="h-review" class="reviews">
      <p>
        <Link to="/reviews">← Queue</Link>
      </p>
      <h1 id="h-review">
        Review <span class="mono">{id}</span>
      </h1>
      {state.error?.status === 404 ? (
        <Empty>No review with this id is visible to this client.</Empty>
      ) : (
        <Loader state={state} feature="This review">
          {(r) => <ReviewView key={`${r.id}-${r.status}`} r={r} reload={state.reload} />}
        </Loader>
      )}
    </section>
  );
}

function ReviewView({ r, reload }: { r: ReviewDetail; reload: () => void }) {
  const write = hasScope('reviews:write');
  const me = currentSession()?.clientId;
  const [verdict, setVerdict] = useState<Verdict>(NO_VERDICT);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  const listRef = useRef<HTMLSelectElement>(null);
  const nextReview = useNext();
  const unresolved = r.status !== 'resolved';
  const heldByOther = r.status === 'claimed' && r.assignee !== me;
  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await what();
    } catch (err) {
      setError(toProblem(err));
    } finally {
      setBusy(false);
    }
  };
  const claim = () =>
    act(async () => {
      await reviewsApi.claim(r.id);
      reviewsChanged();
      reload();
    });
  const resolve = (resolution: 'approve' | 'decline') => {
    if (!write || !unresolved || heldByOther || busy) return;
    void act(async () => {
      const done = await reviewsApi.resolve(r.id, {
        resolution,
        ...(verdict.label ? { label: verdict.label } : {}),
        ...(verdict.note.trim() ? { note: verdict.note.trim() } : {}),
        ...(verdict.list ? { add_to_list: verdict.list } : {}),
      });
      reviewsChanged();
      flashOnQueue(
        `Review ${done.id} ${resolution === 'decline' ? 'declined' : 'approved'}${done.label ? `: the decision is labelled ${done.label}` : ''}${done.added_to_list ? `, the entity added to ${done.added_to_list}` : ''}.`,
      );
      navigate('/reviews');
    });
  };
  const go = (step: 1 | -1) => {
    const to = neighbour(r.id, step);
    if (to) navigate(`/reviews/${encodeURIComponent(to)}`);
  };
  const keys: KeyAction[] = [
    { key: 'J', does: 'next review in the queue', run: () => go(1) },
    { key: 'K', does: 'previous', run: () => go(-1) },
    ...(write && unresolved && !heldByOther
      ? [
          { key: 'A', does: 'approve', run: () => resolve('approve') },
          { key: 'D', does: 'decline', run: () => resolve('decline') },
          { key: 'L', does: 'choose a list to add the entity to', run: () => listRef.current?.focus() },
        ]
      : []),
    ...(write ? [{ key: 'N', does: 'claim the next review due', run: nextReview.next }] : []),
  ];
  useKeys(keys);
  const result = (r.decision.result ?? {}) as ScoreResult;
  const signals = result.signals ?? [];
  return (
    <>
      <dl class="facts review-facts">
        <div class={r.overdue ? 'overdue-box' : undefined}>
          <dt>Due</dt>
          <dd>
            <Due r={r} />
          </dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <ReviewStatus r={r} />
            {r.status === 'claimed' && r.claim_expires_at && (
              <div class="muted small">lapses in {span(r.claim_expires_at)}</div>
            )}
          </dd>
        </div>
        <div>
          <dt>Outcome</dt>
          <dd>
            <OutcomeBadge outcome={r.outcome} />{' '}
            {r.reason === 'sample' ? (
              <small class="muted">sampled at {fmtNumber((r.sample_rate ?? 0) * 100)} %</small>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Score</dt>
          <dd>
            <span class="big">{fmtNumber(r.score)}</span> <LevelBadge level={r.risk_level ?? undefined} />
          </dd>
        </div>
        <div>
          <dt>Amount</dt>
          <dd>{fmtMoney(r.amount, r.currency ?? undefined)}</dd>
        </div>
        <div>
          <dt>Safe amount</dt>
          <dd>
            {typeof result.safe_amount === 'number' || result.safe_amount === null ? (
              <SafeAmount amount={result.safe_amount} currency={r.currency ?? undefined} />
            ) : (
              '—'
            )}
          </dd>
        </div>
        <div class="wide">
          <dt>Entity</dt>
          <dd class="mono trunc" title={r.entity_id}>
            {hasScope('trust:read') ? (
              <Link to={`/entities/${encodeURIComponent(r.entity_id)}`}>{r.entity_id}</Link>
            ) : (
              r.entity_id
            )}
          </dd>
        </div>
        <div>
          <dt>Decision</dt>
          <dd class="mono trunc">
            {hasScope('audit:read') ? (
              <Link to={`/decisions/${encodeURIComponent(r.decision_id)}`}>{r.decision_id}</Link>
            ) : (
              r.decision_id
            )}
          </dd>
        </div>
        <div>
          <dt>Opened</dt>
          <dd>{fmtDate(r.opened_at)}</dd>
        </div>
        {r.decision.trade_id && (
          <div>
            <dt>Trade</dt>
            <dd class="mono trunc">{r.decision.trade_id}</dd>
          </div>
        )}
      </dl>
      <ErrorBox error={error} what="The review action failed" />
      <ErrorBox error={nextReview.error} what="Could not claim the next review" />
      {nextReview.none && (
        <p class="ok-msg" role="status">
          No open review is left to claim.
        </p>
      )}
      <div class="review-grid">
        <div class="review-main">
          <DecisionRules d={r.decision as unknown as Decision} />
          <h2>Why this score</h2>
          {signals.length === 0 ? (
            <Empty>No signal moved this score: it is the policy's baseline for an entity with no history.</Empty>
          ) : (
            <Waterfall score={result.score} signals={signals} policyVersion={r.decision.policy_version} />
          )}
          <SignalTable r={{ ...result, signals }} />
          <Network decisionId={r.decision_id} signals={signals} />
          {hasScope('trust:read') && currentSession()?.role !== 'service' && (
            <>
              <h2>The entity's ring</h2>
              <EntityRing id={r.entity_id} />
            </>
          )}
          <EntityReviews r={r} />
        </div>
        <aside class="review-side" aria-label="Verdict">
          {!unresolved ? (
            <Resolved r={r} />
          ) : write ? (
            <>
              {r.status === 'open' && (
                <button type="button" class="claim" disabled={busy} onClick={() => void claim()}>
                  Claim for 15 minutes
                </button>
              )}
              <ResolveForm
                verdict={verdict}
                onChange={setVerdict}
                onResolve={resolve}
                busy={busy}
                listRef={listRef}
                disabled={
                  heldByOther
                    ? `Claimed by ${r.assignee} until ${fmtDate(r.claim_expires_at)}: it can be resolved once the claim lapses.`
                    : undefined
                }
              />
            </>
          ) : (
            <p class="note" role="note">
              This client may read reviews but not resolve them (reviews:write).
            </p>
          )}
          <KeyLegend actions={keys} />
          <Labels r={r} />
        </aside>
      </div>
    </>
  );
}

function Resolved({ r }: { r: Review }) {
  return (
    <div class="panel resolved" role="status">
      <h2>Resolved</h2>
      <p>
        <ReviewStatus r={r} /> by <span class="mono">{r.resolved_by}</span>, {fmtDate(r.resolved_at)}
      </p>
      {r.note && <p class="label-note">“{r.note}”</p>}
      {r.added_to_list && (
        <p>
          The entity was added to the list <span class="mono">{r.added_to_list}</span>.
        </p>
      )}
    </div>
  );
}

/** The decision's label and the entity's labels elsewhere: what the next fit will learn from. */
function Labels({ r }: { r: ReviewDetail }) {
  const l = r.decision.label;
  return (
    <section class="panel" aria-labelledby="h-labels">
      <h2 id="h-labels">Labels</h2>
      <p>
        This decision:{' '}
        {l ? (
          <>
            <span class={`badge label-${l.label}`}>{l.label}</span>{' '}
            <small class="muted">
              ({l.source}, {fmtDate(l.labelled_at)})
            </small>
          </>
        ) : (
          <span class="muted">none yet</span>
        )}
      </p>
      <p data-figure="entity-labels">
        The entity's other decisions:{' '}
        <span class={r.entity_labels.fraud > 0 ? 'badge label-fraud' : 'badge'}>
          {fmtNumber(r.entity_labels.fraud)} fraud
        </span>{' '}
        <span class={r.entity_labels.legit > 0 ? 'badge label-legit' : 'badge'}>
          {fmtNumber(r.entity_labels.legit)} legit
        </span>
      </p>
    </section>
  );
}

/** The peers whose flags made up network_flags, from the decision as the audit trail stores it. */
function Network({ decisionId, signals }: { decisionId: string; signals: ScoreResult['signals'] }) {
  const state = useLoad(
    async () =>
      hasScope('audit:read') ? api<Decision>('GET', `/api/v1/decisions/${encodeURIComponent(decisionId)}`) : undefined,
    [decisionId],
  );
  const peers = state.data?.network_peers ?? [];
  const signal = signals.find((s) => s.name === 'network_flags');
  if (peers.length > 0) return <NetworkPeers peers={peers} signal={signal} />;
  return (
    <section aria-labelledby="h-decision-network">
      <h2 id="h-decision-network">Flagged by other marketplaces</h2>
      <p class="muted">
        {state.loading && hasScope('audit:read')
          ? 'Loading…'
          : signal && signal.value > 0
            ? `network_flags = ${fmtNumber(signal.value)}; the peers behind it are shown to clients with audit:read.`
            : 'No peer of the Vouch Network had flagged this entity when it was scored.'}
      </p>
    </section>
  );
}

/** The entity's other unresolved reviews, and its reviews already resolved. */
function EntityReviews({ r }: { r: ReviewDetail }) {
  const resolved = useLoad(
    () => reviewsApi.list({ entity_id: r.entity_id, status: 'resolved' }, undefined, 10),
    [r.entity_id],
  );
  const past = (resolved.data?.data ?? []).filter((x) => x.id !== r.id);
  return (
    <section aria-labelledby="h-entity-reviews">
      <h2 id="h-entity-reviews">The entity's other reviews</h2>
      {r.other_open_reviews.length === 0 && past.length === 0 ? (
        <Empty>No other review of this entity{resolved.loading ? ' (still reading the resolved ones)' : ''}.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr-only">
              The entity's other reviews: unresolved ones due first, then the last resolved
            </caption>
            <thead>
              <tr>
                <th scope="col">Review</th>
                <th scope="col">Due</th>
                <th scope="col">Outcome</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {[...r.other_open_reviews, ...past].map((o) => (
                <tr key={o.id} data-other-review={o.id}>
                  <td data-label="Review">
                    <Link to={`/reviews/${encodeURIComponent(o.id)}`} class="mono">
                      {o.id}
                    </Link>
                  </td>
                  <td data-label="Due">
                    <Due r={o} />
                  </td>
                  <td data-label="Outcome">
                    <OutcomeBadge outcome={o.outcome} />
                  </td>
                  <td data-label="Amount" class="num nowrap">
                    {fmtMoney(o.amount, o.currency ?? undefined)}
                  </td>
                  <td data-label="Status">
                    <ReviewStatus r={o} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorBox error={resolved.error} what="Could not load the entity's resolved reviews" />
    </section>
  );
}
