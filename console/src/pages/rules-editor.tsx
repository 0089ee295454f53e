// Writing a rule: its name, condition (checked as one types, the variables beside it), action,
// override/final, cap and description; "Test on the last 30 days" before saving; saving a new rule
// as a draft, or a saved one as its next version with the reason for the change.
import { useRef, useState } from 'preact/hooks';
import { ErrorBox, Field, Loading, toProblem, useAction } from '../ui.tsx';
import { HeldForApproval, type ApiProblem } from '../api.ts';
import type { Change } from '../people-types.ts';
import { OUTCOMES, rulesApi, type NewRule, type Outcome, type Rule, type RuleTestResult } from './rules-api.ts';
import { CheckStatus, Problems, VariablesPanel, capValue, insertAt, useCheck } from './rules-condition.tsx';
import { RuleTestView } from './rules-test.tsx';

const DAY_MS = 86_400_000;
export const TEST_DAYS = 30;

/** The start of the test window: the last 30 days. */
export const testSince = (now = Date.now()) => new Date(now - TEST_DAYS * DAY_MS).toISOString();

interface Draft {
  name: string;
  condition: string;
  action: Outcome | '';
  override: boolean;
  final: boolean;
  cap: string;
  description: string;
  reason: string;
}

const fromRule = (r: Rule | undefined): Draft => ({
  name: r?.name ?? '',
  condition: r?.condition ?? '',
  action: r?.action ?? '',
  override: r?.override ?? false,
  final: r?.final ?? false,
  cap: r?.cap === undefined || r.cap === null ? '' : String(r.cap),
  description: r?.description ?? '',
  reason: '',
});

/** The body the API takes: members left empty are left out (override only with approve, final only with decline). */
function toBody(d: Draft): NewRule {
  const cap = capValue(d.cap);
  return {
    name: d.name.trim(),
    condition: d.condition,
    ...(d.action ? { action: d.action } : {}),
    ...(d.action === 'approve' && d.override ? { override: true } : {}),
    ...(d.action === 'decline' && d.final ? { final: true } : {}),
    ...(cap !== undefined ? { cap } : {}),
    ...(d.description.trim() ? { description: d.description.trim() } : {}),
  };
}

