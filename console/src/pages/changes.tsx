// Pending changes (docs/api.md, "Four eyes"): with four eyes on for an area, activating a rule or a
// policy, or deleting a list, waits here until a second person approves it (and it applies at
// once) or someone rejects it. The requester may not approve their own, nor may a machine; the
// page hides Approve then and says why. Admins also set which areas four eyes holds.
import { useState } from 'preact/hooks';
import { currentSession } from '../api.ts';
import { vouch } from '../api-client.ts';
import { may } from '../permissions.ts';
import { CHANGE_KINDS, type Change, type ChangeKind } from '../people-types.ts';
import { Confirm, Empty, ErrorBox, Field, Link, Loader, changeWhat, fmtDate, useAction, useLoad } from '../ui.tsx';
import { ChangeDiff } from './change-diff.tsx';
import { FourEyesSettings } from './changes-settings.tsx';
import './people.css';

const STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
type Status = (typeof STATUSES)[number];

const KIND_NAME: Record<ChangeKind, string> = {
  rule_activation: 'Rule activation',
  policy_activation: 'Policy activation',
  list_deletion: 'List deletion',
};

/** A rule_activation either activates a rule or changes one that is active (its patch leaves the status be). */
function kindName(c: Change): string {
  const patch = (c.payload as { patch?: { status?: string } } | undefined)?.patch;
  if (c.kind === 'rule_activation' && patch && patch.status === undefined) return 'Change to an active rule';
  return KIND_NAME[c.kind] ?? c.kind;
}

/** `id`: one change (/changes/{id}, where a held request links to). */
export function ChangesPage({ id }: { id?: string }) {
  const [status, setStatus] = useState<Status | ''>('pending');
  const [kind, setKind] = useState<ChangeKind | ''>('');
  const [message, setMessage] = useState<string>();
  const one = useLoad(
    async () => (id ? vouch.GET('/api/v1/changes/{id}', { params: { path: { id } } }) : undefined),
    [id],
  );
  const list = useLoad(
    async () =>
      id
        ? undefined
        : vouch.GET('/api/v1/changes', {
            params: { query: { status: status || undefined, kind: kind || undefined, limit: 100 } },
          }),
    [id, status, kind],
  );
  const decided = (c: Change) => {
    setMessage(
      c.status === 'approved'
        ? `Approved and applied: ${changeWhat(c)}.`
        : c.status === 'rejected'
          ? `Rejected: ${changeWhat(c)} will not be applied.`
          : `This change is ${c.status}.`,
    );
    one.reload();
    list.reload();
  };
  return (
    <section aria-labelledby="h-changes">
      <h1 id="h-changes">Pending changes</h1>
      <p class="muted">
        Four eyes: where it is on, activating a rule or a policy, or deleting a list, waits here until a second person
        approves it, and applies at that moment as it was asked. A change expires after 72 hours.
      </p>
      {message && (
        <p class="ok-msg" role="status">
          {message}
        </p>
      )}
      {id ? (
        <>
          <p>
            <Link to="/changes">← All pending changes</Link>
          </p>
          {one.error?.status === 404 ? (
            <Empty>No such change in this environment.</Empty>
          ) : (
            <Loader state={one} feature="This change">
              {(c) => c && <ChangeCard change={c} onDecided={decided} />}
            </Loader>
          )}
        </>
      ) : (
        <>
          <div class="filters">
            <Field label="Status">
              <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
                {STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
                <option value="">any</option>
              </select>
            </Field>
            <Field label="Kind">
              <select name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as ChangeKind | '')}>
                <option value="">any</option>
                {CHANGE_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {KIND_NAME[k]}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <Loader state={list} feature="Pending changes">
            {(page) =>
              !page || page.data.length === 0 ? (
                <Empty>
                  {status === 'pending'
                    ? 'Nothing waits for a second person.'
                    : `No ${status ? `${status} ` : ''}changes.`}
                </Empty>
              ) : (
                <ul class="changes">
                  {page.data.map((c) => (
                    <li key={c.id}>
                      <ChangeCard change={c} onDecided={decided} />
                    </li>
                  ))}
                </ul>
              )
            }
          </Loader>
        </>
      )}
      {may('settings:read') && <FourEyesSettings />}
    </section>
  );
}

