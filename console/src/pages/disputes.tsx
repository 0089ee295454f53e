// Disputes: analyses waiting for a human first; one analysis's flags, parties and missing
// evidence; and the resolution, recorded as dispute.resolved events for both parties.
import { useState } from 'preact/hooks';
import { api, hasScope, query, type ApiProblem, type Page } from '../api.ts';
import { Empty, ErrorBox, Field, LevelBadge, Link, Loader, fmtDate, fmtMoney, fmtNumber, fmtPercent, navigate, toProblem, useLoad } from '../ui.tsx';
import { SEVERITIES, type Decision, type DisputeResult, type Party } from '../types.ts';

const rank = (d: Decision) => ((d.result as DisputeResult).recommendation === 'manual_review' ? 0 : 1);

export function DisputesPage() {
  const [openId, setOpenId] = useState('');
  const list = useLoad(() => api<Page<Decision>>('GET', `/api/v1/decisions${query({ kind: 'dispute', limit: 100 })}`), []);
  return (
    <section aria-labelledby="h-disputes">
      <h1 id="h-disputes">Disputes</h1>
      <form class="row open-by-id" onSubmit={(e) => { e.preventDefault(); if (openId.trim()) navigate(`/disputes/${encodeURIComponent(openId.trim())}`); }}>
        <Field label="Analysis ID">
          <input value={openId} placeholder="the analysis_id of an analysis" onInput={(e) => setOpenId(e.currentTarget.value)} />
        </Field>
        <button type="submit">Open analysis</button>
      </form>
      <Loader state={list} feature="The list of dispute analyses">
        {(page) => {
          // Stable sort: manual reviews first, each group newest first as the API returned it.
          const rows = page.data.map((d, i) => ({ d, i })).sort((a, b) => rank(a.d) - rank(b.d) || a.i - b.i).map((x) => x.d);
          if (rows.length === 0) return <Empty>No dispute analyses yet. They appear here when the marketplace calls POST /api/v1/dispute/analyze.</Empty>;
          return (
            <div class="table-wrap">
              <table>
                <caption>Manual reviews first, then the rest, newest first</caption>
                <thead>
                  <tr><th scope="col">Dispute</th><th scope="col">Recommendation</th><th scope="col" class="num">Confidence</th><th scope="col">Worst flag</th><th scope="col">Buyer / seller score</th><th scope="col">Analysed</th></tr>
                </thead>
                <tbody>
                  {rows.map((d) => {
                    const r = d.result as DisputeResult;
                    const worst = SEVERITIES.find((s) => r.risk_flags?.some((f) => f.severity === s));
                    return (
                      <tr key={d.id} class={r.recommendation === 'manual_review' ? 'attention' : undefined}>
                        <td><Link to={`/disputes/${encodeURIComponent(d.id)}`} class="mono">{r.dispute_id ?? d.subject_id}</Link></td>
                        <td><Recommendation r={r} /></td>
                        <td class="num">{fmtPercent(r.confidence)}</td>
                        <td>{worst ? <span class={`badge level-${worst}`}>{worst}</span> : <span class="muted">none</span>}</td>
                        <td>{r.parties ? <>{fmtNumber(r.parties.buyer.score)} <LevelBadge level={r.parties.buyer.risk_level} /> / {fmtNumber(r.parties.seller.score)} <LevelBadge level={r.parties.seller.risk_level} /></> : '—'}</td>
                        <td>{fmtDate(d.created_at)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          );
        }}
      </Loader>
    </section>
  );
}

const Recommendation = ({ r }: { r: DisputeResult }) => (
  <span class={`badge rec-${r.recommendation}`}>{r.recommendation.replace(/_/g, ' ')}</span>
);

export function DisputePage({ id }: { id: string }) {
  const state = useLoad(() => api<Decision>('GET', `/api/v1/decisions/${encodeURIComponent(id)}`), [id]);
  return (
    <section aria-labelledby="h-dispute">
      <p><Link to="/disputes">← All disputes</Link></p>
      <h1 id="h-dispute">Dispute analysis</h1>
      {state.error?.status === 404 ? (
        <Empty>No analysis with this id is visible to this client. Check the id (an analysis_id), or sign in as the client that made it.</Empty>
      ) : (
        <Loader state={state} feature="This analysis">
          {(d) => (d.kind.startsWith('dispute') ? <DisputeView d={d} /> : <p>This is a score: <Link to={`/decisions/${encodeURIComponent(d.id)}`}>open it on the Decisions page</Link>.</p>)}
        </Loader>
      )}
    </section>
  );
}

function DisputeView({ d }: { d: Decision }) {
  const r = d.result as DisputeResult;
  return (
    <>
      <dl class="facts">
        <div><dt>Dispute</dt><dd class="mono">{r.dispute_id}</dd></div>
        <div><dt>Recommendation</dt><dd><Recommendation r={r} /></dd></div>
        <div><dt>Confidence</dt><dd>{fmtPercent(r.confidence)}</dd></div>
        <div><dt>Analysed</dt><dd>{fmtDate(d.created_at)}</dd></div>
        <div><dt>Policy</dt><dd class="mono">{r.policy_version}</dd></div>
      </dl>
      <h2>Parties</h2>
      <div class="cards">
        <PartyCard role="Buyer" p={r.parties.buyer} />
        <PartyCard role="Seller" p={r.parties.seller} />
      </div>
      <h2>Risk flags</h2>
      {r.risk_flags.length === 0 ? (
        <Empty>No risk flag was raised.</Empty>
      ) : (
        SEVERITIES.filter((s) => r.risk_flags.some((f) => f.severity === s)).map((s) => (
          <div key={s} class="flag-group">
            <h3><span class={`badge level-${s}`}>{s}</span></h3>
            <ul class="flags">
              {r.risk_flags.filter((f) => f.severity === s).map((f) => (
                <li key={f.code + f.party}><span class="mono">{f.code}</span> <span class="muted">({f.party})</span>: {f.message}</li>
              ))}
            </ul>
          </div>
        ))
      )}
      <h2>Missing evidence</h2>
      {!r.missing_evidence ? (
        <Empty>This server does not report missing evidence.</Empty>
      ) : r.missing_evidence.length === 0 ? (
        <Empty>Nothing more to ask for: no further evidence would change the recommendation.</Empty>
      ) : (
        <ul class="flags">
          {r.missing_evidence.map((m) => <li key={m.code + m.party}><span class="mono">{m.code}</span> <span class="muted">({m.party})</span>: {m.message}</li>)}
        </ul>
      )}
      {hasScope('trust:write') && <Resolve r={r} />}
    </>
  );
}

function PartyCard({ role, p }: { role: string; p: Party }) {
  return (
    <div class="card">
      <h3>{role}</h3>
      <p class="mono trunc"><Link to={`/entities/${encodeURIComponent(p.entity_id)}`}>{p.entity_id}</Link></p>
      <p>Score <strong class="big">{fmtNumber(p.score)}</strong> <LevelBadge level={p.risk_level} /></p>
      {p.safe_amount !== undefined && <p class="muted">Safe amount: {p.safe_amount === null ? 'no limit' : fmtMoney(p.safe_amount)}</p>}
    </div>
  );
}

/** Records who the dispute was resolved for: one dispute.resolved event per party, each naming the other. */
function Resolve({ r }: { r: DisputeResult }) {
  const [winner, setWinner] = useState<'buyer' | 'seller' | ''>('');
  const [tradeId, setTradeId] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  const [done, setDone] = useState<{ accepted: number; duplicates: number }>();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!winner) return;
    setBusy(true);
    setError(undefined);
    // One event covers both parties: the service mirrors a dispute.resolved event onto its
    // counterparty_id. It is written for the losing party, so that a trade_id also labels the
    // loser's scores of that trade as fraud (CONTRACT §8).
    const loser = winner === 'buyer' ? r.parties.seller : r.parties.buyer;
    const other = winner === 'buyer' ? r.parties.buyer : r.parties.seller;
    const event = {
      event_id: `console:${r.dispute_id}:resolved`,
      type: 'dispute.resolved',
      entity_id: loser.entity_id,
      counterparty_id: other.entity_id,
      occurred_at: new Date().toISOString(),
      resolution: 'against',
      ...(tradeId.trim() ? { trade_id: tradeId.trim() } : {}),
    };
    try {
      setDone(await api('POST', '/api/v1/trust/events', { events: [event] }));
    } catch (err) {
      setError(toProblem(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-resolve">
      <h2 id="h-resolve">Record the resolution</h2>
      <p class="muted">Sends a <code>dispute.resolved</code> event naming both parties, so the outcome feeds both histories.</p>
      <fieldset>
        <legend>Resolved in favour of</legend>
        <label class="inline"><input type="radio" name="winner" value="buyer" checked={winner === 'buyer'} onChange={() => setWinner('buyer')} /> Buyer</label>
        <label class="inline"><input type="radio" name="winner" value="seller" checked={winner === 'seller'} onChange={() => setWinner('seller')} /> Seller</label>
      </fieldset>
      <Field label="Trade ID (optional)" hint="When given, the losing party's scores for this trade are labelled fraud.">
        <input value={tradeId} onInput={(e) => setTradeId(e.currentTarget.value)} />
      </Field>
      <ErrorBox error={error} what="Could not record the resolution" />
      {done && <p class="ok-msg" role="status">{done.accepted > 0 ? 'Resolution recorded.' : 'This resolution was already recorded.'}</p>}
      <button class="primary" type="submit" disabled={busy || !winner}>Record resolution</button>
    </form>
  );
}
