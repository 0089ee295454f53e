// Users (docs/api.md, "People"; admins): the people of this deployment with their role and status;
// invite one (the one-time link shown once, to copy and send), change a role, deactivate.
import { useState } from 'preact/hooks';
import { api, currentSession, hasScope, query, type ApiProblem } from '../api.ts';
import { PERSON_ROLES, ROLE_MAY, type Invited, type Paged, type PersonRole, type User } from '../people-types.ts';
import { Confirm, Empty, ErrorBox, Field, Loader, SecretOnce, fmtDate, toProblem, useAction, useLoad } from '../ui.tsx';
import './people.css';

const enc = encodeURIComponent;
const PAGE = 100;

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

export function UsersPage() {
  const list = useLoad(() => api<Paged<User>>('GET', `/api/v1/users${query({ limit: PAGE })}`), []);
  const [extra, setExtra] = useState<{ rows: User[]; cursor: string | null; error?: ApiProblem }>();
  const [inviting, setInviting] = useState(false);
  const [invited, setInvited] = useState<Invited>();
  const [action, setAction] = useState<{ kind: 'role' | 'deactivate' | 'reactivate'; user: User }>();
  const [message, setMessage] = useState<string>();
  const write = hasScope('users:write');
  const me = currentSession()?.actorId;
  const rows = [...(list.data?.data ?? []), ...(extra?.rows ?? [])];
  const cursor = extra ? extra.cursor : (list.data?.next_cursor ?? null);
  const refresh = () => {
    setExtra(undefined);
    list.reload();
  };
  const loadMore = async () => {
    try {
      const page = await api<Paged<User>>('GET', `/api/v1/users${query({ limit: PAGE, cursor })}`);
      setExtra({ rows: [...(extra?.rows ?? []), ...page.data], cursor: page.next_cursor });
    } catch (err) {
      setExtra({ rows: extra?.rows ?? [], cursor, error: toProblem(err) });
    }
  };
  return (
    <section aria-labelledby="h-users">
      <div class="title-row">
        <h1 id="h-users">Users</h1>
        {write && !inviting && (
          <button
            class="primary"
            type="button"
            onClick={() => {
              setInviting(true);
              setInvited(undefined);
              setMessage(undefined);
            }}
          >
            Invite a person
          </button>
        )}
      </div>
      <p class="muted">
        People sign in with their e-mail and a password they set from an invitation link, and see this environment's
        data by role. Machines use API clients and keys instead.
      </p>
      {message && (
        <p class="ok-msg" role="status">
          {message}
        </p>
      )}
      {invited && (
        <div class="invited">
          <p>
            <strong>{invited.name}</strong> ({invited.email}) is invited as {invited.role}. Send them this link: it
            works once, until {fmtDate(invited.invitation.expires_at)}, and lets them set their password.
          </p>
          <SecretOnce
            label={`Invitation link for ${invited.name}`}
            value={invited.invitation.url}
            onDone={() => setInvited(undefined)}
          />
        </div>
      )}
      {inviting && (
        <InviteForm
          onCancel={() => setInviting(false)}
          onInvited={(u) => {
            setInviting(false);
            setInvited(u);
            refresh();
          }}
        />
      )}
      <Loader state={list} feature="Users">
        {() =>
          rows.length === 0 ? (
            <Empty>No people yet. Invite one with “Invite a person”.</Empty>
          ) : (
            <>
              <div class="table-wrap">
                <table class="stack users">
                  <caption class="sr-only">The people of this deployment</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">E&#8209;mail</th>
                      <th scope="col">Role</th>
                      <th scope="col">Status</th>
                      <th scope="col">Since</th>
                      {write && <th scope="col">Actions</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((u) => (
                      <tr key={u.id} data-user={u.email}>
                        <td data-label="Name">
                          {u.name}
                          {u.id === me && <small class="muted"> (you)</small>}
                        </td>
                        <td data-label="E-mail" class="email">
                          {u.email}
                        </td>
                        <td data-label="Role">{u.role}</td>
                        <td data-label="Status">
                          <span class={`badge user-${u.status}`}>{u.status}</span>
                        </td>
                        <td data-label="Since">{fmtDate(u.created_at)}</td>
                        {write && (
                          <td data-label="" class="actions">
                            {u.id === me ? (
                              <small class="muted">your own account: another admin changes it</small>
                            ) : u.status === 'deactivated' ? (
                              <button
                                type="button"
                                aria-label={`Reactivate ${u.name}`}
                                onClick={() => setAction({ kind: 'reactivate', user: u })}
                              >
                                Reactivate
                              </button>
                            ) : (
                              <>
                                <button
                                  type="button"
                                  aria-label={`Change role of ${u.name}`}
                                  onClick={() => setAction({ kind: 'role', user: u })}
                                >
                                  Change role
                                </button>
                                <button
                                  type="button"
                                  class="danger"
                                  aria-label={`Deactivate ${u.name}`}
                                  onClick={() => setAction({ kind: 'deactivate', user: u })}
                                >
                                  Deactivate
                                </button>
                              </>
                            )}
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <ErrorBox error={extra?.error} what="Could not load more people" />
              {cursor && (
                <button type="button" onClick={loadMore}>
                  Load more
                </button>
              )}
            </>
          )
        }
      </Loader>
      {action?.kind === 'role' && (
        <ChangeRole
          user={action.user}
          onClose={(done) => {
            setAction(undefined);
            if (done) {
              setMessage(`${done.name} is now ${done.role}; their sessions ended, so they sign in again.`);
              refresh();
            }
          }}
        />
      )}
      {(action?.kind === 'deactivate' || action?.kind === 'reactivate') && (
        <SetStatus
          user={action.user}
          deactivate={action.kind === 'deactivate'}
          onClose={(done) => {
            setAction(undefined);
            if (done) {
              setMessage(
                done.status === 'deactivated'
                  ? `${done.name} is deactivated: signed out everywhere, and cannot sign in.`
                  : `${done.name} is active again.`,
              );
              refresh();
            }
          }}
        />
      )}
    </section>
  );
}

function InviteForm({ onInvited, onCancel }: { onInvited: (u: Invited) => void; onCancel: () => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<PersonRole>('viewer');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () =>
      onInvited(await api<Invited>('POST', '/api/v1/users', { email: email.trim(), name: name.trim(), role })),
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

function ChangeRole({ user, onClose }: { user: User; onClose: (done?: User) => void }) {
  const [role, setRole] = useState<PersonRole>(user.role);
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title={`Change the role of ${user.name}?`}
      confirmLabel="Change role"
      busy={busy || role === user.role}
      onCancel={() => onClose()}
      onConfirm={() =>
        void run(async () => onClose(await api<User>('PATCH', `/api/v1/users/${enc(user.id)}`, { role })))
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

function SetStatus({ user, deactivate, onClose }: { user: User; deactivate: boolean; onClose: (done?: User) => void }) {
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
              ? await api<User>('DELETE', `/api/v1/users/${enc(user.id)}`)
              : await api<User>('PATCH', `/api/v1/users/${enc(user.id)}`, { status: 'active' }),
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
