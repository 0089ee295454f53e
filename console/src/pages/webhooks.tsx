// Webhooks: list, create (signing secret shown once), delete, and each endpoint's deliveries with retry.
import { useState } from 'preact/hooks';
import { hasScope, type ApiProblem } from '../api.ts';
import { emptyBody, vouch } from '../api-client.ts';
import type { Delivery, Webhook, WebhookEvent } from '../types.ts';
import {
  CheckboxGroup,
  Empty,
  ErrorBox,
  Field,
  Loader,
  SecretOnce,
  fmtDate,
  toProblem,
  useAction,
  useLoad,
} from '../ui.tsx';
import { ConfirmDelete } from '../confirm-delete.tsx';

const EVENTS: readonly WebhookEvent[] = [
  'decision.high_risk',
  'dispute.analyzed',
  'entity.flagged',
  'policy.activated',
  'key.deactivated',
];

/** What a delivery's last_error category means (docs/api.md, webhooks); an unknown one is shown as sent. */
const FAILURES: Record<string, string> = {
  timeout: 'timed out',
  refused: 'connection refused',
  dns: 'host name not resolved',
  tls: 'TLS failed',
  connection: 'connection failed',
};

/** The last attempt's outcome: its HTTP status code and the failure's category, when there was one. */
function lastResponse(d: Delivery): string {
  const parts: string[] = [];
  if (d.last_status_code !== null) parts.push(`HTTP ${d.last_status_code}`);
  if (d.last_error) {
    const http = /^http_(\d{3})$/.exec(d.last_error);
    if (!http) parts.push(FAILURES[d.last_error] ?? d.last_error);
    else if (Number(http[1]) !== d.last_status_code) parts.push(`HTTP ${http[1]}`);
  }
  if (parts.length > 0) return parts.join(', ');
  return d.attempts === 0 ? 'not attempted yet' : '—';
}

