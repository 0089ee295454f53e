// The Decisions page's filter form: a draft the operator edits, applied on submit.
import { LEVELS } from '../types.ts';
import { AnyOf, DraftFilterForm, Field, type DraftFilters } from '../ui.tsx';
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

export function DecisionFilters(props: DraftFilters<Filters>) {
  const { draft } = props;
  return (
    <DraftFilterForm label="Filter decisions" none={NO_FILTERS} {...props}>
      {(set) => (
        <>
          <Field label="Kind">
            <AnyOf
              value={draft.kind}
              onChange={set('kind')}
              choices={[
                ['score', 'Score'],
                ['dispute', 'Dispute analysis'],
              ]}
            />
          </Field>
          <Field label="Risk level">
            <AnyOf value={draft.risk_level} onChange={set('risk_level')} choices={LEVELS} />
          </Field>
          <Field label="Outcome">
            <AnyOf value={draft.outcome} onChange={set('outcome')} choices={OUTCOMES} />
          </Field>
          <Field label="Label">
            <AnyOf
              value={draft.label}
              onChange={set('label')}
              choices={[
                ['fraud', 'Fraud'],
                ['legit', 'Legit'],
                ['none', 'Unlabelled'],
              ]}
            />
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
        </>
      )}
    </DraftFilterForm>
  );
}
