// API keys: list, create (secret shown once), rotate, deactivate.
import { useState } from 'preact/hooks';
import { currentSession, hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { Key, KeyStatus, KeyWithSecret, NewKey } from '../types.ts';
import {
  AnyOf,
  CheckboxGroup,
  Confirm,
  Empty,
  ErrorBox,
  Field,
  Loader,
  SecretOnce,
  fmtDate,
  localToIso,
  useAction,
  useLoad,
} from '../ui.tsx';
import { ConfirmDelete } from '../confirm-delete.tsx';

const ROLES = ['service', 'operator', 'admin'];

/** A page of keys, those of `status` when one is chosen. */
const keysPage = (status: KeyStatus | '', cursor?: string | null) =>
  vouch.GET('/api/v1/keys', {
    params: { query: { status: status || undefined, limit: 50, cursor: cursor ?? undefined } },
  });

export function KeysPage() {
  const [status, setStatus] = useState<KeyStatus | ''>('');
  const [rows, setRows] = useState<{ key: string; extra: Key[]; cursor?: string | null }>({ key: '', extra: [] });
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const [action, setAction] = useState<{ kind: 'rotate' | 'deactivate'; key: Key }>();
  const [creating, setCreating] = useState(false);
  const list = useLoad(() => keysPage(status), [status]);
  const more = rows.key === status ? rows : { key: status, extra: [] as Key[], cursor: undefined };
  const cursor = more.cursor === undefined ? list.data?.next_cursor : more.cursor;
  const loadMore = async () => {
    const page = await keysPage(status, cursor);
    setRows({ key: status, extra: [...more.extra, ...page.data], cursor: page.next_cursor });
  };
  const refresh = () => {
    setRows({ key: '', extra: [] });
    list.reload();
  };
  const write = hasScope('keys:write');
  return (
    <section aria-labelledby="h-keys">
      <div class="title-row">
        <h1 id="h-keys">API keys</h1>
        {write && !creating && (
          <button class="primary" type="button" onClick={() => setCreating(true)}>
            Create key
          </button>
        )}
      </div>
      {secret && <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(undefined)} />}
      {creating && (
        <CreateKey
          onCancel={() => setCreating(false)}
          onCreated={(k) => {
            setCreating(false);
            setSecret({ label: `Secret of the new key “${k.name}”`, value: k.key });
            refresh();
          }}
        />
      )}
      <div class="filters">
        <Field label="Status">
          <AnyOf
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as KeyStatus | '')}
            choices={[
              ['active', 'Active'],
              ['expired', 'Expired'],
              ['inactive', 'Inactive'],
            ]}
          />
        </Field>
      </div>
      <Loader state={list} feature="Key management">
        {(page) => {
          const all = [...page.data, ...more.extra];
          if (all.length === 0)
            return (
              <Empty>
                {status
                  ? `No ${status} keys.`
                  : write
                    ? 'No keys yet. Create one with “Create key”; its secret is shown once.'
                    : 'No keys yet.'}
              </Empty>
            );
          return (
            <>
              <div class="table-wrap">
                <table class="stack">
                  <caption class="sr-only">API keys, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Prefix</th>
                      <th scope="col">Status</th>
                      <th scope="col">Role</th>
                      <th scope="col">Scopes</th>
                      <th scope="col">Created</th>
                      <th scope="col">Expires</th>
                      <th scope="col">Last used</th>
                      {write && <th scope="col">Actions</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {all.map((k) => (
                      <tr key={k.id}>
                        <td data-label="Name">
                          {k.name} <small class="muted">{k.environment}</small>
                        </td>
                        <td data-label="Prefix" class="mono">
                          {k.prefix}…
                        </td>
                        <td data-label="Status">
                          <span class={`badge status-${k.status}`}>{k.status}</span>
                        </td>
                        <td data-label="Role">{k.role}</td>
                        <td data-label="Scopes" class="scopes">
                          {k.scopes.join(' ')}
                        </td>
                        <td data-label="Created">
                          {fmtDate(k.created_at)}
                          {k.created_by && <small class="muted by"> by {k.created_by.name}</small>}
                        </td>
                        <td data-label="Expires">{fmtDate(k.expires_at)}</td>
                        <td data-label="Last used">{fmtDate(k.last_used_at)}</td>
                        {write && (
                          <td data-label="" class="actions">
                            {k.status === 'active' && (
                              <button
                                type="button"
                                aria-label={`Rotate ${k.name}`}
                                onClick={() => setAction({ kind: 'rotate', key: k })}
                              >
                                Rotate
                              </button>
                            )}
                            {k.status !== 'inactive' && (
                              <button
                                type="button"
                                class="danger"
                                aria-label={`Deactivate ${k.name}`}
                                onClick={() => setAction({ kind: 'deactivate', key: k })}
                              >
                                Deactivate
                              </button>
                            )}
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {cursor && (
                <button type="button" onClick={loadMore}>
                  Load more
                </button>
              )}
            </>
          );
        }}
      </Loader>
      {action?.kind === 'deactivate' && (
        <Deactivate
          k={action.key}
          onClose={(changed) => {
            setAction(undefined);
            if (changed) refresh();
          }}
        />
      )}
      {action?.kind === 'rotate' && (
        <Rotate
          k={action.key}
          onClose={(created) => {
            setAction(undefined);
            if (created) {
              setSecret({ label: `Secret of the rotated key “${created.name}”`, value: created.key });
              refresh();
            }
          }}
        />
      )}
    </section>
  );
}

function CreateKey({ onCreated, onCancel }: { onCreated: (k: KeyWithSecret) => void; onCancel: () => void }) {
  const session = currentSession();
  const mine = session?.scopes ?? [];
  const maxRole = ROLES.indexOf(session?.role ?? 'service');
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [role, setRole] = useState('service');
  const [environment, setEnvironment] = useState('live');
  const [expires, setExpires] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    // the form offers the API's scopes, roles and environments
    const chosen = { scopes, role, environment } as Pick<NewKey, 'scopes' | 'role' | 'environment'>;
    void run(async () =>
      onCreated(
        await vouch.POST('/api/v1/keys', {
          body: { name, ...chosen, ...(expires ? { expires_at: localToIso(expires) } : {}) },
        }),
      ),
    );
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-create-key">
      <h2 id="h-create-key">Create a key</h2>
      <Field label="Name">
        <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <CheckboxGroup legend="Scopes (at most your own)" options={mine} chosen={scopes} onChange={setScopes} />
      <div class="row">
        <Field label="Role">
          <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            {ROLES.filter((_, i) => i <= maxRole).map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Environment">
          <select value={environment} onChange={(e) => setEnvironment(e.currentTarget.value)}>
            <option value="live">live</option>
            <option value="test">test</option>
          </select>
        </Field>
        <Field label="Expires at (optional)">
          <input type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
        </Field>
      </div>
      <ErrorBox error={error} what="Could not create the key" />
      <div class="actions">
        <button class="primary" type="submit" disabled={busy || scopes.length === 0 || !name.trim()}>
          Create
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Deactivate({ k, onClose }: { k: Key; onClose: (changed: boolean) => void }) {
  return (
    <ConfirmDelete
      title={`Deactivate “${k.name}”?`}
      confirmLabel="Deactivate"
      failed="Could not deactivate"
      onCancel={() => onClose(false)}
      remove={async () => {
        await vouch.DELETE('/api/v1/keys/{key_id}', { params: { path: { key_id: k.id } } });
        onClose(true);
      }}
    >
      <p>
        The key <span class="mono">{k.prefix}…</span> will be refused on its very next request, on every instance. This
        cannot be undone.
      </p>
    </ConfirmDelete>
  );
}

function Rotate({ k, onClose }: { k: Key; onClose: (created?: KeyWithSecret) => void }) {
  const [grace, setGrace] = useState('86400');
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title={`Rotate “${k.name}”?`}
      confirmLabel="Rotate"
      busy={busy}
      onCancel={() => onClose()}
      onConfirm={() =>
        run(async () =>
          onClose(
            await vouch.POST('/api/v1/keys/{key_id}/rotate', {
              params: { path: { key_id: k.id } },
              body: { grace_period_seconds: Number(grace) },
            }),
          ),
        )
      }
    >
      <p>A new key with the same name, scopes and role is created; the old one keeps working for the grace period.</p>
      <Field label="Grace period (seconds)" hint="0 refuses the old key at once; at most 604800 (7 days).">
        <input type="number" min={0} max={604800} value={grace} onInput={(e) => setGrace(e.currentTarget.value)} />
      </Field>
      <ErrorBox error={error} what="Could not rotate" />
    </Confirm>
  );
}
