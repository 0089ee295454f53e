// The audit log (docs/api.md, "Audit log"): who changed what, newest first, filtered by actor,
// action and time, a page at a time by cursor; each entry's change as a compact diff. Every person
// reads it; of machines, admins.
import { useState } from 'preact/hooks';
import { currentSession, type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import { CompactDiff } from '../diff.tsx';
import type { AuditEntry } from '../people-types.ts';
import { DraftFilterForm, Empty, ErrorBox, Field, Loader, fmtDate, localToIso, toProblem, useLoad } from '../ui.tsx';
import './people.css';

interface Filters {
  actor: string;
  action: string;
  since: string;
  until: string;
}
const NONE: Filters = { actor: '', action: '', since: '', until: '' };
const PAGE = 50;

const listAudit = (f: Filters, cursor?: string | null) =>
  vouch.GET('/api/v1/audit-log', {
    params: {
      query: {
        actor: f.actor.trim(),
        action: f.action.trim(),
        since: localToIso(f.since),
        until: localToIso(f.until),
        limit: PAGE,
        cursor: cursor ?? undefined,
      },
    },
  });

/** A few actions to start from; the list also offers every action already on screen. */
const COMMON_ACTIONS = [
  'user.*',
  'user.login',
  'rule.*',
  'policy.*',
  'list.*',
  'change.*',
  'key.*',
  'settings.changed',
];

export function AuditLogPage() {
  const [draft, setDraft] = useState<Filters>(NONE);
  const [filters, setFilters] = useState<Filters>(NONE);
  const key = JSON.stringify(filters);
  const first = useLoad(() => listAudit(filters), [key]);
  const [extra, setExtra] = useState<{ key: string; rows: AuditEntry[]; cursor: string | null; error?: ApiProblem }>();
  const [busy, setBusy] = useState(false);
  const more = extra?.key === key ? extra : undefined;
  const rows = [...(first.data?.data ?? []), ...(more?.rows ?? [])];
  const cursor = more ? more.cursor : (first.data?.next_cursor ?? null);
  const apply = (f: Filters) => {
    setDraft(f);
    setFilters(f);
  };
  const loadMore = async () => {
    if (!cursor) return;
    setBusy(true);
    try {
      const page = await listAudit(filters, cursor);
      setExtra({ key, rows: [...(more?.rows ?? []), ...page.data], cursor: page.next_cursor });
    } catch (err) {
      setExtra({ key, rows: more?.rows ?? [], cursor, error: toProblem(err) });
    }
    setBusy(false);
  };
  const actions = [...new Set([...COMMON_ACTIONS, ...rows.map((r) => r.action)])].sort();
  const me = currentSession()?.actorId;
  const filtered = key !== JSON.stringify(NONE);
  return (
    <section aria-labelledby="h-audit">
      <h1 id="h-audit">Audit log</h1>
      <p class="muted">
        Every change by a person or a client, newest first: sign-ins, people, rules, lists, policies, keys, settings and
        approvals. Entries are chained by hash; <code>vouch audit verify</code> checks the chain.
      </p>
      <DraftFilterForm label="Filter the audit log" draft={draft} setDraft={setDraft} apply={apply} none={NONE}>
        {(set) => (
          <>
            <Field label="Actor">
              <input name="actor" value={draft.actor} placeholder="usr_… or a client id" onInput={set('actor')} />
            </Field>
            <Field label="Action">
              <input
                name="action"
                list="audit-actions"
                value={draft.action}
                placeholder="rule.*"
                onInput={set('action')}
              />
              <datalist id="audit-actions">
                {actions.map((a) => (
                  <option key={a} value={a} />
                ))}
              </datalist>
            </Field>
            <Field label="Since">
              <input name="since" type="datetime-local" value={draft.since} onInput={set('since')} />
            </Field>
            <Field label="Until">
              <input name="until" type="datetime-local" value={draft.until} onInput={set('until')} />
            </Field>
          </>
        )}
      </DraftFilterForm>
      <p class="muted small filters-help">
        Actor: a user's or client's id, or pick a name in the table. Action: one action (<code>user.login</code>), or
        every action of a kind (<code>rule.*</code>).
      </p>
      <Loader state={first} feature="The audit log">
        {() =>
          rows.length === 0 ? (
            <Empty>{filtered ? 'No entries match these filters.' : 'No entries yet.'}</Empty>
          ) : (
            <>
              <div class="table-wrap">
                <table class="stack audit">
                  <caption>
                    {rows.length} {rows.length === 1 ? 'entry' : 'entries'} shown{cursor ? ', more older ones' : ''}
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Who</th>
                      <th scope="col">Action</th>
                      <th scope="col">Target</th>
                      <th scope="col">Change</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((e) => (
                      <tr key={e.id} data-entry={e.id}>
                        <td data-label="When" class="nowrap" title={e.at}>
                          {fmtDate(e.at)}
                        </td>
                        <td data-label="Who">
                          <button
                            type="button"
                            class="linkish"
                            title={`Only ${e.actor.name}'s entries (${e.actor.id})`}
                            onClick={() => apply({ ...filters, actor: e.actor.id })}
                          >
                            {e.actor.name}
                          </button>{' '}
                          <small class="muted">
                            {e.actor.type === 'user' ? 'person' : 'client'}
                            {e.actor.id === me ? ', you' : ''}
                          </small>
                        </td>
                        <td data-label="Action" class="mono">
                          {e.action}
                        </td>
                        <td data-label="Target" class="mono target">
                          {e.target ?? '—'}
                        </td>
                        <td data-label="Change" class="change">
                          <CompactDiff before={e.before} after={e.after} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <ErrorBox error={more?.error} what="Could not load older entries" />
              {cursor && (
                <button type="button" disabled={busy} onClick={loadMore}>
                  {busy ? 'Loading…' : 'Older entries'}
                </button>
              )}
            </>
          )
        }
      </Loader>
    </section>
  );
}
