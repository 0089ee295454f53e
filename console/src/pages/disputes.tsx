// Disputes: one row per dispute (its latest analysis, and how many there were), the ones waiting
// for a human (`manual_review`) first, every page of them through next_cursor.
import { Empty, ErrorBox, LevelBadge, Link, Loader, fmtDate, fmtNumber, fmtPercent } from '../ui.tsx';
import { SEVERITIES, type Decision, type DisputeResult } from '../types.ts';
import { OpenById, PerClientNote, ownOnly, useDecisionList } from './decisions.tsx';
import { disputeRequest, tradeAmount, words } from './decision-facts.tsx';
import { Recommendation } from './dispute.tsx';

interface DisputeRow {
  latest: Decision;
  /** analyses of this dispute among those loaded */
  analyses: number;
}

/** Groups analyses (newest first, as listed) by dispute: the first seen of each is its latest. */
function byDispute(analyses: readonly Decision[]): DisputeRow[] {
  const rows = new Map<string, DisputeRow>();
  for (const d of analyses) {
    const row = rows.get(d.subject_id);
    if (row) row.analyses += 1;
    else rows.set(d.subject_id, { latest: d, analyses: 1 });
  }
  const rank = (r: DisputeRow) => ((r.latest.result as DisputeResult).recommendation === 'manual_review' ? 0 : 1);
  // Array.prototype.sort is stable: each group keeps the newest-first order.
  return [...rows.values()].sort((a, b) => rank(a) - rank(b));
}

export function DisputesPage() {
  const list = useDecisionList({ kind: 'dispute' });
  return (
    <section aria-labelledby="h-disputes">
      <h1 id="h-disputes">Disputes</h1>
      <PerClientNote what="dispute analyses" />
      <OpenById label="Analysis ID" placeholder="dan_… (an analysis_id)" button="Open analysis" under="/disputes" />
      <Loader state={list.first} feature="The list of dispute analyses">
        {() => {
          const rows = byDispute(list.rows);
          if (rows.length === 0) {
            return (
              <Empty>
                No dispute analyses yet. They appear here when the marketplace calls POST /api/v1/dispute/analyze
                {ownOnly() ? " with this client's credentials" : ''}.
              </Empty>
            );
          }
          return (
            <>
              <div class="table-wrap">
                <table class="stack">
                  <caption>
                    One row per dispute, its latest analysis: manual reviews first, then the rest, newest first
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Dispute</th>
                      <th scope="col" class="num">
                        Amount
                      </th>
                      <th scope="col">Reason</th>
                      <th scope="col">Recommendation</th>
                      <th scope="col" class="num">
                        Confidence
                      </th>
                      <th scope="col">Worst flag</th>
                      <th scope="col">Buyer / seller score</th>
                      <th scope="col" class="num">
                        Analyses
                      </th>
                      <th scope="col">Last analysed</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((row) => (
                      <DisputeListRow key={row.latest.subject_id} row={row} />
                    ))}
                  </tbody>
                </table>
              </div>
              <p class="muted" role="status">
                {fmtNumber(rows.length)} dispute{rows.length === 1 ? '' : 's'} from {fmtNumber(list.rows.length)} analys
                {list.rows.length === 1 ? 'is' : 'es'}
                {list.cursor ? '; older analyses not loaded yet' : ''}.
              </p>
              <ErrorBox error={list.more?.error} what="Could not load more" />
              {list.cursor && (
                <button type="button" onClick={list.loadMore} disabled={list.more?.busy}>
                  {list.more?.busy ? 'Loading…' : 'Load more'}
                </button>
              )}
            </>
          );
        }}
      </Loader>
    </section>
  );
}

function DisputeListRow({ row }: { row: DisputeRow }) {
  const d = row.latest;
  const r = d.result as DisputeResult;
  const worst = SEVERITIES.find((s) => r.risk_flags.some((f) => f.severity === s));
  return (
    <tr class={r.recommendation === 'manual_review' ? 'attention' : undefined}>
      <td data-label="Dispute" class="dispute-id">
        <Link to={`/disputes/${encodeURIComponent(d.id)}`} class="mono">
          {d.subject_id}
        </Link>
      </td>
      <td data-label="Amount" class="num amount">
        {tradeAmount(d)}
      </td>
      <td data-label="Reason">
        {words(disputeRequest(d)?.reason) ?? <span class="muted">not recorded</span>}
        {disputeRequest(d)?.opened_by && <small class="muted"> · by the {disputeRequest(d)?.opened_by}</small>}
      </td>
      <td data-label="Recommendation">
        <Recommendation r={r} />
      </td>
      <td data-label="Confidence" class="num">
        {fmtPercent(r.confidence)}
      </td>
      <td data-label="Worst flag">
        {worst ? <span class={`badge level-${worst}`}>{worst}</span> : <span class="muted">none</span>}
      </td>
      <td data-label="Buyer / seller" class="parties">
        <span class="nowrap">
          {fmtNumber(r.parties.buyer.score)} <LevelBadge level={r.parties.buyer.risk_level} />
        </span>{' '}
        /{' '}
        <span class="nowrap">
          {fmtNumber(r.parties.seller.score)} <LevelBadge level={r.parties.seller.risk_level} />
        </span>
      </td>
      <td
        data-label="Analyses"
        class="num"
        title={row.analyses > 1 ? `analysed ${row.analyses} times; the latest is shown` : undefined}
      >
        {fmtNumber(row.analyses)}
      </td>
      <td data-label="Last analysed">{fmtDate(d.created_at)}</td>
    </tr>
  );
}
