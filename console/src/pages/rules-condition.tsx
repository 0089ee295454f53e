// A rule's condition as one types it: checked by the server (POST /api/v1/rules/check, the same
// type-check a save runs) a moment after the last key, its problems shown under the field with their
// line and column; beside it the variables a condition may read, each inserted at the cursor on a click.
import type { RefObject } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Loader, fmtNumber, useLoad } from '../ui.tsx';
import { rulesApi, showValue, type FieldProblem, type RuleCheck, type RuleVariable } from './rules-api.ts';

/** How long after the last key the condition is checked. */
const CHECK_AFTER_MS = 300;

export interface CheckState {
  /** the condition and cap the answer is about */
  for: string;
  busy: boolean;
  result?: RuleCheck;
  /** the check itself failed (network, 5xx): nothing is known about the condition */
  failed?: string;
}

/** The cap as the API takes it: a number when it reads as one, else an expression; undefined when empty. */
export function capValue(cap: string): number | string | undefined {
  const t = cap.trim();
  if (!t) return undefined;
  return /^\d+(\.\d+)?$/.test(t) ? Number(t) : t;
}

/** Checks condition and cap against the server as they change, the newest answer winning. */
export function useCheck(condition: string, cap: string): CheckState {
  const key = JSON.stringify([condition, cap]);
  const [state, setState] = useState<CheckState>({ for: '', busy: false });
  const seq = useRef(0);
  useEffect(() => {
    if (!condition.trim()) {
      setState({ for: key, busy: false });
      return;
    }
    const id = ++seq.current;
    setState((s) => ({ ...s, busy: true }));
    const timer = setTimeout(() => {
      rulesApi.check(condition, capValue(cap)).then(
        (result) => id === seq.current && setState({ for: key, busy: false, result }),
        (err: unknown) => {
          if (id !== seq.current) return;
          // a 400 with errors is an answer about the condition, not a failed check
          const problem = err as { status?: number; errors?: FieldProblem[]; detail?: string };
          if (problem.status === 400 && problem.errors?.length)
            setState({ for: key, busy: false, result: { valid: false, errors: problem.errors } });
          else setState({ for: key, busy: false, failed: problem.detail ?? String(err) });
        },
      );
    }, CHECK_AFTER_MS);
    return () => clearTimeout(timer);
  }, [key]);
  return state;
}

/** Line and column of a problem: its own fields, or as its message names them ("1:7", "line 1, column 7"). */
function position(p: FieldProblem): { line: number; column: number } | undefined {
  if (typeof p.line === 'number' && typeof p.column === 'number') return { line: p.line, column: p.column };
  const m = /line (\d+),? column (\d+)/i.exec(p.message) ?? /(?:^|\D)(\d+):(\d+)(?:\D|$)/.exec(p.message);
  return m ? { line: Number(m[1]), column: Number(m[2]) } : undefined;
}

/** The message without the position it starts with, shown beside it already. */
const withoutPosition = (m: string) => m.replace(/^(line \d+,? column \d+|\d+:\d+):\s*/i, '');

/** A field's problems, each with its position and the line it points into. */
export function Problems({ id, problems, source }: { id: string; problems: FieldProblem[]; source: string }) {
  if (problems.length === 0) return null;
  const lines = source.split('\n');
  return (
    <ul class="check-errors" id={id} role="alert">
      {problems.map((p, i) => {
        const at = position(p);
        const line = at ? lines[at.line - 1] : undefined;
        return (
          <li key={i}>
            {at && (
              <strong
                class="mono at"
                title={`line ${at.line}, column ${at.column}`}
              >{`${at.line}:${at.column}`}</strong>
            )}{' '}
            {p.field !== 'condition' && p.field !== 'cap' && <code>{p.field}</code>} {withoutPosition(p.message)}
            {line !== undefined && at && (
              <pre class="caret" aria-hidden="true">{`${line}\n${' '.repeat(Math.max(0, at.column - 1))}^`}</pre>
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** What the check says when the condition is fine, or is being checked. */
export function CheckStatus({ state, current }: { state: CheckState; current: string }) {
  if (state.failed)
    return (
      <p class="check-status muted" role="status">
        Could not check the condition: {state.failed}
      </p>
    );
  if (state.busy || state.for !== current)
    return (
      <p class="check-status muted" role="status" aria-live="polite">
        Checking…
      </p>
    );
  if (!state.result) return null;
  if (!state.result.valid) return null;
  const reads = state.result.reads ?? [];
  return (
    <p class="check-status ok" role="status" aria-live="polite">
      ✓ The condition checks
      {reads.length > 0 ? (
        <>
          : it reads{' '}
          {reads.map((r, i) => (
            <span key={r}>
              {i > 0 ? ', ' : ''}
              <code>{r}</code>
            </span>
          ))}
        </>
      ) : (
        ''
      )}
      .
    </p>
  );
}

/** Inserts `text` at the textarea's cursor (replacing a selection) and returns the new value. */
export function insertAt(
  area: HTMLTextAreaElement | null,
  value: string,
  text: string,
): { value: string; cursor: number } {
  const start = area?.selectionStart ?? value.length;
  const end = area?.selectionEnd ?? value.length;
  const before = value.slice(0, start);
  // a space between the variable and a word before it
  const pad = before && !/[\s(![,]$/.test(before) ? ' ' : '';
  const next = before + pad + text + value.slice(end);
  return { value: next, cursor: start + pad.length + text.length };
}

function example(v: RuleVariable): string {
  if (v.example === undefined || v.example === null) return v.example === null ? 'null' : '';
  return typeof v.example === 'number' ? fmtNumber(v.example) : showValue(v.example);
}

/** The variables a condition may read, filterable; a click on one inserts it. */
export function VariablesPanel({
  onInsert,
  area,
}: {
  onInsert: (name: string) => void;
  area: RefObject<HTMLTextAreaElement>;
}) {
  const state = useLoad(() => rulesApi.variables(), []);
  const [filter, setFilter] = useState('');
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return (state.data?.data ?? []).filter(
      (v) => !f || v.name.toLowerCase().includes(f) || v.description.toLowerCase().includes(f),
    );
  }, [state.data, filter]);
  return (
    <aside class="variables" aria-labelledby="h-variables">
      <h3 id="h-variables">Variables</h3>
      <p class="muted small">Click one to insert it at the cursor. Examples are from a recent decision.</p>
      <label class="field">
        <span class="sr-only">Filter variables</span>
        <input
          type="search"
          placeholder="Filter variables"
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
      </label>
      <Loader state={state} feature="The variables">
        {() => (
          <ul class="var-list">
            {shown.map((v) => (
              <li key={v.name}>
                <button
                  type="button"
                  class="var-name mono"
                  title={`Insert ${v.name}`}
                  onClick={() => {
                    onInsert(v.name);
                    area.current?.focus();
                  }}
                >
                  {v.name}
                </button>
                <span class="var-type mono">{v.type}</span>
                <span class="var-desc">{v.description}</span>
                {example(v) && (
                  <span class="var-example">
                    e.g. <span class="mono">{example(v)}</span>
                  </span>
                )}
              </li>
            ))}
            {shown.length === 0 && <li class="muted">No variable matches “{filter}”.</li>}
          </ul>
        )}
      </Loader>
    </aside>
  );
}
