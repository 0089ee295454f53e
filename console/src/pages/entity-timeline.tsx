// The Entities page's timeline: the entity's events newest first, 50 at a time (GET
// /api/v1/trust/entities/{id}/events). A non-admin sees its own client's events only.
import { useState } from 'preact/hooks';
import { type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { EntityEvent } from '../types.ts';
import { Empty, ErrorBox, Link, Loader, fmtDate, fmtMoney, toProblem, useLoad } from '../ui.tsx';

const RESOLUTIONS: Record<string, string> = { in_favor: 'in its favour', against: 'against it' };
const short = (s: string) => (s.length > 14 ? `${s.slice(0, 12)}…` : s);

export function EntityTimeline({ id }: { id: string }) {
  const events = (cursor?: string) =>
    vouch.GET('/api/v1/trust/entities/{entity_id}/events', {
      params: { path: { entity_id: id }, query: { limit: 50, cursor } },
    });
  const first = useLoad(() => events(), [id]);
  const [extra, setExtra] = useState<{
    id: string;
    rows: EntityEvent[];
    cursor: string | null;
    error?: ApiProblem;
    busy?: boolean;
  }>();
  const more = extra?.id === id ? extra : undefined;
  const cursor = more ? more.cursor : (first.data?.next_cursor ?? null);
  const loadMore = async () => {
    if (!cursor) return;
    setExtra({ id, rows: more?.rows ?? [], cursor, busy: true });
    try {
      const page = await events(cursor);
      setExtra({ id, rows: [...(more?.rows ?? []), ...page.data], cursor: page.next_cursor });
    } catch (err) {
      setExtra({ id, rows: more?.rows ?? [], cursor, error: toProblem(err) });
    }
  };
  return (
    <Loader state={first} feature="The event timeline">
      {(page) => {
        const rows = [...page.data, ...(more?.rows ?? [])];
        if (rows.length === 0) return <Empty>No events of this entity were sent by your client.</Empty>;
        return (
          <>
            <div class="table-wrap">
              <table class="timeline stack">
                <caption class="muted">Newest first{rows.length > 1 ? ` · ${rows.length} shown` : ''}</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Event</th>
                    <th scope="col" class="num">
                      Amount
                    </th>
                    <th scope="col">Counterparty</th>
                    <th scope="col">Trade</th>
                    <th scope="col">Resolution</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((ev) => (
                    <tr key={ev.occurred_at + ev.event_id}>
                      <td data-label="When">
                        <time dateTime={ev.occurred_at}>{fmtDate(ev.occurred_at)}</time>
                      </td>
                      <td data-label="Event">
                        <code>{ev.type}</code>
                      </td>
                      <td data-label="Amount" class="num">
                        {ev.amount === undefined ? '—' : fmtMoney(ev.amount, ev.currency)}
                      </td>
                      <td data-label="Counterparty" class="mono">
                        {ev.counterparty_id ? (
                          <Link to={`/entities/${encodeURIComponent(ev.counterparty_id)}`} title={ev.counterparty_id}>
                            {short(ev.counterparty_id)}
                          </Link>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td data-label="Trade" class="mono trunc" title={ev.trade_id}>
                        {ev.trade_id ?? '—'}
                      </td>
                      <td data-label="Resolution">
                        {ev.resolution ? (RESOLUTIONS[ev.resolution] ?? ev.resolution) : '—'}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <ErrorBox error={more?.error} what="Could not load more events" />
            {cursor && (
              <button type="button" onClick={loadMore} disabled={more?.busy}>
                {more?.busy ? 'Loading…' : 'Load more'}
              </button>
            )}
          </>
        );
      }}
    </Loader>
  );
}
