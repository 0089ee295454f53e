// A list's entries: adding them one per line with a reason and an expiry, the paged table, removing one.
import { useState } from 'preact/hooks';
import { hasScope, type ApiProblem } from '../api.ts';
import {
  Empty,
  ErrorBox,
  Field,
  Loader,
  fmtDate,
  fmtNumber,
  localToIso,
  toProblem,
  useAction,
  useLoad,
} from '../ui.tsx';
import { ConfirmDelete } from '../confirm-delete.tsx';
import { listsApi, type ListEntry, type RuleList } from './rules-api.ts';
import { KIND_HINT } from './lists.tsx';
import { whoName } from './actors.ts';

export function AddEntries({ list, onAdded }: { list: RuleList; onAdded: (m: string) => void }) {
  const [text, setText] = useState('');
  const [reason, setReason] = useState('');
  const [expires, setExpires] = useState('');
  const { busy, error, run } = useAction({ settle: true });
  const values = [
    ...new Set(
      text
        .split('\n')
        .map((v) => v.trim())
        .filter(Boolean),
    ),
  ];
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const r = await listsApi.add(list.name, {
        values,
        ...(reason.trim() ? { reason: reason.trim() } : {}),
        ...(expires ? { expires_at: localToIso(expires)! } : {}),
      });
      setText('');
      onAdded(
        `Added ${fmtNumber(r.added)} ${r.added === 1 ? 'entry' : 'entries'}` +
          (r.already_present ? `; ${fmtNumber(r.already_present)} already present` : '') +
          '.',
      );
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-add-entries">
      <h2 id="h-add-entries">Add entries</h2>
      <Field label="Values, one per line" hint={`${KIND_HINT[list.kind] ?? list.kind}; up to 1,000 at a time`}>
        <textarea name="values" rows={4} class="mono" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </Field>
      <div class="editor-row">
        <Field label="Reason (optional)">
          <input name="reason" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </Field>
        <Field label="Expires (optional)">
          <input
            name="expires_at"
            type="datetime-local"
            value={expires}
            onInput={(e) => setExpires(e.currentTarget.value)}
          />
        </Field>
      </div>
      <ErrorBox error={error} what="Could not add the entries" />
      <button class="primary" type="submit" disabled={busy || values.length === 0 || values.length > 1000}>
        {values.length > 1 ? `Add ${fmtNumber(values.length)} entries` : 'Add entry'}
      </button>
    </form>
  );
}
export function Entries({ list, tick, onRemoved }: { list: RuleList; tick: number; onRemoved: (m: string) => void }) {
  const first = useLoad(() => listsApi.entries(list.name), [list.name, tick]);
  const [more, setMore] = useState<{
    tick: number;
    rows: ListEntry[];
    cursor: string | null;
    busy?: boolean;
    error?: ApiProblem;
  }>();
  const [removing, setRemoving] = useState<ListEntry>();
  const extra = more?.tick === tick ? more : undefined;
  const rows = [...(first.data?.data ?? []), ...(extra?.rows ?? [])];
  const cursor = extra ? extra.cursor : (first.data?.next_cursor ?? null);
  const write = hasScope('rules:write');
  const loadMore = async () => {
    if (!cursor) return;
    setMore({ tick, rows: extra?.rows ?? [], cursor, busy: true });
    try {
      const page = await listsApi.entries(list.name, cursor);
      setMore({ tick, rows: [...(extra?.rows ?? []), ...page.data], cursor: page.next_cursor ?? null });
    } catch (err) {
      setMore({ tick, rows: extra?.rows ?? [], cursor, error: toProblem(err) });
    }
  };
  return (
    <section aria-labelledby="h-entries">
      <h2 id="h-entries">Entries</h2>
      <Loader state={first} feature="The entries">
        {() =>
          rows.length === 0 ? (
            <Empty>This list has no entries.</Empty>
          ) : (
            <>
              <div class="table-wrap">
                <table class="stack entries">
                  <caption class="sr-only">Entries of {list.name}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Value</th>
                      <th scope="col">Reason</th>
                      <th scope="col">Added</th>
                      <th scope="col">Expires</th>
                      {write && <th scope="col">Actions</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((e) => (
                      <tr key={e.value} data-value={e.value}>
                        <td data-label="Value" class="mono value-cell">
                          {e.value}
                        </td>
                        <td data-label="Reason">{e.reason || <span class="muted">none</span>}</td>
                        <td data-label="Added">
                          {fmtDate(e.added_at)}
                          {e.added_by && (
                            <small class="muted by" title={e.added_by}>
                              {' '}
                              by {whoName(e.added_by_actor, e.added_by)}
                            </small>
                          )}
                        </td>
                        <td data-label="Expires">
                          {e.expires_at ? fmtDate(e.expires_at) : <span class="muted">never</span>}
                        </td>
                        {write && (
                          <td data-label="" class="actions">
                            <button
                              type="button"
                              class="danger"
                              aria-label={`Remove ${e.value}`}
                              onClick={() => setRemoving(e)}
                            >
                              Remove
                            </button>
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <p class="muted small">
                {fmtNumber(rows.length)} shown{cursor ? '' : ' (all)'}
              </p>
              <ErrorBox error={extra?.error} what="Could not load more" />
              {cursor && (
                <button type="button" onClick={loadMore} disabled={extra?.busy}>
                  {extra?.busy ? 'Loading…' : 'Load more'}
                </button>
              )}
            </>
          )
        }
      </Loader>
      {removing && (
        <RemoveEntry
          list={list}
          entry={removing}
          onClose={(done) => {
            setRemoving(undefined);
            if (done) onRemoved(`Removed ${done}.`);
          }}
        />
      )}
    </section>
  );
}

function RemoveEntry({ list, entry, onClose }: { list: RuleList; entry: ListEntry; onClose: (done?: string) => void }) {
  return (
    <ConfirmDelete
      title="Remove this entry?"
      confirmLabel="Remove"
      failed="Could not remove"
      onCancel={() => onClose()}
      remove={async () => {
        await listsApi.removeEntry(list.name, entry.value);
        onClose(entry.value);
      }}
    >
      <p>
        <span class="mono value-cell">{entry.value}</span> leaves <span class="mono">{list.name}</span> from the next
        score on. The entry stays on record, so tests on earlier decisions still see it.
      </p>
    </ConfirmDelete>
  );
}
