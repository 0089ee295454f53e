// One review (GET /api/v1/reviews/{id}): what is due and who holds it, the trade's amount and
// context (reviews-context.tsx), the decision's matched rules with the values they read, its
// waterfall and signals, the peers whose flags it carried, the entity's ring, its other reviews and
// labels, and beside them the verdict (reviews-resolve.tsx). The labels, peers and other reviews it
// shows beside the decision are in reviews-evidence.tsx. Keys: J/K the next/previous review of the
// queue, A approve and D decline (each asking first), L the list, N claim next. After a verdict the
// next review due is claimed and opened, unless its setting is off (desk-advance.tsx).
import { useRef, useState } from 'preact/hooks';
import { currentSession, hasScope, type ApiProblem } from '../api.ts';
import { may } from '../permissions.ts';
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
import { SafeAmount } from './decision-facts.tsx';
import { DecisionRules, OutcomeBadge, outcomeOf } from './decision-rules.tsx';
import { MoneyWhy } from './decision-money.tsx';
import { EntityRing } from './entity-ring.tsx';
import { neighbour, reviewsApi, reviewsChanged, type ReviewDetail } from './reviews-api.ts';
import { EntityReviews, Labels, Network } from './reviews-evidence.tsx';
import { KeyLegend, useKeys, type KeyAction } from './reviews-keys.tsx';
import { NO_VERDICT, ResolveConfirm, ResolveForm, Resolved, type Verdict } from './reviews-resolve.tsx';
import { TradeContext } from './reviews-context.tsx';
import { Due, ReviewStatus, claimant, span, takeFlash, useNext } from './reviews-parts.tsx';
import { AutoAdvanceToggle, afterVerdict } from './desk-advance.tsx';

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
  const me = currentSession()?.actorId;
  const [verdict, setVerdict] = useState<Verdict>(NO_VERDICT);
  // the verdict asked for, awaiting its confirmation
  const [asking, setAsking] = useState<'approve' | 'decline'>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  const listRef = useRef<HTMLSelectElement>(null);
  // what the previous review's verdict did, when the desk moved on to this one
  const [message] = useState(takeFlash);
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
  const mayResolve = write && unresolved && !heldByOther;
  const ask = (resolution: 'approve' | 'decline') => {
    if (!mayResolve || busy) return;
    setError(undefined);
    setAsking(resolution);
  };
  const resolve = (resolution: 'approve' | 'decline') => {
    if (!mayResolve || busy) return;
    void act(async () => {
      const done = await reviewsApi.resolve(r.id, {
        resolution,
        ...(verdict.label ? { label: verdict.label } : {}),
        ...(verdict.note.trim() ? { note: verdict.note.trim() } : {}),
        ...(verdict.list ? { add_to_list: verdict.list } : {}),
      });
      reviewsChanged();
      await afterVerdict(
        `Review ${done.id} ${resolution === 'decline' ? 'declined' : 'approved'}` +
          (done.label ? `: the decision is labelled ${done.label}` : '') +
          (done.added_to_list ? `, the entity added to ${done.added_to_list}` : '') +
          '.',
      );
    });
  };
  const go = (step: 1 | -1) => {
    const to = neighbour(r.id, step);
    if (to) navigate(`/reviews/${encodeURIComponent(to)}`);
  };
  const keys: KeyAction[] = [
    { key: 'J', does: 'next review in the queue', run: () => go(1) },
    { key: 'K', does: 'previous', run: () => go(-1) },
    ...(mayResolve
      ? [
          { key: 'A', does: 'approve…', run: () => ask('approve') },
          { key: 'D', does: 'decline…', run: () => ask('decline') },
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
      {message && (
        <p class="ok-msg" role="status">
          {message}
        </p>
      )}
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
            <dd class="mono trunc" title={r.decision.trade_id}>
              {r.decision.trade_id}
            </dd>
          </div>
        )}
        <TradeContext request={r.decision.request} shownTradeId={r.decision.trade_id} />
      </dl>
      {!asking && <ErrorBox error={error} what="The review action failed" />}
      <ErrorBox error={nextReview.error} what="Could not claim the next review" />
      {nextReview.none && (
        <p class="ok-msg" role="status">
          No open review is left to claim.
        </p>
      )}
      <div class="review-grid">
        <div class="review-main">
          <MoneyWhy result={result} rules={outcomeOf(r.decision as unknown as Decision).rules} />
          <DecisionRules d={r.decision as unknown as Decision} />
          <h2>Why this score</h2>
          {signals.length === 0 ? (
            <Empty>No signal moved this score: it is the policy's baseline for an entity with no history.</Empty>
          ) : (
            <Waterfall score={result.score} signals={signals} policyVersion={r.decision.policy_version} />
          )}
          <SignalTable r={{ ...result, signals }} />
          <Network decisionId={r.decision_id} signals={signals} />
          {may('trust:read', 'operator') && (
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
                onResolve={ask}
                busy={busy}
                listRef={listRef}
                disabled={
                  heldByOther
                    ? `Claimed by ${claimant(r)} until ${fmtDate(r.claim_expires_at)}: ` +
                      'it can be resolved once the claim lapses.'
                    : undefined
                }
              />
              <AutoAdvanceToggle />
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
      {asking && (
        <ResolveConfirm
          resolution={asking}
          verdict={verdict}
          busy={busy}
          error={error}
          onConfirm={() => resolve(asking)}
          onCancel={() => {
            setAsking(undefined);
            setError(undefined);
          }}
        />
      )}
    </>
  );
}
