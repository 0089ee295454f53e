// Entities: look up a hashed id; its aggregates, linked identifiers, event timeline, and the decisions made about it.
import { useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import { may } from '../permissions.ts';
import { Empty, Field, Loader, fmtDate, fmtMoney, fmtNumber, navigate, useLoad } from '../ui.tsx';
import { DecisionTable, useDecisionList } from './decisions.tsx';
import { EntityTimeline } from './entity-timeline.tsx';
import { EntityRing } from './entity-ring.tsx';

export function EntitiesPage({ id }: { id: string }) {
  const [draft, setDraft] = useState(id);
  return (
    <section aria-labelledby="h-entities">
      <h1 id="h-entities">Entities</h1>
      <form
        class="row open-by-id"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          if (draft.trim()) navigate(`/entities/${encodeURIComponent(draft.trim())}`);
        }}
      >
        <Field label="Entity ID" hint="The hashed identifier your marketplace sends as entity_id.">
          <input value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </Field>
        <button class="primary" type="submit">
          Look up
        </button>
      </form>
      {id ? <EntityView id={id} /> : <Empty>Enter an entity's hashed id to see its history.</Empty>}
    </section>
  );
}

function EntityView({ id }: { id: string }) {
  const state = useLoad(
    () => vouch.GET('/api/v1/trust/entities/{entity_id}', { params: { path: { entity_id: id } } }),
    [id],
  );
  if (state.error?.status === 404)
    return (
      <Empty>
        No events were ever recorded for this entity. Check the id, or send its history to POST /api/v1/trust/events.
      </Empty>
    );
  return (
    <Loader state={state} feature="Entity lookup">
      {(e) => (
        <>
          <h2>Aggregates {e.blocklisted && <span class="badge level-critical">blocklisted</span>}</h2>
          <dl class="facts">
            <div>
              <dt>First seen</dt>
              <dd>{fmtDate(e.first_seen_at)}</dd>
            </div>
            <div>
              <dt>Last event</dt>
              <dd>{fmtDate(e.last_event_at)}</dd>
            </div>
            <div>
              <dt>Trades completed</dt>
              <dd>{fmtNumber(e.trades_completed)}</dd>
            </div>
            <div>
              <dt>Trades cancelled</dt>
              <dd>{fmtNumber(e.trades_cancelled)}</dd>
            </div>
            <div>
              <dt>Disputes opened</dt>
              <dd>{fmtNumber(e.disputes_opened)}</dd>
            </div>
            <div>
              <dt>Disputes won / lost</dt>
              <dd>
                {fmtNumber(e.disputes_won)} / {fmtNumber(e.disputes_lost)}
              </dd>
            </div>
            <div>
              <dt>Chargebacks</dt>
              <dd>{fmtNumber(e.chargebacks)}</dd>
            </div>
            <div>
              <dt>Fraud reports</dt>
              <dd>{fmtNumber(e.fraud_reports)}</dd>
            </div>
            <div>
              <dt>Volume completed</dt>
              <dd>
                {Object.keys(e.volume_completed).length
                  ? Object.entries(e.volume_completed).map(([c, v]) => <div key={c}>{fmtMoney(v, c)}</div>)
                  : '—'}
              </dd>
            </div>
          </dl>
          <h2>Linked identifiers</h2>
          {e.linked_identifiers.length === 0 ? (
            <Empty>
              No identifiers linked. They arrive with identifier.linked events or a score's context.linked_identifiers.
            </Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Type</th>
                    <th scope="col">Hash</th>
                    <th scope="col" class="num">
                      Entities sharing it
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {e.linked_identifiers.map((l) => (
                    <tr key={l.type + l.hash}>
                      <td>{l.type}</td>
                      <td class="mono trunc" title={l.hash}>
                        {l.hash}
                      </td>
                      <td class="num">{fmtNumber(l.entities)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {may('trust:read', 'operator') && (
            <>
              <h2>Ring</h2>
              <EntityRing id={id} />
            </>
          )}
          <h2>Timeline</h2>
          <EntityTimeline id={id} />
          {hasScope('audit:read') && (
            <>
              <h2>Decisions</h2>
              <EntityDecisions id={id} />
            </>
          )}
        </>
      )}
    </Loader>
  );
}

function EntityDecisions({ id }: { id: string }) {
  const list = useDecisionList({ entity_id: id });
  return (
    <DecisionTable
      list={list}
      feature="The decision list"
      empty="No decisions were made about this entity by this client."
    />
  );
}
