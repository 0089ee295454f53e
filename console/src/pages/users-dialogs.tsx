// The users page's forms and dialogs (docs/api.md, "People"): invite a person, change a role,
// deactivate or reactivate.
import { useState } from 'preact/hooks';
import { vouch } from '../api-client.ts';
import { PERSON_ROLES, ROLE_MAY, type Invited, type PersonRole, type User } from '../people-types.ts';
import { Confirm, ErrorBox, Field, useAction } from '../ui.tsx';

/** The path of one person's calls. */
const of = (user: User) => ({ params: { path: { id: user.id } } });

function RoleSelect({
  value,
  onChange,
  label,
}: {
  value: PersonRole;
  onChange: (r: PersonRole) => void;
  label: string;
}) {
  return (
    <Field label={label} hint={`A ${value} ${ROLE_MAY[value]}.`}>
      <select name="role" value={value} onChange={(e) => onChange(e.currentTarget.value as PersonRole)}>
        {PERSON_ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
    </Field>
  );
}

export function InviteForm({ onInvited, onCancel }: { onInvited: (u: Invited) => void; onCancel: () => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<PersonRole>('viewer');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () =>
      onInvited(await vouch.POST('/api/v1/users', { body: { email: email.trim(), name: name.trim(), role } })),
    );
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-invite">
      <h2 id="h-invite">Invite a person</h2>
      <div class="row invite-fields">
        <Field label="E-mail">
          <input
            name="email"
            type="email"
            required
            maxLength={254}
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field label="Name">
          <input name="name" required maxLength={120} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <RoleSelect label="Role" value={role} onChange={setRole} />
      </div>
      <p class="muted small">
        You get a link to send them (nothing is e-mailed). It works once, for 72 hours; with it they set their password.
      </p>
      <ErrorBox error={error} what="Could not invite" />
      <div class="actions">
        <button class="primary" type="submit" disabled={busy || !email.trim() || !name.trim()}>
          Create invitation
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function ChangeRole({ user, onClose }: { user: User; onClose: (done?: User) => void }) {
  const [role, setRole] = useState<PersonRole>(user.role);
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title={`Change the role of ${user.name}?`}
      confirmLabel="Change role"
      busy={busy || role === user.role}
      onCancel={() => onClose()}
      onConfirm={() =>
        void run(async () => onClose(await vouch.PATCH('/api/v1/users/{id}', { ...of(user), body: { role } })))
      }
    >
      <p>
        {user.name} is {user.role} now. Changing the role ends their sessions: they sign in again, with the new role.
      </p>
      <RoleSelect label="New role" value={role} onChange={setRole} />
      <ErrorBox error={error} what="Could not change the role" />
    </Confirm>
  );
}

export function SetStatus({
  user,
  deactivate,
  onClose,
}: {
  user: User;
  deactivate: boolean;
  onClose: (done?: User) => void;
}) {
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title={deactivate ? `Deactivate ${user.name}?` : `Reactivate ${user.name}?`}
      confirmLabel={deactivate ? 'Deactivate' : 'Reactivate'}
      danger={deactivate}
      busy={busy}
      onCancel={() => onClose()}
      onConfirm={() =>
        void run(async () =>
          onClose(
            deactivate
              ? await vouch.DELETE('/api/v1/users/{id}', of(user))
              : await vouch.PATCH('/api/v1/users/{id}', { ...of(user), body: { status: 'active' } }),
          ),
        )
      }
    >
      {deactivate ? (
        <p>
          {user.name} ({user.email}) is signed out everywhere at once and can no longer sign in. Their record stays, so
          the audit log keeps naming them; an admin can reactivate them later.
        </p>
      ) : (
        <p>
          {user.name} ({user.email}) can sign in again as {user.role}
          {user.status === 'invited' ? ' once they set a password from their invitation' : ''}.
        </p>
      )}
      <ErrorBox error={error} what={deactivate ? 'Could not deactivate' : 'Could not reactivate'} />
    </Confirm>
  );
}

/** An admin turns off another person's second factor (a lost device): the password alone, then they enrol again. */
export function ResetSecondFactor({ user, onClose }: { user: User; onClose: (done?: User) => void }) {
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title={`Reset the second factor of ${user.name}?`}
      confirmLabel="Reset second factor"
      danger
      busy={busy}
      onCancel={() => onClose()}
      onConfirm={() =>
        void run(async () =>
          onClose(await vouch.PATCH('/api/v1/users/{id}', { ...of(user), body: { second_factor: 'off' } })),
        )
      }
    >
      <p>
        {user.name} ({user.email}) then signs in with the password alone, and should turn a new second factor on from
        “Your account”. Do this only once you are sure who asked for it (a lost phone, say): the audit log records it
        under your name.
      </p>
      <ErrorBox error={error} what="Could not reset the second factor" />
    </Confirm>
  );
}
