// One dispute analysis: its recommendation, flags, parties and missing evidence; whether it was
// resolved; and recording the resolution as a dispute.resolved event naming both parties.
import { useState } from 'preact/hooks';
import { api, hasScope, query } from '../api.ts';
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
  fmtPercent,
  toProblem,
  useAction,
  useLoad,
} from '../ui.tsx';
import {
  SEVERITIES,
  type Decision,
  type DisputeResult,
  type Entity,
  type EntityEventList,
  type EventsSent,
  type Party,
} from '../types.ts';
import { SafeAmount, type DisputeRequest } from './decision-facts.tsx';

type Side = 'buyer' | 'seller';
interface Resolution {
  winner: Side;
  at: string;
}

export const Recommendation = ({ r }: { r: DisputeResult }) => (
  <span class={`badge rec-${r.recommendation}`}>{r.recommendation.replace(/_/g, ' ')}</span>
);

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
async function findResolution(r: DisputeResult): Promise<Resolution | null> {
  const eventId = resolutionEventId(r.dispute_id);
  const isNew = (side: Side) => r.risk_flags.some((f) => f.code === 'new_account' && f.party === side);
  for (const [loser, winner] of [
    ['seller', 'buyer'],
    ['buyer', 'seller'],
  ] as const) {
    if (isNew(loser) && !isNew(winner)) {
      const other = await api<Entity>(
        'GET',
        `/api/v1/trust/entities/${encodeURIComponent(r.parties[winner].entity_id)}`,
      ).catch((err: unknown) => {
        if (toProblem(err).status === 404) return null;
        throw err;
      });
      if (!other || other.disputes_won === 0) continue;
    }
    try {
      const page = await api<EntityEventList>(
        'GET',
        `/api/v1/trust/entities/${encodeURIComponent(r.parties[loser].entity_id)}/events${query({ limit: 100 })}`,
      );
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

export function DisputePage({ id }: { id: string }) {
  const state = useLoad(() => api<Decision>('GET', `/api/v1/decisions/${encodeURIComponent(id)}`), [id]);
  return (
    <section aria-labelledby="h-dispute">
      <p>
        <Link to="/disputes">← All disputes</Link>
      </p>
      <h1 id="h-dispute">Dispute analysis</h1>
      {state.error?.status === 404 ? (
        <Empty>
          No analysis with this id is visible to this client. Check the id (an analysis_id), or sign in as the client
          that made it.
        </Empty>
      ) : (
        <Loader state={state} feature="This analysis">
          {(d) =>
            d.kind === 'dispute_analysis' ? (
              <DisputeView key={d.id} d={d} />
            ) : (
              <p>
                This is a score:{' '}
                <Link to={`/decisions/${encodeURIComponent(d.id)}`}>open it on the Decisions page</Link>.
              </p>
            )
          }
        </Loader>
      )}
    </section>
  );
}

function DisputeView({ d }: { d: Decision }) {
  const r = d.result as DisputeResult;
  const asked = (d.request ?? null) as DisputeRequest | null;
  const currency = asked?.trade?.currency;
  const canSee = hasScope('trust:read');
  const recorded = useLoad(() => (canSee ? findResolution(r) : Promise.resolve(null)), [d.id]);
  const [resolved, setResolved] = useState<Resolution | null>(null);
  const resolution = resolved ?? recorded.data ?? null;
  return (
    <>
      <dl class="facts">
        <div>
          <dt>Dispute</dt>
          <dd class="mono">{r.dispute_id}</dd>
        </div>
        {asked?.trade && (
          <div>
            <dt>Trade</dt>
            <dd>
              <span class="mono">{asked.trade.trade_id}</span> · {fmtMoney(asked.trade.amount, currency)}
              {asked.trade.payment_method ? ` · ${asked.trade.payment_method.replace(/_/g, ' ')}` : ''}
            </dd>
          </div>
        )}
        {asked?.reason && (
          <div>
            <dt>Reason</dt>
            <dd>{asked.reason.replace(/_/g, ' ')}</dd>
          </div>
        )}
        {asked?.opened_by && (
          <div>
            <dt>Opened by</dt>
            <dd>
              the {asked.opened_by}
              {asked.opened_at ? ` (${fmtDate(asked.opened_at)})` : ''}
            </dd>
          </div>
        )}
        <div>
          <dt>Status</dt>
          <dd>
            <Status resolution={resolution} known={canSee && !recorded.loading} />
          </dd>
        </div>
        <div>
          <dt>Recommendation</dt>
          <dd>
            <Recommendation r={r} />
          </dd>
        </div>
        <div>
          <dt>Confidence</dt>
          <dd>{fmtPercent(r.confidence)}</dd>
        </div>
        <div>
          <dt>Analysed</dt>
          <dd>{fmtDate(d.created_at)}</dd>
        </div>
        <div>
          <dt>Policy</dt>
          <dd class="mono">{r.policy_version}</dd>
        </div>
      </dl>
      {asked && <Evidence evidence={asked.evidence ?? {}} />}
      <ErrorBox error={recorded.error} what="Could not check whether it was resolved" />
      {resolved && (
        <p class="ok-msg" role="status">
          Resolution recorded.
        </p>
      )}
      <h2>Parties</h2>
      <div class="cards">
        <PartyCard
          role="Buyer"
          currency={currency}
          p={r.parties.buyer}
          won={resolution ? resolution.winner === 'buyer' : undefined}
        />
        <PartyCard
          role="Seller"
          currency={currency}
          p={r.parties.seller}
          won={resolution ? resolution.winner === 'seller' : undefined}
        />
      </div>
      <h2>Risk flags</h2>
      {r.risk_flags.length === 0 ? (
        <Empty>No risk flag was raised.</Empty>
      ) : (
        SEVERITIES.filter((s) => r.risk_flags.some((f) => f.severity === s)).map((s) => (
          <div key={s} class="flag-group">
            <h3>
              <span class={`badge level-${s}`}>{s}</span>
            </h3>
            <ul class="flags">
              {r.risk_flags
                .filter((f) => f.severity === s)
                .map((f) => (
                  <li key={f.code + f.party}>
                    <span class="mono">{f.code}</span> <span class="muted">({f.party})</span>: {f.message}
                  </li>
                ))}
            </ul>
          </div>
        ))
      )}
      <h2>Missing evidence</h2>
      {r.missing_evidence.length === 0 ? (
        <Empty>Nothing more to ask for: no further evidence would change the recommendation.</Empty>
      ) : (
        <ul class="flags">
          {r.missing_evidence.map((m) => (
            <li key={m.code + m.party}>
              <span class="mono">{m.code}</span> <span class="muted">({m.party})</span>: {m.message}
            </li>
          ))}
        </ul>
      )}
      {hasScope('trust:write') && !resolution && (
        <Resolve r={r} tradeId={asked?.trade?.trade_id} onResolved={setResolved} />
      )}
    </>
  );
}

function Status({ resolution, known }: { resolution: Resolution | null; known: boolean }) {
  if (resolution)
    return (
      <>
        <span class="badge status-resolved">resolved</span> in favour of the {resolution.winner}{' '}
        <small class="muted">({fmtDate(resolution.at)})</small>
      </>
    );
  return known ? <span class="badge status-open">open</span> : <span class="muted">—</span>;
}

/** The evidence submitted with the dispute, in words; a missing field means "not provided". */
function Evidence({ evidence }: { evidence: Record<string, boolean | number> }) {
  const entries = Object.entries(evidence);
  return (
    <>
      <h2>Evidence submitted</h2>
      {entries.length === 0 ? (
        <Empty>No evidence was submitted with the dispute.</Empty>
      ) : (
        <ul class="evidence">
          {entries.map(([name, value]) => (
            <li key={name}>
              {name.replace(/_/g, ' ')}:{' '}
              <strong>{typeof value === 'boolean' ? (value ? 'yes' : 'no') : fmtNumber(value)}</strong>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function PartyCard({
  role,
  p,
  won,
  currency,
}: {
  role: string;
  p: Party;
  won: boolean | undefined;
  currency: string | undefined;
}) {
  return (
    <div class="card">
      <h3>
        {role}{' '}
        {won !== undefined && (
          <span class={`badge ${won ? 'label-legit' : 'label-fraud'}`}>{won ? 'won' : 'lost'}</span>
        )}
      </h3>
      <p class="mono trunc">
        <Link to={`/entities/${encodeURIComponent(p.entity_id)}`}>{p.entity_id}</Link>
      </p>
      <p>
        Score <strong class="big">{fmtNumber(p.score)}</strong> <LevelBadge level={p.risk_level} />
      </p>
      <p class="muted">
        Safe amount: <SafeAmount amount={p.safe_amount} currency={currency} of="trade's" />
      </p>
    </div>
  );
}

/** Records who the dispute was resolved for: one dispute.resolved event per party, each naming the other. */
function Resolve({
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
      type: 'dispute.resolved',
      entity_id: loser.entity_id,
      counterparty_id: other.entity_id,
      occurred_at: at,
      resolution: 'against',
      ...(tradeId.trim() ? { trade_id: tradeId.trim() } : {}),
    };
    void run(async () => {
      await api<EventsSent>('POST', '/api/v1/trust/events', { events: [event] });
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