export function RuleEditor({
  rule,
  onSaved,
  onHeld,
  onCancel,
}: {
  rule?: Rule;
  onSaved: (r: Rule) => void;
  /** four eyes holds the edit of an active rule: the pending change (else it shows in the form) */
  onHeld?: (c: Change) => void;
  onCancel: () => void;
}) {
  const [d, setD] = useState<Draft>(() => fromRule(rule));
  const area = useRef<HTMLTextAreaElement>(null);
  const check = useCheck(d.condition, d.cap);
  const current = JSON.stringify([d.condition, d.cap]);
  const problems = check.for === current ? (check.result?.errors ?? []) : [];
  const conditionProblems = problems.filter((p) => p.field !== 'cap');
  const capProblems = problems.filter((p) => p.field === 'cap');
  const [test, setTest] = useState<{ busy: boolean; result?: RuleTestResult; error?: ApiProblem; of?: string }>();
  const save = useAction();
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD((x) => ({ ...x, [k]: v }));
  const body = toBody(d);
  const bodyKey = JSON.stringify(body);
  const incomplete = !body.name || !body.condition.trim() || (!body.action && body.cap === undefined);

  const insert = (name: string) => {
    const next = insertAt(area.current, d.condition, name);
    set('condition', next.value);
    requestAnimationFrame(() => area.current?.setSelectionRange(next.cursor, next.cursor));
  };
  const runTest = async () => {
    setTest({ busy: true, of: bodyKey });
    try {
      setTest({ busy: false, of: bodyKey, result: await rulesApi.test(body, testSince()) });
    } catch (err) {
      setTest({ busy: false, of: bodyKey, error: toProblem(err) });
    }
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void save.run(async () => {
      // a PATCH clears with null what the form left empty (docs/api.md, "Rules and lists")
      const patch = {
        action: null,
        cap: null,
        description: null,
        override: false,
        final: false,
        ...body,
        ...(d.reason.trim() ? { reason: d.reason.trim() } : {}),
      };
      try {
        const saved = rule
          ? await rulesApi.update(rule.id, patch)
          : await rulesApi.create({ ...body, status: 'draft' });
        onSaved(saved);
      } catch (err) {
        if (!(err instanceof HeldForApproval) || !onHeld) throw err;
        onHeld(err.change);
      }
    });
  };

  return (
    <form class="panel rule-editor" onSubmit={submit} aria-labelledby="h-rule-editor">
      <h2 id="h-rule-editor" class={rule ? undefined : 'sr-only'}>
        {rule ? (
          <>
            Edit <span class="mono">{rule.name}</span>{' '}
            <small class="muted">(saving makes version {rule.version + 1})</small>
          </>
        ) : (
          'The rule'
        )}
      </h2>
      <div class="editor-grid">
        <div class="editor-main">
          <Field label="Name">
            <input
              name="name"
              required
              maxLength={120}
              value={d.name}
              placeholder="first_card_trade_over_limit"
              onInput={(e) => set('name', e.currentTarget.value)}
            />
          </Field>
          <label class="field">
            <span>Condition</span>
            <small class="muted">
              A CEL expression that is true when the rule applies, e.g.{' '}
              <code>amount_ref &gt; 2.0 &amp;&amp; entity.completed_trades == 0</code>
            </small>
            <textarea
              ref={area}
              name="condition"
              class="mono condition"
              rows={6}
              spellcheck={false}
              autoComplete="off"
              aria-invalid={conditionProblems.length > 0}
              aria-describedby="condition-errors"
              value={d.condition}
              onInput={(e) => set('condition', e.currentTarget.value)}
            />
          </label>
          <Problems id="condition-errors" problems={conditionProblems} source={d.condition} />
          {conditionProblems.length === 0 && capProblems.length === 0 && d.condition.trim() && (
            <CheckStatus state={check} current={current} />
          )}
          <div class="editor-row">
            <Field label="Action">
              <select
                name="action"
                value={d.action}
                onChange={(e) => set('action', e.currentTarget.value as Outcome | '')}
              >
                <option value="">none (cap only)</option>
                {OUTCOMES.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            </Field>
            <Field
              label="Cap (optional)"
              hint="A number or an expression, in the request's currency; it never raises the safe amount."
            >
              <input
                name="cap"
                class="mono"
                value={d.cap}
                placeholder="200 or safe_amount / 2"
                aria-invalid={capProblems.length > 0}
                onInput={(e) => set('cap', e.currentTarget.value)}
              />
            </Field>
          </div>
          <Problems id="cap-errors" problems={capProblems} source={d.cap} />
          {d.action === 'approve' && (
            <label class="inline">
              <input type="checkbox" checked={d.override} onChange={(e) => set('override', e.currentTarget.checked)} />{' '}
              Override: approve even when the policy or another rule says otherwise (a final decline still wins)
            </label>
          )}
          {d.action === 'decline' && (
            <label class="inline">
              <input type="checkbox" checked={d.final} onChange={(e) => set('final', e.currentTarget.checked)} /> Final:
              no override approve can lift this decline
            </label>
          )}
          <Field label="Description (optional)">
            <input
              name="description"
              maxLength={500}
              value={d.description}
              onInput={(e) => set('description', e.currentTarget.value)}
            />
          </Field>
          {rule && (
            <Field label="Why this change (optional)" hint="Kept with the version, beside who saved it and when.">
              <input
                name="reason"
                maxLength={500}
                value={d.reason}
                onInput={(e) => set('reason', e.currentTarget.value)}
              />
            </Field>
          )}
          {!body.action && body.cap === undefined && body.condition.trim() && (
            <p class="muted small">A rule needs an action, a cap, or both.</p>
          )}
          <ErrorBox error={save.error} what="Could not save the rule" />
          <div class="actions">
            <button type="button" disabled={incomplete || test?.busy} onClick={runTest}>
              {test?.busy ? 'Testing…' : `Test on the last ${TEST_DAYS} days`}
            </button>
            <button type="submit" class="primary" disabled={incomplete || save.busy}>
              {rule ? 'Save new version' : 'Save as draft'}
            </button>
            <button type="button" onClick={onCancel}>
              Cancel
            </button>
          </div>
        </div>
        <VariablesPanel onInsert={insert} area={area} />
      </div>
      {test && (
        <section class="test-result" aria-labelledby="h-rule-test" aria-busy={test.busy}>
          <h3 id="h-rule-test">
            Test on the last {TEST_DAYS} days
            {test.of !== bodyKey && !test.busy ? <small class="muted"> (of an earlier edit: test again)</small> : null}
          </h3>
          {test.busy ? (
            <Loading what="Replaying the rule on stored decisions" />
          ) : test.error ? (
            <ErrorBox error={test.error} what="The test failed" />
          ) : test.result ? (
            <RuleTestView r={test.result} />
          ) : null}
        </section>
      )}
    </form>
  );
}
