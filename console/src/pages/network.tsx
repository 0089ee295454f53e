// The Vouch Network (docs/network.md): this deployment's identity, what it publishes, and each
// peer's state, last sync, flags pulled and matched, and budget used in the last 24 hours; sync now, suspend or
// activate a peer. Admins only (scope network:admin).
import { useState } from 'preact/hooks';
import { type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { NetworkPeerStatus, NetworkSync } from '../types.ts';
import { Empty, ErrorBox, Loader, fmtDate, fmtNumber, toProblem, useLoad } from '../ui.tsx';

/** "1,234 / 10,000" and the share, for the budget column. */
function Budget({ p }: { p: NetworkPeerStatus }) {
  const share = p.budget_per_day > 0 ? p.evaluations_today / p.budget_per_day : 0;
  return (
    <span title="evaluations this peer asked of this deployment in the last 24 hours, of its budget for any 24 hours">
      {fmtNumber(p.evaluations_today)} / {fmtNumber(p.budget_per_day)}
      {share >= 0.8 && (
        <>
          {' '}
          <span class="badge level-high">{share >= 1 ? 'exhausted' : 'nearly used'}</span>
        </>
      )}
    </span>
  );
}

function LastSync({ p, result }: { p: NetworkPeerStatus; result?: NetworkSync['peers'][number] }) {
  const error = result ? result.error : p.last_error;
  return (
    <>
      {p.last_sync_at ? fmtDate(p.last_sync_at) : <span class="muted">never</span>}
      {error && (
        <div class="net-error" title={error}>
          last attempt failed: {error}
        </div>
      )}
    </>
  );
}

export function NetworkPage() {
  const status = useLoad(() => vouch.GET('/api/v1/network/status'), []);
  const [syncing, setSyncing] = useState(false);
  const [synced, setSynced] = useState<NetworkSync>();
  const [changing, setChanging] = useState<string>();
  const [error, setError] = useState<ApiProblem>();
  const sync = async () => {
    setSyncing(true);
    setError(undefined);
    try {
      setSynced(await vouch.POST('/api/v1/network/sync'));
      status.reload();
    } catch (err) {
      setError(toProblem(err));
    } finally {
      setSyncing(false);
    }
  };
  const setPeerStatus = async (p: NetworkPeerStatus, next: 'active' | 'suspended') => {
    setChanging(p.id);
    setError(undefined);
    try {
      await vouch.PATCH('/api/v1/network/peers/{peer_id}', {
        params: { path: { peer_id: p.id } },
        body: { status: next },
      });
      status.reload();
    } catch (err) {
      setError(toProblem(err));
    } finally {
      setChanging(undefined);
    }
  };
  return (
    <section aria-labelledby="h-network">
      <div class="title-row">
        <h1 id="h-network">Network</h1>
        <button class="primary" type="button" disabled={syncing} onClick={() => void sync()}>
          {syncing ? 'Syncing…' : 'Sync now'}
        </button>
      </div>
      <p class="muted">
        Other marketplaces' Vouch deployments. Each learns only whether an identifier it already holds was flagged here,
        and this deployment the same of theirs; scores read what the last sync stored and never wait on a peer.
      </p>
      <ErrorBox error={error} what="The network request failed" />
      <Loader state={status} feature="The network">
        {(s) => (
          <>
            <dl class="facts">
              <div>
                <dt>This deployment</dt>
                <dd>{s.name}</dd>
              </div>
              <div>
                <dt>Flags published</dt>
                <dd class="big">{fmtNumber(s.published)}</dd>
              </div>
              <div>
                <dt>Peers</dt>
                <dd class="big">{fmtNumber(s.peers.length)}</dd>
              </div>
              <div>
                <dt>Flags matched</dt>
                <dd class="big">{fmtNumber(s.peers.reduce((n, p) => n + p.matched, 0))}</dd>
              </div>
              <div class="wide">
                <dt>Signing key (peers pin it)</dt>
                <dd class="mono trunc" title={s.signing_key}>
                  {s.signing_key}
                </dd>
              </div>
            </dl>
            {s.peers.length === 0 ? (
              <Empty>
                No peers: the network is off, and nothing is sent or answered. Add one with{' '}
                <span class="mono">vouch network peers add</span> or{' '}
                <span class="mono">POST /api/v1/network/peers</span>.
              </Empty>
            ) : (
              <div class="table-wrap">
                <table class="stack">
                  <caption class="sr-only">Peers, oldest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Peer</th>
                      <th scope="col">Status</th>
                      <th scope="col">Weight</th>
                      <th scope="col">Last sync</th>
                      <th scope="col">Flags pulled</th>
                      <th scope="col">Identifiers resolved</th>
                      <th scope="col">Matched</th>
                      <th scope="col">Budget, 24 h</th>
                      <th scope="col">Shown to it</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {s.peers.map((p) => (
                      <tr key={p.id}>
                        <td data-label="Peer">
                          <strong>{p.name}</strong>
                          <div class="mono trunc muted" title={p.url}>
                            {p.url}
                          </div>
                        </td>
                        <td data-label="Status">
                          <span class={`badge status-${p.status === 'active' ? 'active' : 'inactive'}`}>
                            {p.status}
                          </span>
                        </td>
                        <td data-label="Weight">{fmtNumber(p.weight)}</td>
                        <td data-label="Last sync">
                          <LastSync p={p} result={synced?.peers.find((r) => r.id === p.id)} />
                        </td>
                        <td data-label="Flags pulled">{fmtNumber(p.flags_held)}</td>
                        <td data-label="Identifiers resolved">{fmtNumber(p.identifiers_resolved)}</td>
                        <td data-label="Matched">{fmtNumber(p.matched)}</td>
                        <td data-label="Budget, 24 h">
                          <Budget p={p} />
                        </td>
                        <td data-label="Shown to it" class="scopes">
                          {p.publish.map((k) => k.replace(/_/g, ' ')).join(', ') || 'nothing'}
                        </td>
                        <td data-label="" class="actions">
                          {p.status === 'active' ? (
                            <button
                              type="button"
                              class="danger"
                              disabled={changing === p.id}
                              onClick={() => void setPeerStatus(p, 'suspended')}
                            >
                              Suspend
                            </button>
                          ) : (
                            <button
                              type="button"
                              disabled={changing === p.id}
                              onClick={() => void setPeerStatus(p, 'active')}
                            >
                              Activate
                            </button>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
      </Loader>
    </section>
  );
}
