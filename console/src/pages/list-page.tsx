// One list (docs/rules.md, "Lists"): its facts, the form that adds entries, adding them from a CSV file
// (desk-csv.tsx), its entries, and deleting it.
import { useState } from 'preact/hooks';
import { HeldForApproval, hasScope } from '../api.ts';
import type { Change } from '../people-types.ts';
import { Done, Empty, Link, Loader, fmtDate, fmtNumber, navigate, useLoad } from '../ui.tsx';
import { ConfirmDelete } from '../confirm-delete.tsx';
import { whoName } from './actors.ts';
import { listsApi, type RuleList } from './rules-api.ts';
import { KIND_HINT } from './lists.tsx';
import { AddEntries, Entries } from './lists-entries.tsx';
import { UploadEntries } from './desk-csv.tsx';

export function ListPage({ name }: { name: string }) {
  const state = useLoad(() => listsApi.get(name), [name]);
  const [tick, setTick] = useState(0);
  const [deleting, setDeleting] = useState(false);
  const [message, setMessage] = useState<string | Change>();
  const write = hasScope('rules:write');
  const refresh = (m: string) => {
    setMessage(m);
    setTick((t) => t + 1);
    state.reload();
  };
  return (
    <section aria-labelledby="h-list">
      <p>
        <Link to="/rules/lists">← All lists</Link>
      </p>
      {state.error?.status === 404 ? (
        <Empty>No list named “{name}” in this environment.</Empty>
      ) : (
        <Loader state={state} feature="This list">
          {(l) => (
            <>
              <div class="title-row spaced">
                <h1 id="h-list">
                  List <span class="mono">{l.name}</span>
                </h1>
                {write && (
                  <button type="button" class="danger" onClick={() => setDeleting(true)}>
                    Delete list
                  </button>
                )}
              </div>
              <dl class="facts">
                <div>
                  <dt>Kind</dt>
                  <dd>
                    {l.kind.replace('_', ' ')} <small class="muted">({KIND_HINT[l.kind] ?? l.kind})</small>
                  </dd>
                </div>
                <div>
                  <dt>Entries</dt>
                  <dd class="big" data-figure="entries">
                    {fmtNumber(l.entries)}
                  </dd>
                </div>
                <div>
                  <dt>Created</dt>
                  <dd>
                    {fmtDate(l.created_at)}
                    {l.created_by && (
                      <small class="muted" title={l.created_by}>
                        {' '}
                        by {whoName(l.created_by_actor, l.created_by)}
                      </small>
                    )}
                  </dd>
                </div>
                {l.description && (
                  <div class="wide">
                    <dt>Description</dt>
                    <dd>{l.description}</dd>
                  </div>
                )}
              </dl>
              <p class="muted">
                In a condition: <code>{`in_list("${l.name}", …)`}</code>
              </p>
              <Done outcome={message} />
              {write && <AddEntries list={l} onAdded={refresh} />}
              {write && <UploadEntries list={l} onAdded={refresh} />}
              <Entries list={l} tick={tick} onRemoved={refresh} />
              {deleting && (
                <DeleteList
                  list={l}
                  onClose={(done) => {
                    setDeleting(false);
                    if (typeof done !== 'boolean') setMessage(done);
                    else if (done) navigate('/rules/lists');
                  }}
                />
              )}
            </>
          )}
        </Loader>
      )}
    </section>
  );
}
/** `onClose`: true once deleted, the pending change when four eyes holds the deletion. */
function DeleteList({ list, onClose }: { list: RuleList; onClose: (done: boolean | Change) => void }) {
  return (
    <ConfirmDelete
      title={`Delete the list ${list.name}?`}
      confirmLabel="Delete list"
      failed="Could not delete the list"
      onCancel={() => onClose(false)}
      remove={async () => {
        try {
          await listsApi.remove(list.name);
        } catch (err) {
          if (!(err instanceof HeldForApproval)) throw err;
          return onClose(err.change);
        }
        onClose(true);
      }}
    >
      <p>
        Rules can no longer read it. A list that an active or shadow rule names cannot be deleted: retire the rule
        first.
      </p>
    </ConfirmDelete>
  );
}
