// The Decisions page's filter form: a draft the operator edits, applied on submit.
import { LEVELS } from '../types.ts';
import { Field, FilterForm } from '../ui.tsx';
import { OUTCOMES } from './rules-api.ts';

export interface Filters {
  kind: string;
  risk_level: string;
  outcome: string;
  label: string;
  entity_id: string;
  since: string;
  until: string;
}
export const NO_FILTERS: Filters = {
  kind: '',
  risk_level: '',
  outcome: '',
  label: '',
  entity_id: '',
  since: '',
  until: '',
};

export function DecisionFilters({
  draft,
  setDraft,
  apply,
}: {
  draft: Filters;
  setDraft: (draft: Filters) => void;
  apply: (filters: Filters) => void;
}) {
  const set = (k: keyof Filters) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setDraft({ ...draft, [k]: e.currentTarget.value });
  return (
    <FilterForm
      label="Filter decisions"
      onApply={() => apply(draft)}
      onClear={() => {
        setDraft(NO_FILTERS);
        apply(NO_FILTERS);
      }}
    >
      <Field label="Kind">
        <select value={draft.kind} onChange={set('kind')}>
          <option value="">Any</option>
          <option value="score">Score</option>
          <option value="dispute">Dispute analysis</option>
        </select>
      </Field>
      <Field label="Risk level">
        <select value={draft.risk_level} onChange={set('risk_level')}>
          <option value="">Any</option>
          {LEVELS.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Outcome">
        <select value={draft.outcome} onChange={set('outcome')}>
          <option value="">Any</option>
          {OUTCOMES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Label">
        <select value={draft.label} onChange={set('label')}>
          <option value="">Any</option>
          <option value="fraud">Fraud</option>
          <option value="legit">Legit</option>
          <option value="none">Unlabelled</option>
        </select>
      </Field>
      <Field label="Entity">
        <input value={draft.entity_id} placeholder="hashed entity id" onInput={set('entity_id')} />
      </Field>
      <Field label="Since">
        <input type="datetime-local" value={draft.since} onInput={set('since')} />
      </Field>
      <Field label="Until">
        <input type="datetime-local" value={draft.until} onInput={set('until')} />
      </Field>
    </FilterForm>
  );
}
