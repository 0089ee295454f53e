// What a reviewer reads beside the decision: its labels, the network peers behind its flags, and the
// entity's other reviews.
import { hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import { Empty, ErrorBox, Link, fmtDate, fmtMoney, fmtNumber, useLoad } from '../ui.tsx';
import type { ScoreResult } from '../types.ts';
import { NetworkPeers } from './decision-facts.tsx';
import { OutcomeBadge } from './decision-rules.tsx';
import { reviewsApi, type ReviewDetail } from './reviews-api.ts';
import { Due, ReviewStatus } from './reviews-parts.tsx';

/** The decision's label and the entity's labels elsewhere: what the next fit will learn from. */
export function Labels({ r }: { r: ReviewDetail }) {
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
export function Network({ decisionId, signals }: { decisionId: string; signals: ScoreResult['signals'] }) {
  const state = useLoad(
    async () =>
      hasScope('audit:read')
        ? vouch.GET('/api/v1/decisions/{id}', { params: { path: { id: decisionId } } })
        : undefined,
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
export function EntityReviews({ r }: { r: ReviewDetail }) {
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
