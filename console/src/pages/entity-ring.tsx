// An entity's ring (GET /api/v1/trust/entities/{id}/graph, role operator or admin): the accounts
// linked to it through shared identifiers, drawn with Cytoscape.js in layers by distance (the
// entity in the middle), flagged accounts marked, hubs as satellites of the entity (listed, never
// followed). Every account is a link to its own page, in the drawing and in the table beside it.
// The drawing is in entity-ring-drawing.tsx.
import { useState } from 'preact/hooks';
import { vouch } from '../api-client.ts';
import { Empty, Link, Loader, fmtNumber, useLoad } from '../ui.tsx';
import { RingDrawing, short } from './entity-ring-drawing.tsx';

const FLAG_WORDS: Record<string, string> = {
  fraud_reported: 'fraud report',
  blocklisted: 'blocklisted',
  chargeback: 'chargeback',
  dispute_lost: 'lost dispute',
};

export function EntityRing({ id }: { id: string }) {
  const [depth, setDepth] = useState(2);
  const state = useLoad(
    () =>
      vouch.GET('/api/v1/trust/entities/{entity_id}/graph', { params: { path: { entity_id: id }, query: { depth } } }),
    [id, depth],
  );
  if (state.error?.status === 403) return <Empty>Rings are shown to operator and admin principals only.</Empty>;
  // 404: no event about this entity yet (docs/api.md, "Rings"), e.g. a first trade under review:
  // nothing links it to anyone, which is a fact about the entity, not a failure
  if (state.error?.status === 404)
    return (
      <Empty>
        No history for this entity yet: no event about it was recorded, so nothing links it to another account.
      </Empty>
    );
  return (
    <Loader state={state} feature="The ring">
      {(g) => (
        <>
          <div class="row">
            <label>
              Hops{' '}
              <select value={depth} onChange={(e) => setDepth(Number(e.currentTarget.value))}>
                {[1, 2, 3].map((d) => (
                  <option key={d} value={d}>
                    {d}
                  </option>
                ))}
              </select>
            </label>
            {g.truncated && <span class="muted">More accounts are linked than shown (at most 200).</span>}
          </div>
          {g.nodes.length <= 1 && g.hubs.length === 0 ? (
            <Empty>No other account shares an identifier with this one.</Empty>
          ) : (
            <>
              <RingDrawing graph={g} />
              <div class="table-wrap">
                <table class="ring">
                  <thead>
                    <tr>
                      <th scope="col">Account</th>
                      <th scope="col" class="num">
                        Hops
                      </th>
                      <th scope="col">Flagged</th>
                    </tr>
                  </thead>
                  <tbody>
                    {g.nodes
                      .filter((n) => n.distance > 0)
                      .map((n) => (
                        <tr key={n.entity_id}>
                          <td class="mono trunc">
                            {n.redacted ? (
                              <span class="muted" title="Another client's account: its id is withheld">
                                {n.entity_id}
                              </span>
                            ) : (
                              <Link to={`/entities/${encodeURIComponent(n.entity_id)}`} title={n.entity_id}>
                                {short(n.entity_id)}
                              </Link>
                            )}
                          </td>
                          <td class="num">{n.distance}</td>
                          <td>
                            {n.flagged ? (
                              <span class="badge level-critical">
                                {n.flags.map((f) => FLAG_WORDS[f] ?? f).join(', ')}
                              </span>
                            ) : (
                              '—'
                            )}
                          </td>
                        </tr>
                      ))}
                  </tbody>
                </table>
              </div>
              {g.hubs.length > 0 && (
                <p class="muted">
                  Hubs, not followed:{' '}
                  {g.hubs.map((h) => `${h.type} shared by ${fmtNumber(h.entities)} accounts`).join('; ')}.
                </p>
              )}
            </>
          )}
        </>
      )}
    </Loader>
  );
}