export function WebhooksPage() {
  const list = useLoad(() => vouch.GET('/api/v1/webhooks'), []);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<string>();
  const [removing, setRemoving] = useState<Webhook>();
  const [open, setOpen] = useState<string>();
  const write = hasScope('webhooks:write');
  return (
    <section aria-labelledby="h-webhooks">
      <div class="title-row">
        <h1 id="h-webhooks">Webhooks</h1>
        {write && !creating && (
          <button class="primary" type="button" onClick={() => setCreating(true)}>
            Create webhook
          </button>
        )}
      </div>
      {secret && (
        <SecretOnce label="Signing secret of the new webhook" value={secret} onDone={() => setSecret(undefined)} />
      )}
      {creating && (
        <CreateWebhook
          onCancel={() => setCreating(false)}
          onCreated={(s) => {
            setCreating(false);
            setSecret(s);
            list.reload();
          }}
        />
      )}
      <Loader state={list} feature="Webhooks">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>
              No webhooks yet.{' '}
              {write ? 'Create one to be told about high-risk decisions, analysed disputes and flagged entities.' : ''}
            </Empty>
          ) : (
            <div class="table-wrap">
              <table class="stack">
                <caption class="sr-only">Webhook endpoints</caption>
                <thead>
                  <tr>
                    <th scope="col">URL</th>
                    <th scope="col">Events</th>
                    <th scope="col">Description</th>
                    <th scope="col">Created</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((w) => (
                    <tr key={w.id}>
                      <td data-label="URL" class="mono url">
                        {w.url}
                      </td>
                      <td data-label="Events" class="scopes">
                        {w.events.join(' ')}
                      </td>
                      <td data-label="Description">{w.description || <span class="muted">none</span>}</td>
                      <td data-label="Created">{fmtDate(w.created_at)}</td>
                      <td data-label="" class="actions">
                        <button
                          type="button"
                          aria-expanded={open === w.id}
                          onClick={() => setOpen(open === w.id ? undefined : w.id)}
                        >
                          Deliveries
                        </button>
                        {write && (
                          <button type="button" class="danger" onClick={() => setRemoving(w)}>
                            Delete
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loader>
      {open && <Deliveries id={open} />}
      {removing && (
        <DeleteWebhook
          w={removing}
          onClose={(changed) => {
            setRemoving(undefined);
            if (changed) list.reload();
          }}
        />
      )}
    </section>
  );
}

function CreateWebhook({ onCreated, onCancel }: { onCreated: (secret: string) => void; onCancel: () => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>(['decision.high_risk']);
  const [description, setDescription] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const created = await vouch.POST('/api/v1/webhooks', {
        body: { url, events, ...(description ? { description } : {}) },
      });
      onCreated(created.secret);
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="h-create-webhook">
      <h2 id="h-create-webhook">Create a webhook</h2>
      <Field label="Endpoint URL" hint="https:// and publicly reachable.">
        <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </Field>
      <CheckboxGroup legend="Events" options={EVENTS} chosen={events} onChange={setEvents} />
      <Field label="Description (optional)">
        <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </Field>
      <ErrorBox error={error} what="Could not create the webhook" />
      <div class="actions">
        <button class="primary" type="submit" disabled={busy || events.length === 0}>
          Create
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Deliveries({ id }: { id: string }) {
  const list = useLoad(
    () => vouch.GET('/api/v1/webhooks/{webhook_id}/deliveries', { params: { path: { webhook_id: id } } }),
    [id],
  );
  const [error, setError] = useState<ApiProblem>();
  const [retried, setRetried] = useState<string>();
  const retry = async (d: Delivery) => {
    setError(undefined);
    try {
      await vouch.POST('/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', {
        params: { path: { webhook_id: id, delivery_id: d.id } },
        ...emptyBody,
      });
      setRetried(d.id);
      list.reload();
    } catch (err) {
      setError(toProblem(err));
    }
  };
  return (
    <section class="panel" aria-labelledby="h-deliveries">
      <h2 id="h-deliveries">Deliveries</h2>
      <ErrorBox error={error} what="Could not retry" />
      {retried && (
        <p class="ok-msg" role="status">
          Delivery queued for another attempt.
        </p>
      )}
      <Loader state={list} feature="Delivery history">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No deliveries yet: one is made each time a subscribed event happens.</Empty>
          ) : (
            <div class="table-wrap">
              <table class="stack">
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">
                      Attempts
                    </th>
                    <th scope="col">Last response</th>
                    <th scope="col">Next attempt</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((d) => (
                    <tr key={d.id}>
                      <td data-label="Event">
                        {d.event_type} <small class="muted">{fmtDate(d.created_at)}</small>
                      </td>
                      <td data-label="Status">
                        <span class={`badge delivery-${d.status}`}>{d.status}</span>
                      </td>
                      <td data-label="Attempts" class="num">
                        {d.attempts}
                      </td>
                      <td data-label="Last response" class="last-response" title={d.last_error ?? undefined}>
                        {lastResponse(d)}{' '}
                        {d.last_attempt_at && <small class="muted">{fmtDate(d.last_attempt_at)}</small>}
                      </td>
                      <td data-label="Next attempt">{d.status === 'pending' ? fmtDate(d.next_attempt_at) : '—'}</td>
                      <td data-label="">
                        {hasScope('webhooks:write') && (
                          <button type="button" onClick={() => retry(d)}>
                            Retry
                          </button>
                        )}
                      </td>
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

function DeleteWebhook({ w, onClose }: { w: Webhook; onClose: (changed: boolean) => void }) {
  return (
    <ConfirmDelete
      title="Delete this webhook?"
      confirmLabel="Delete"
      failed="Could not delete"
      onCancel={() => onClose(false)}
      remove={async () => {
        await vouch.DELETE('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: w.id } } });
        onClose(true);
      }}
    >
      <p>
        No further events will be sent to <span class="mono">{w.url}</span>.
      </p>
    </ConfirmDelete>
  );
}
