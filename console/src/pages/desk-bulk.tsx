// Bulk actions on the review queue: several reviews selected, then "Assign to me" (claim each) or
// "Release" (give each claim back). There is no bulk route: each review is its own request
// (POST /api/v1/reviews/{id}/claim or /release), at most 4 at a time, and each one that fails is
// listed with the service's reason (claimed by another, already resolved, …).
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api.ts';
import { fmtNumber, toProblem } from '../ui.tsx';
import { reviewsApi, reviewsChanged } from './reviews-api.ts';

/** Requests in flight at once. */
const CONCURRENCY = 4;

/** Runs `work` on every item, `limit` at a time; every item's failure is kept, none stops the others. */
async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<unknown>,
): Promise<Array<{ item: T; error: ApiProblem }>> {
  const failed: Array<{ item: T; error: ApiProblem }> = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (err) {
        failed.push({ item, error: toProblem(err) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return failed;
}

/** The selected review ids, kept to those still listed. */
export function useSelection(listed: string[]) {
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const selected = listed.filter((id) => chosen.has(id));
  const toggle = (id: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(id);
    else next.delete(id);
    setChosen(next);
  };
  const all = listed.length > 0 && selected.length === listed.length;
  return {
    selected,
    has: (id: string) => chosen.has(id),
    toggle,
    all,
    toggleAll: () => setChosen(all ? new Set() : new Set(listed)),
    set: (ids: string[]) => setChosen(new Set(ids)),
  };
}

type Selection = ReturnType<typeof useSelection>;

const ACTIONS = {
  claim: { run: reviewsApi.claim, button: 'Assign to me', done: 'assigned to you', busy: 'Assigning' },
  release: { run: reviewsApi.release, button: 'Release', done: 'released', busy: 'Releasing' },
} as const;
type Action = keyof typeof ACTIONS;

interface Outcome {
  action: Action;
  done: number;
  failed: Array<{ item: string; error: ApiProblem }>;
}

/** The bar above the queue while reviews are selected, and what the last action did. */
export function BulkBar({ selection, onDone }: { selection: Selection; onDone: () => void }) {
  const [busy, setBusy] = useState<Action>();
  const [outcome, setOutcome] = useState<Outcome>();
  const ids = selection.selected;
  const run = async (action: Action) => {
    setBusy(action);
    setOutcome(undefined);
    const failed = await eachBounded(ids, CONCURRENCY, (id) => ACTIONS[action].run(id));
    setOutcome({ action, done: ids.length - failed.length, failed });
    // the ones that failed stay selected, to try again or look at
    selection.set(failed.map((f) => f.item));
    setBusy(undefined);
    reviewsChanged();
    onDone();
  };
  return (
    <div class="bulk" aria-label="Selected reviews">
      {(ids.length > 0 || busy) && (
        <div class="actions panel" role="group" aria-label="Act on the selected reviews">
          <strong data-selected={ids.length}>{fmtNumber(ids.length)} selected</strong>
          {(Object.keys(ACTIONS) as Action[]).map((a) => (
            <button key={a} type="button" disabled={!!busy || ids.length === 0} onClick={() => void run(a)}>
              {busy === a ? `${ACTIONS[a].busy}…` : ACTIONS[a].button}
            </button>
          ))}
          <button type="button" disabled={!!busy} onClick={() => selection.set([])}>
            Clear the selection
          </button>
        </div>
      )}
      {outcome && (
        <div role="status" data-bulk-done={outcome.done} data-bulk-failed={outcome.failed.length}>
          <p class={outcome.failed.length ? 'error' : 'ok-msg'}>
            {fmtNumber(outcome.done)} {outcome.done === 1 ? 'review' : 'reviews'} {ACTIONS[outcome.action].done}
            {outcome.failed.length > 0 && `; ${fmtNumber(outcome.failed.length)} failed (still selected):`}
          </p>
          {outcome.failed.length > 0 && (
            <ul class="bulk-failures">
              {outcome.failed.map((f) => (
                <li key={f.item} data-failed={f.item}>
                  <span class="mono">{f.item}</span>: {f.error.detail}
                  {f.error.status ? ` (${f.error.status})` : ''}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
