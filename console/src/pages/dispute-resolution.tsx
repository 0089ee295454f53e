// Whether a dispute was resolved, and recording the resolution as a dispute.resolved event naming both parties.
import { useState } from 'preact/hooks';
import { vouch } from '../api-client.ts';
import { ErrorBox, Field, fmtDate, toProblem, useAction } from '../ui.tsx';
import type { DisputeResult } from '../types.ts';

type Side = 'buyer' | 'seller';
export interface Resolution {
  winner: Side;
  at: string;
}
/** One event id per dispute: recording the resolution again is a duplicate, not a second outcome. */
const resolutionEventId = (disputeId: string) => `console:${disputeId}:resolved`;

/**
 * The resolution recorded from this console, if any. Its dispute.resolved event is stored on the
 * losing party's timeline, and recording it gives both parties a history (the winner's is
 * mirrored). The timeline of an entity without history answers 404, which the browser logs as a
 * failed request; a party the analysis found new (a `new_account` flag) may have none, so its
 * timeline is read only when the event could be there: when the other party's aggregates show a
 * dispute won, or when both are new (then one 404 answers for both: without a resolution neither
 * has a history, with one both have).
 */
export async function findResolution(r: DisputeResult): Promise<Resolution | null> {
  const eventId = resolutionEventId(r.dispute_id);
  const isNew = (side: Side) => r.risk_flags.some((f) => f.code === 'new_account' && f.party === side);
  for (const [loser, winner] of [
    ['seller', 'buyer'],
    ['buyer', 'seller'],
  ] as const) {
    if (isNew(loser) && !isNew(winner)) {
      const other = await vouch
        .GET('/api/v1/trust/entities/{entity_id}', { params: { path: { entity_id: r.parties[winner].entity_id } } })
        .catch((err: unknown) => {
          if (toProblem(err).status === 404) return null;
          throw err;
        });
      if (!other || other.disputes_won === 0) continue;
    }
    try {
      const page = await vouch.GET('/api/v1/trust/entities/{entity_id}/events', {
        params: { path: { entity_id: r.parties[loser].entity_id }, query: { limit: 100 } },
      });
      const found = page.data.find((e) => e.event_id === eventId);
      if (found) return { winner, at: found.occurred_at };
    } catch (err) {
      // 404: no history at all for this party, so nothing was recorded against it
      if (toProblem(err).status !== 404) throw err;
      if (isNew(loser) && isNew(winner)) return null;
    }
  }
  return null;
}
export function Status({ resolution, known }: { resolution: Resolution | null; known: boolean }) {
  if (resolution)
    return (
      <>
        <span class="badge status-resolved">resolved</span> in favour of the {resolution.winner}{' '}
        <small class="muted">({fmtDate(resolution.at)})</small>
      </>
    );
  return known ? <span class="badge status-open">open</span> : <span class="muted">—</span>;
}
/** Records who the dispute was resolved for: one dispute.resolved event per party, each naming the other. */
export function Resolve({
  r,
  tradeId: disputed,
  onResolved,
}: {
  r: DisputeResult;
  tradeId: string | undefined;
  onResolved: (resolution: Resolution) => void;
}) {
  const [winner, setWinner] = useState<Side | ''>('');
  // the disputed trade, as the analysis was asked: its id labels the loser's scores of that trade
  const [tradeId, setTradeId] = useState(disputed ?? '');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (!winner) return;
    // One event covers both parties: the service mirrors a dispute.resolved event onto its
    // counterparty_id. It is written for the losing party, so that a trade_id also labels the
    // loser's scores of that trade as fraud (docs/api.md, outcomes and labels).
    const loser = winner === 'buyer' ? r.parties.seller : r.parties.buyer;
    const other = winner === 'buyer' ? r.parties.buyer : r.parties.seller;
    const at = new Date().toISOString();
    const event = {
      event_id: resolutionEventId(r.dispute_id),
      type: 'dispute.resolved' as const,
      entity_id: loser.entity_id,
      counterparty_id: other.entity_id,
      occurred_at: at,
      resolution: 'against' as const,
      ...(tradeId.trim() ? { trade_id: tradeId.trim() } : {}),
    };
    void run(async () => {
      await vouch.POST('/api/v1/trust/events', { body: { events: [event] } });
      onResolved({ winner, at });
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-resolve">
      <h2 id="h-resolve">Record the resolution</h2>
      <p class="muted">
        Sends a <code>dispute.resolved</code> event naming both parties, so the outcome feeds both histories.
      </p>
      <fieldset>
        <legend>Resolved in favour of</legend>
        <label class="inline">
          <input
            type="radio"
            name="winner"
            value="buyer"
            checked={winner === 'buyer'}
            onChange={() => setWinner('buyer')}
          />{' '}
          Buyer
        </label>
        <label class="inline">
          <input
            type="radio"
            name="winner"
            value="seller"
            checked={winner === 'seller'}
            onChange={() => setWinner('seller')}
          />{' '}
          Seller
        </label>
      </fieldset>
      <Field
        label="Trade ID (optional)"
        hint="The disputed trade. When given, the losing party's scores for this trade are labelled fraud."
      >
        <input name="trade_id" value={tradeId} onInput={(e) => setTradeId(e.currentTarget.value)} />
      </Field>
      <ErrorBox error={error} what="Could not record the resolution" />
      <button class="primary" type="submit" disabled={busy || !winner}>
        Record resolution
      </button>
    </form>
  );
}
