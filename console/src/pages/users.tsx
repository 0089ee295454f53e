// Users (docs/api.md, "People"; admins): the people of this deployment with their role and status;
// invite one (the one-time link shown once, to copy and send), change a role, deactivate.
import { useState } from 'preact/hooks';
import { currentSession, hasScope, type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { Invited, User } from '../people-types.ts';
import { Empty, ErrorBox, Loader, SecretOnce, fmtDate, toProblem, useLoad } from '../ui.tsx';
import { ChangeRole, InviteForm, ResetSecondFactor, SetStatus } from './users-dialogs.tsx';
import './people.css';

const PAGE = 100;

export function UsersPage() {
  const list = useLoad(() => vouch.GET('/api/v1/users', { params: { query: { limit: PAGE } } }), []);
  const [extra, setExtra] = useState<{ rows: User[]; cursor: string | null; error?: ApiProblem }>();
  const [inviting, setInviting] = useState(false);
  const [invited, setInvited] = useState<Invited>();
  const [action, setAction] = useState<{ kind: 'role' | 'deactivate' | 'reactivate' | 'second-factor'; user: User }>();
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
      const page = await vouch.GET('/api/v1/users', {
        params: { query: { limit: PAGE, cursor: cursor ?? undefined } },
      });
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
                          {u.second_factor && (
                            <>
                              {' '}
                              <span class="badge second-factor" title="Signs in with a second factor (TOTP)">
                                2FA
                              </span>
                            </>
                          )}
                        </td>
                        <td data-label="Since">
                          {fmtDate(u.created_at)}
                          {u.invited_by && <small class="muted by"> invited by {u.invited_by.name}</small>}
                        </td>
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
                                {u.second_factor && (
                                  <button
                                    type="button"
                                    aria-label={`Reset second factor of ${u.name}`}
                                    onClick={() => setAction({ kind: 'second-factor', user: u })}
                                  >
                                    Reset second factor
                                  </button>
                                )}
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
      {action?.kind === 'second-factor' && (
        <ResetSecondFactor
          user={action.user}
          onClose={(done) => {
            setAction(undefined);
            if (done) {
              setMessage(
                `${done.name}'s second factor is off: they sign in with their password, then turn it on again.`,
              );
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
