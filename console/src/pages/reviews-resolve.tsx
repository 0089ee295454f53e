// A review's verdict: approve or decline, the label it gives the decision (by default: decline →
// fraud; approve → legit only once the trade completes cleanly), a note, and optionally the entity
// added to an entity list. A and D resolve from the keyboard with what the form holds; L moves to
// the list.
import type { RefObject } from 'preact';
import { hasScope } from '../api.ts';
import { Field, useLoad } from '../ui.tsx';
import { listsApi } from './rules-api.ts';

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
