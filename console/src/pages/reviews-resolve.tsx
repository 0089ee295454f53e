// A review's verdict: approve or decline, the label it gives the decision (by default: decline →
// fraud; approve → legit only once the trade completes cleanly), a note, and optionally the entity
// added to an entity list. Approve and Decline, by button or by the A and D keys, only open a
// confirmation saying what the verdict will do; Enter or its button confirms, Escape goes back (a
// verdict labels the decision and may list the entity: one stray key must not do that). L moves to
// the list. A resolved review's verdict: Resolved.
import type { RefObject } from 'preact';
import { hasScope, type ApiProblem } from '../api.ts';
import { Confirm, ErrorBox, Field, fmtDate, useLoad } from '../ui.tsx';
import { listsApi } from './rules-api.ts';
import type { Review } from './reviews-api.ts';
import { ReviewStatus, claimant } from './reviews-parts.tsx';

export interface Verdict {
  label: '' | 'fraud' | 'legit';
  note: string;
  list: string;
}
export const NO_VERDICT: Verdict = { label: '', note: '', list: '' };

export function ResolveForm({
  verdict,
  onChange,
  onResolve,
  busy,
  disabled,
  listRef,
}: {
  verdict: Verdict;
  onChange: (v: Verdict) => void;
  onResolve: (resolution: 'approve' | 'decline') => void;
  busy: boolean;
  /** why resolving is not possible now (claimed by another), or undefined */
  disabled?: string;
  listRef: RefObject<HTMLSelectElement>;
}) {
  const lists = useLoad(
    async () => (hasScope('rules:read') ? (await listsApi.list()).data.filter((l) => l.kind === 'entity') : []),
    [],
  );
  const set =
    (k: keyof Verdict) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement }) =>
      onChange({ ...verdict, [k]: e.currentTarget.value });
  return (
    <form class="resolve-form panel" aria-labelledby="h-resolve" onSubmit={(e) => e.preventDefault()}>
      <h2 id="h-resolve">Resolve</h2>
      <Field
        label="Label"
        hint={
          verdict.label
            ? undefined
            : 'Decline labels the decision fraud; approve labels it legit once its trade completes cleanly.'
        }
      >
        <select name="label" value={verdict.label} onChange={set('label')}>
          <option value="">from the verdict</option>
          <option value="fraud">fraud</option>
          <option value="legit">legit</option>
        </select>
      </Field>
      <Field label="Note (optional)">
        <textarea
          name="note"
          rows={3}
          maxLength={500}
          value={verdict.note}
          placeholder="what decided it, for whoever reads this later"
          onInput={set('note')}
        />
      </Field>
      <Field
        label="Add the entity to a list (optional)"
        hint={
          lists.data && lists.data.length === 0
            ? hasScope('rules:read')
              ? 'No entity list exists yet: create one on the Rules page.'
              : 'Naming lists needs rules:read.'
            : undefined
        }
      >
        <select
          name="add_to_list"
          ref={listRef}
          value={verdict.list}
          onChange={set('list')}
          disabled={!lists.data?.length}
        >
          <option value="">none</option>
          {(lists.data ?? []).map((l) => (
            <option key={l.name} value={l.name}>
              {l.name}
            </option>
          ))}
        </select>
      </Field>
      {disabled && (
        <p class="note" role="note">
          {disabled}
        </p>
      )}
      <div class="actions verdicts">
        <button
          type="button"
          class="ok"
          disabled={busy || !!disabled}
          onClick={() => onResolve('approve')}
          aria-keyshortcuts="a"
        >
          Approve <kbd>A</kbd>
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy || !!disabled}
          onClick={() => onResolve('decline')}
          aria-keyshortcuts="d"
        >
          Decline <kbd>D</kbd>
        </button>
      </div>
    </form>
  );
}

/** What the verdict will do, asked before it is sent (POST /api/v1/reviews/{id}/resolve). */
export function ResolveConfirm({
  resolution,
  verdict,
  busy,
  error,
  onConfirm,
  onCancel,
}: {
  resolution: 'approve' | 'decline';
  verdict: Verdict;
  busy: boolean;
  error: ApiProblem | undefined;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const decline = resolution === 'decline';
  const label = verdict.label || (decline ? 'fraud' : '');
  const note = verdict.note.trim();
  return (
    <Confirm
      title={decline ? 'Decline this trade?' : 'Approve this trade?'}
      confirmLabel={decline ? 'Decline' : 'Approve'}
      danger={decline}
      busy={busy}
      focusConfirm
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <ul class="verdict-effects">
        <li>
          {label ? (
            <>
              The decision is labelled <span class={`badge label-${label}`}>{label}</span>
              {verdict.label ? '' : ', a decline’s default'} (unless an API or event label already holds it).
            </>
          ) : (
            'No label now: the decision counts as legit once its trade completes cleanly.'
          )}
        </li>
        {verdict.list && (
          <li>
            The entity is added to the list <span class="mono">{verdict.list}</span>, which rules read from the next
            score on.
          </li>
        )}
        {note && <li class="label-note">“{note}”</li>}
        <li>A resolved review cannot be reopened.</li>
      </ul>
      <p class="muted small">
        <kbd>Enter</kbd> {decline ? 'declines' : 'approves'}, <kbd>Esc</kbd> goes back to the review.
      </p>
      <ErrorBox error={error} what="The review could not be resolved" />
    </Confirm>
  );
}

export function Resolved({ r }: { r: Review }) {
  return (
    <div class="panel resolved" role="status">
      <h2>Resolved</h2>
      <p>
        <ReviewStatus r={r} /> by{' '}
        <span title={r.resolved_by ?? undefined}>{r.resolved_by_actor?.name ?? claimant(r)}</span>,{' '}
        {fmtDate(r.resolved_at)}
      </p>
      {r.note && <p class="label-note">“{r.note}”</p>}
      {r.added_to_list && (
        <p>
          The entity was added to the list <span class="mono">{r.added_to_list}</span>.
        </p>
      )}
    </div>
  );
}
