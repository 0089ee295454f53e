// The keys page's dialogs: creating a key (its secret shown once), deactivating and rotating one.
import { useState } from 'preact/hooks';
import { currentSession } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { Key, KeyWithSecret, NewKey } from '../types.ts';
import { CheckboxGroup, Confirm, ErrorBox, Field, localToIso, useAction } from '../ui.tsx';
import { ConfirmDelete } from '../confirm-delete.tsx';

const ROLES = ['service', 'operator', 'admin'];

export function CreateKey({ onCreated, onCancel }: { onCreated: (k: KeyWithSecret) => void; onCancel: () => void }) {
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

export function Deactivate({ k, onClose }: { k: Key; onClose: (changed: boolean) => void }) {
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

export function Rotate({ k, onClose }: { k: Key; onClose: (created?: KeyWithSecret) => void }) {
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
