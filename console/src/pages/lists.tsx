// Lists (docs/rules.md, "Lists"): each list with its kind and entry count; a list's entries (paged),
// adding entries one per line with a reason and an expiry, removing one. Rules read them with
// in_list(name, value); entries are never deleted, only removed, so a rule test sees them as they were.
import { useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { Empty, ErrorBox, Field, Link, Loader, fmtDate, fmtNumber, navigate, useAction, useLoad } from '../ui.tsx';
import { LIST_KINDS, listsApi, type ListKind, type RuleList } from './rules-api.ts';
import { RulesTabs } from './rules-parts.tsx';

export const KIND_HINT: Record<ListKind, string> = {
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