/** Why this principal sees no Approve button on a pending change, or undefined when it may approve. */
function cannotApprove(c: Change): string | undefined {
  const s = currentSession();
  if (!s) return 'Signed out.';
  if (s.kind !== 'person') return 'Only a person can approve a change; an API client cannot.';
  if (c.requested_by.id === s.actorId)
    return 'You asked for this change, so another person must approve it. You may reject it to withdraw it.';
  return undefined;
}

/** Whether this principal may decide on the change at all: the route's scope and role, and the change's own. */
const mayDecide = (c: Change): boolean =>
  may('rules:write', 'operator') && (c.kind !== 'policy_activation' || may('policy:write', 'operator'));

function ChangeCard({ change: c, onDecided }: { change: Change; onDecided: (c: Change) => void }) {
  const [deciding, setDeciding] = useState<'approve' | 'reject'>();
  const mine = c.requested_by.id === currentSession()?.actorId;
  const why = cannotApprove(c);
  const pending = c.status === 'pending';
  return (
    <article class="card change" aria-labelledby={`h-${c.id}`} data-change={c.id}>
      <div class="title-row">
        <h2 id={`h-${c.id}`}>
          {kindName(c)}: <span class="mono">{c.target}</span>
        </h2>
        <span class={`badge change-${c.status}`}>{c.status}</span>
      </div>
      <p class="meta">
        Asked by <strong>{c.requested_by.name}</strong>
        {mine ? ' (you)' : ''} on {fmtDate(c.created_at)}
        {pending ? (
          <>; it expires {fmtDate(c.expires_at)}.</>
        ) : c.decided_by ? (
          <>
            ; {c.status} by <strong>{c.decided_by.name}</strong> on {fmtDate(c.decided_at)}.
          </>
        ) : (
          '.'
        )}
        {c.note && <span class="muted"> Note: “{c.note}”</span>}
      </p>
      <ChangeDiff change={c} />
      {pending &&
        (mayDecide(c) ? (
          <div class="actions decide">
            {!why && (
              <button type="button" class="primary" onClick={() => setDeciding('approve')}>
                Approve
              </button>
            )}
            <button type="button" class="danger" onClick={() => setDeciding('reject')}>
              {mine ? 'Withdraw (reject)' : 'Reject'}
            </button>
            {why && (
              <p class="muted small why" data-testid="why-no-approve">
                {why}
              </p>
            )}
          </div>
        ) : (
          <p class="muted small">
            Deciding on it needs the operator role or above
            {currentSession()?.kind === 'client' ? ' (and a person)' : ''}.
          </p>
        ))}
      {deciding && (
        <Decide
          change={c}
          approve={deciding === 'approve'}
          onClose={(done) => {
            setDeciding(undefined);
            if (done) onDecided(done);
          }}
        />
      )}
    </article>
  );
}

function Decide({ change, approve, onClose }: { change: Change; approve: boolean; onClose: (done?: Change) => void }) {
  const [note, setNote] = useState('');
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title={approve ? `Approve ${changeWhat(change)}?` : `Reject ${changeWhat(change)}?`}
      confirmLabel={approve ? 'Approve and apply' : 'Reject'}
      danger={!approve}
      busy={busy}
      onCancel={() => onClose()}
      onConfirm={() =>
        void run(async () =>
          onClose(
            await vouch.POST(approve ? '/api/v1/changes/{id}/approve' : '/api/v1/changes/{id}/reject', {
              params: { path: { id: change.id } },
              body: note.trim() ? { note: note.trim() } : {},
            }),
          ),
        )
      }
    >
      <p>
        {approve
          ? `It applies now, as ${change.requested_by.name} asked for it, checked again as their request would have been.`
          : 'It is never applied; whoever asked may ask again.'}
      </p>
      <Field label="Note (optional)" hint="Kept with the change and in the audit log.">
        <input name="decision_note" maxLength={500} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
      </Field>
      <ErrorBox error={error} what={approve ? 'Could not approve' : 'Could not reject'} />
    </Confirm>
  );
}
