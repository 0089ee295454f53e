// The review queue's filters: a draft the operator edits, applied on submit, and what the API is asked.
import { AnyOf, DraftFilterForm, Field, type DraftFilters } from '../ui.tsx';
import type { ReviewFilters } from './reviews-api.ts';

/** "unresolved" is no status asked, the resolved rows (listed after the unresolved ones) left out. */
const STATUSES = {
  unresolved: 'Unresolved',
  open: 'Open',
  claimed: 'Claimed',
  resolved: 'Resolved',
  '': 'Any',
} as const;
type StatusChoice = keyof typeof STATUSES;
export interface Filters {
  status: StatusChoice;
  outcome: string;
  assignee: string;
  entity_id: string;
}
export const DEFAULT: Filters = { status: 'unresolved', outcome: '', assignee: '', entity_id: '' };

/** The filters as the API is asked them. */
export function apiFilters(f: Filters): ReviewFilters {
  return {
    status: f.status === 'unresolved' || f.status === '' ? undefined : f.status,
    // the form's choices are the API's outcomes (a value from an edited URL is sent as it is, and refused)
    outcome: (f.outcome || undefined) as ReviewFilters['outcome'],
    assignee: f.assignee.trim() || undefined,
    entity_id: f.entity_id.trim() || undefined,
  };
}

/** The queue's filter form. */
export function QueueFilters(props: DraftFilters<Filters>) {
  const { draft } = props;
  return (
    <DraftFilterForm label="Filter reviews" none={DEFAULT} {...props}>
      {(set) => (
        <>
          <Field label="Status">
            <select value={draft.status} onChange={set('status')}>
              {(Object.keys(STATUSES) as StatusChoice[]).map((s) => (
                <option key={s} value={s}>
                  {STATUSES[s]}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Outcome">
            <AnyOf
              value={draft.outcome}
              onChange={set('outcome')}
              choices={['review', 'hold', ['approve', 'approve (sampled)']]}
            />
          </Field>
          <Field label="Assignee">
            <input value={draft.assignee} placeholder="a client id, or me" onInput={set('assignee')} />
          </Field>
          <Field label="Entity">
            <input value={draft.entity_id} placeholder="hashed entity id" onInput={set('entity_id')} />
          </Field>
        </>
      )}
    </DraftFilterForm>
  );
}
