// API keys: list, create (secret shown once), rotate, deactivate.
import { useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { Key, KeyStatus } from '../types.ts';
import { AnyOf, Empty, Field, Loader, SecretOnce, fmtDate, useLoad } from '../ui.tsx';
import { CreateKey, Deactivate, Rotate } from './keys-dialogs.tsx';

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
