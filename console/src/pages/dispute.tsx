// One dispute analysis: its recommendation, flags, parties and missing evidence; whether it was
// resolved (dispute-resolution.tsx) and recording the resolution.
import { useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import {
  Empty,
  ErrorBox,
  LevelBadge,
  Link,
  Loader,
  fmtDate,
  fmtMoney,
  fmtNumber,
  fmtPercent,
  useLoad,
} from '../ui.tsx';
import { SEVERITIES, type Decision, type DisputeResult, type Party } from '../types.ts';
import { SafeAmount, type DisputeRequest } from './decision-facts.tsx';
import { Resolve, Status, findResolution, type Resolution } from './dispute-resolution.tsx';

export const Recommendation = ({ r }: { r: DisputeResult }) => (
  <span class={`badge rec-${r.recommendation}`}>{r.recommendation.replace(/_/g, ' ')}</span>
);
export function DisputePage({ id }: { id: string }) {
  const state = useLoad(() => vouch.GET('/api/v1/decisions/{id}', { params: { path: { id } } }), [id]);
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
