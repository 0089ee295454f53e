// The landing page after sign-in: today's decisions (scores and dispute analyses, since local
// midnight), the share scored high or critical, the disputes waiting for a human, and, for a
// network admin, the network's state. Every figure is read from the public API; there is no
// counting endpoint, so today's decisions are paged through up to a bound and a busier day says
// "at least" rather than keeping the page (and the service) busy. With reviews:read, the desk's day
// follows: its figures and charts (desk-day.tsx, GET /api/v1/desk/day).
import { hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { Decision, DisputeResult, ScoreResult } from '../types.ts';
import { ErrorBox, Link, Loader, Loading, fmtDate, fmtNumber, fmtPercent, useLoad } from '../ui.tsx';
import { PerClientNote } from './decisions.tsx';
import { DeskDaySection } from './desk-day.tsx';

/** Pages of 100 read per kind at most: 1,000 decisions, a few hundred milliseconds of the service's time. */
const MAX_PAGES = 10;

interface Today {
  rows: Decision[];
  /** more decisions than MAX_PAGES pages today: the figures cover the latest ones */
  more: boolean;
}

const midnight = (): string => {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  return d.toISOString();
};

async function today(kind: 'score' | 'dispute', since: string): Promise<Today> {
  const rows: Decision[] = [];
  let cursor: string | null | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await vouch.GET('/api/v1/decisions', {
      params: { query: { kind, since, limit: 100, cursor: cursor ?? undefined } },
    });
    rows.push(...page.data);
    cursor = page.next_cursor;
    if (!cursor) return { rows, more: false };
  }
  return { rows, more: true };
}

const count = (t: Today) => (t.more ? `${fmtNumber(t.rows.length)}+` : fmtNumber(t.rows.length));

function Scores({ t }: { t: Today }) {
  const high = t.rows.filter((d) =>
    ['high', 'critical'].includes(String((d.result as Partial<ScoreResult>).risk_level)),
  ).length;
  const critical = t.rows.filter((d) => (d.result as Partial<ScoreResult>).risk_level === 'critical').length;
  const share = t.rows.length ? high / t.rows.length : null;
  return (
    <>
      <div>
        <dt>Scores today</dt>
        <dd class="big" data-figure="scores-today">
          {count(t)}
        </dd>
      </div>
      <div>
        <dt>Scored high or critical</dt>
        <dd class="big" data-figure="high-share">
          {fmtPercent(share)}
        </dd>
        <dd class="muted small">
          {t.rows.length
            ? `${fmtNumber(high)} of ${fmtNumber(t.rows.length)}${t.more ? ' latest' : ''}, ${fmtNumber(critical)} critical`
            : 'no scores yet today'}
        </dd>
      </div>
    </>
  );
}

function Disputes({ t }: { t: Today }) {
  const review = new Set(
    t.rows
      .filter((d) => (d.result as Partial<DisputeResult>).recommendation === 'manual_review')
      .map((d) => d.subject_id),
  ).size;
  return (
    <>
      <div>
        <dt>Dispute analyses today</dt>
        <dd class="big" data-figure="disputes-today">
          {count(t)}
        </dd>
      </div>
      <div>
        <dt>Recommended for manual review</dt>
        <dd class="big" data-figure="manual-review">
          {fmtNumber(review)}
        </dd>
        <dd class="muted small">
          disputes analysed today whose recommendation is a human's call: <Link to="/disputes">Disputes</Link>
        </dd>
      </div>
    </>
  );
}

/** The network in one card: peers active, the latest sync, the peers whose last attempt failed. */
function Network() {
  const state = useLoad(() => vouch.GET('/api/v1/network/status'), []);
  if (state.error && [403, 404].includes(state.error.status)) return null;
  return (
    <section class="panel" aria-labelledby="h-dash-network">
      <h2 id="h-dash-network">Network</h2>
      <Loader state={state} feature="The network status">
        {(s) => {
          const active = s.peers.filter((p) => p.status === 'active');
          const failing = active.filter((p) => p.last_error);
          const last = Math.max(0, ...s.peers.map((p) => (p.last_sync_at ? Date.parse(p.last_sync_at) : 0)));
          if (s.peers.length === 0)
            return (
              <p data-figure="network">
                No peers: the network is off. <Link to="/network">Network</Link>
              </p>
            );
          return (
            <dl class="facts" data-figure="network">
              <div>
                <dt>Peers active</dt>
                <dd class="big">
                  {fmtNumber(active.length)} <small class="muted">of {fmtNumber(s.peers.length)}</small>
                </dd>
              </div>
              <div>
                <dt>Last sync</dt>
                <dd>{last ? fmtDate(last) : <span class="muted">never</span>}</dd>
              </div>
              <div>
                <dt>Last attempt failed</dt>
                <dd class={failing.length ? 'risk' : undefined}>
                  {failing.length ? failing.map((p) => p.name).join(', ') : 'none'}
                </dd>
              </div>
              <div>
                <dt>Flags matched</dt>
                <dd>{fmtNumber(s.peers.reduce((n, p) => n + p.matched, 0))}</dd>
              </div>
            </dl>
          );
        }}
      </Loader>
    </section>
  );
}

export function DashboardPage() {
  const since = midnight();
  const scores = useLoad(() => today('score', since), [since]);
  const disputes = useLoad(() => today('dispute', since), [since]);
  return (
    <section aria-labelledby="h-dashboard">
      <h1 id="h-dashboard">Dashboard</h1>
      <p class="muted">Today: since midnight ({fmtDate(since)}, this browser's time zone).</p>
      <PerClientNote what="decisions" />
      <dl class="facts dashboard">
        {scores.data ? (
          <Scores t={scores.data} />
        ) : (
          <div>
            <Loading what="Counting today's scores" />
          </div>
        )}
        {disputes.data ? (
          <Disputes t={disputes.data} />
        ) : (
          <div>
            <Loading what="Counting today's disputes" />
          </div>
        )}
      </dl>
      <ErrorBox error={scores.error ?? disputes.error} what="Could not read today's decisions" />
      {(scores.data?.more || disputes.data?.more) && (
        <p class="muted">
          More than {fmtNumber(MAX_PAGES * 100)} decisions of a kind today: the figures marked + cover the latest{' '}
          {fmtNumber(MAX_PAGES * 100)}.
        </p>
      )}
      <p>
        <Link to="/decisions">All decisions</Link> · <Link to="/disputes">All disputes</Link>
      </p>
      {hasScope('reviews:read') && <DeskDaySection />}
      {hasScope('network:admin') && <Network />}
    </section>
  );
}
