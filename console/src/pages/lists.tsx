// Lists (docs/rules.md, "Lists"): each list with its kind and entry count; a list's entries (paged),
// adding entries one per line with a reason and an expiry, removing one. Rules read them with
// in_list(name, value); entries are never deleted, only removed, so a rule test sees them as they were.
import { useState } from 'preact/hooks';
import { hasScope, type ApiProblem } from '../api.ts';
import {
  Confirm,
  Empty,
  ErrorBox,
  Field,
  Link,
  Loader,
  fmtDate,
  fmtNumber,
  localToIso,
  navigate,
  toProblem,
  useAction,
  useLoad,
} from '../ui.tsx';
import { LIST_KINDS, listsApi, type ListEntry, type ListKind, type RuleList } from './rules-api.ts';
import { RulesTabs } from './rules-parts.tsx';

const KIND_HINT: Record<ListKind, string> = {
  entity: 'hashed entity ids',
  identifier: 'hashed identifiers (phone, e-mail, IBAN…)',
  country: 'ISO 3166-1 alpha-2 codes',
  string: 'any text',
  payment_method: 'payment method names',
};

export function ListsPage() {
  const list = useLoad(() => listsApi.list(), []);
  const [creating, setCreating] = useState(false);
  const write = hasScope('rules:write');
  return (
    <section aria-labelledby="h-lists">
      <div class="title-row">
        <h1 id="h-lists">Lists</h1>
        {write && !creating && (
          <button class="primary" type="button" onClick={() => setCreating(true)}>
            New list
          </button>
        )}
      </div>
      <RulesTabs current="lists" />
      <p class="muted intro">
        A rule reads a list with <code>in_list("name", value)</code>. An entry may expire; a removed entry stays on
        record, so a test on the past sees the list as it was.
      </p>
      {creating && (
        <CreateList
          onCancel={() => setCreating(false)}
          onCreated={(l) => navigate(`/rules/lists/${encodeURIComponent(l.name)}`)}
        />
      )}
      <Loader state={list} feature="The lists">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>
              No lists yet.{' '}
              {write
                ? 'Create one for the entities, identifiers, countries or payment methods your rules should single out.'
                : ''}
            </Empty>
          ) : (
            <div class="table-wrap">
              <table class="stack lists-table">
                <caption class="sr-only">Lists of this environment</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Kind</th>
                    <th scope="col" class="num">
                      Entries
                    </th>
                    <th scope="col">Description</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((l) => (
                    <tr key={l.name} data-list={l.name}>
                      <td data-label="Name">
                        <Link to={`/rules/lists/${encodeURIComponent(l.name)}`} class="mono">
                          {l.name}
                        </Link>
                      </td>
                      <td data-label="Kind">{l.kind.replace('_', ' ')}</td>
                      <td data-label="Entries" class="num">
                        {fmtNumber(l.entries)}
                      </td>
                      <td data-label="Description">{l.description || <span class="muted">none</span>}</td>
                      <td data-label="Created">{fmtDate(l.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loader>
    </section>
  );
}

function CreateList({ onCreated, onCancel }: { onCreated: (l: RuleList) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<ListKind>('entity');
  const [description, setDescription] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () =>
      onCreated(
        await listsApi.create({
          name: name.trim(),
          kind,
          ...(description.trim() ? { description: description.trim() } : {}),
        }),
      ),
    );
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-create-list">
      <h2 id="h-create-list">Create a list</h2>
      <div class="editor-row">
        <Field label="List name" hint="1–64 letters, digits, _ or -">
          <input
            name="list_name"
            required
            pattern="[A-Za-z0-9_\-]{1,64}"
            maxLength={64}
            class="mono"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        <Field label="Kind" hint={KIND_HINT[kind]}>
          <select name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as ListKind)}>
            {LIST_KINDS.map((k) => (
              <option key={k} value={k}>
                {k.replace('_', ' ')}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <Field label="Description (optional)">
        <input
          name="list_description"
          maxLength={500}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
      </Field>
      <ErrorBox error={error} what="Could not create the list" />
      <div class="actions">
        <button class="primary" type="submit" disabled={busy}>
          Create list
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function ListPage({ name }: { name: string }) {
  const state = useLoad(() => listsApi.get(name), [name]);
  const [tick, setTick] = useState(0);
  const [deleting, setDeleting] = useState(false);
  const [message, setMessage] = useState<string>();
  const write = hasScope('rules:write');
  const refresh = (m: string) => {
    setMessage(m);
    setTick((t) => t + 1);
    state.reload();
  };
  return (
    <section aria-labelledby="h-list">
      <p>
        <Link to="/rules/lists">← All lists</Link>
      </p>
      {state.error?.status === 404 ? (
        <Empty>No list named “{name}” in this environment.</Empty>
      ) : (
        <Loader state={state} feature="This list">
          {(l) => (
            <>
              <div class="title-row spaced">
                <h1 id="h-list">
                  List <span class="mono">{l.name}</span>
                </h1>
                {write && (
                  <button type="button" class="danger" onClick={() => setDeleting(true)}>
                    Delete list
                  </button>
                )}
              </div>
              <dl class="facts">
                <div>
                  <dt>Kind</dt>
                  <dd>
                    {l.kind.replace('_', ' ')} <small class="muted">({KIND_HINT[l.kind] ?? l.kind})</small>
                  </dd>
                </div>
                <div>
                  <dt>Entries</dt>
                  <dd class="big" data-figure="entries">
                    {fmtNumber(l.entries)}
                  </dd>
                </div>
                <div>
                  <dt>Created</dt>
                  <dd>
                    {fmtDate(l.created_at)}
                    {l.created_by && <small class="muted"> by {l.created_by}</small>}
                  </dd>
                </div>
                {l.description && (
                  <div class="wide">
                    <dt>Description</dt>
                    <dd>{l.description}</dd>
                  </div>
                )}
              </dl>
              <p class="muted">
                In a condition: <code>{`in_list("${l.name}", …)`}</code>
              </p>
              {message && (
                <p class="ok-msg" role="status">
                  {message}
                </p>
              )}
              {write && <AddEntries list={l} onAdded={refresh} />}
              <Entries list={l} tick={tick} onRemoved={refresh} />
              {deleting && (
                <DeleteList
                  list={l}
                  onClose={(done) => {
                    setDeleting(false);
                    if (done) navigate('/rules/lists');
                  }}
                />
              )}
            </>
          )}
        </Loader>
      )}
    </section>
  );
}

function AddEntries({ list, onAdded }: { list: RuleList; onAdded: (m: string) => void }) {
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
        `Added ${fmtNumber(r.added)} ${r.added === 1 ? 'entry' : 'entries'}${r.already_present ? `; ${fmtNumber(r.already_present)} already present` : ''}.`,
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

function Entries({ list, tick, onRemoved }: { list: RuleList; tick: number; onRemoved: (m: string) => void }) {
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
                          {e.added_by && <small class="muted by"> by {e.added_by}</small>}
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
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title="Remove this entry?"
      confirmLabel="Remove"
      danger
      busy={busy}
      onCancel={() => onClose()}
      onConfirm={() =>
        void run(async () => {
          await listsApi.removeEntry(list.name, entry.value);
          onClose(entry.value);
        })
      }
    >
      <p>
        <span class="mono value-cell">{entry.value}</span> leaves <span class="mono">{list.name}</span> from the next
        score on. The entry stays on record, so tests on earlier decisions still see it.
      </p>
      <ErrorBox error={error} what="Could not remove" />
    </Confirm>
  );
}

function DeleteList({ list, onClose }: { list: RuleList; onClose: (done: boolean) => void }) {
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title={`Delete the list ${list.name}?`}
      confirmLabel="Delete list"
      danger
      busy={busy}
      onCancel={() => onClose(false)}
      onConfirm={() =>
        void run(async () => {
          await listsApi.remove(list.name);
          onClose(true);
        })
      }
    >
      <p>
        Rules can no longer read it. A list that an active or shadow rule names cannot be deleted: retire the rule
        first.
      </p>
      <ErrorBox error={error} what="Could not delete the list" />
    </Confirm>
  );
}
