// A rule's lifecycle: draft → shadow (evaluated on every score, stored beside the outcome, changing
// nothing) → active (it decides), and retire. Activating and retiring ask first.
import { useState } from 'preact/hooks';
import { HeldForApproval, hasScope } from '../api.ts';
import type { Change } from '../people-types.ts';
import { Confirm, ErrorBox, Field, useAction } from '../ui.tsx';
import { rulesApi, type Rule, type RuleStatus } from './rules-api.ts';

type Step = { to: RuleStatus | 'retired'; label: string };

/** The steps a rule in `status` can take, in the order the buttons show them. */
function nextSteps(status: RuleStatus): Step[] {
  if (status === 'draft')
    return [
      { to: 'shadow', label: 'Start shadow' },
      { to: 'retired', label: 'Retire' },
    ];
  if (status === 'shadow')
    return [
      { to: 'active', label: 'Activate' },
      { to: 'retired', label: 'Retire' },
    ];
  if (status === 'active')
    return [
      { to: 'shadow', label: 'Back to shadow' },
      { to: 'retired', label: 'Retire' },
    ];
  return [];
}

const WHAT: Record<string, string> = {
  shadow:
    'It will be evaluated on every score from the next one on, and its matches stored on the decisions as shadow rules, without changing any outcome or limit.',
  active: 'From the next score on, on every instance, its action and cap apply to every decision it matches.',
  retired:
    'It stops being evaluated from the next score on. Its versions stay readable, and decisions keep naming the version they used.',
};

/**
 * The lifecycle buttons of one rule; nothing for a principal without rules:write. `onChanged` gets
 * what happened, or the pending change when four eyes holds an activation.
 */
export function Lifecycle({ rule, onChanged }: { rule: Rule; onChanged: (outcome: string | Change) => void }) {
  const [step, setStep] = useState<Step>();
  const [reason, setReason] = useState('');
  // settled: these buttons stay on screen after a change, for the next one
  const { busy, error, run } = useAction({ settle: true });
  if (!hasScope('rules:write')) return null;
  const steps = nextSteps(rule.status);
  const act = (s: Step) =>
    run(async () => {
      const why = reason.trim() || undefined;
      let held: Change | undefined;
      try {
        if (s.to === 'retired') await rulesApi.retire(rule.id, why);
        else await rulesApi.update(rule.id, { status: s.to, ...(why ? { reason: why } : {}) });
      } catch (err) {
        if (!(err instanceof HeldForApproval)) throw err;
        held = err.change;
      }
      setReason('');
      setStep(undefined);
      onChanged(held ?? (s.to === 'retired' ? `Rule ${rule.name} retired.` : `Rule ${rule.name} is now ${s.to}.`));
    });
  return (
    <>
      {steps.map((s) => (
        <button
          key={s.to}
          type="button"
          class={s.to === 'retired' ? 'danger' : s.to === 'active' ? 'primary' : undefined}
          aria-label={`${s.label}: ${rule.name}`}
          onClick={() => setStep(s)}
        >
          {s.label}
        </button>
      ))}
      {step && (
        <Confirm
          title={step.to === 'retired' ? `Retire ${rule.name}?` : `${step.label}: ${rule.name}?`}
          confirmLabel={step.label}
          danger={step.to === 'retired'}
          busy={busy}
          onCancel={() => {
            setStep(undefined);
            setReason('');
          }}
          onConfirm={() => void act(step)}
        >
          <p>{WHAT[step.to]}</p>
          <Field label="Why (optional)" hint="Kept with the rule's versions, beside who changed it and when.">
            <input
              name="lifecycle_reason"
              maxLength={1000}
              value={reason}
              onInput={(e) => setReason(e.currentTarget.value)}
            />
          </Field>
          <ErrorBox error={error} what="The change was refused" />
        </Confirm>
      )}
    </>
  );
}
