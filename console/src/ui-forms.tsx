// Shared form pieces: a labelled field, a checkbox group, a page's filter form (and its draft),
// a confirmation dialog and a secret shown once.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
      {hint && <small class="muted">{hint}</small>}
    </label>
  );
}
/** A fieldset of checkboxes choosing a subset of `options` (scopes of a key, events of a webhook). */
export function CheckboxGroup<T extends string>({
  legend,
  options,
  chosen,
  onChange,
}: {
  legend: string;
  options: readonly T[];
  chosen: T[];
  onChange: (next: T[]) => void;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div class="checks">
        {options.map((option) => (
          <label key={option} class="inline">
            <input
              type="checkbox"
              checked={chosen.includes(option)}
              onChange={(e) =>
                onChange(e.currentTarget.checked ? [...chosen, option] : chosen.filter((x) => x !== option))
              }
            />{' '}
            {option}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** A page's filter form: its fields, then "Apply filters" (submit) and "Clear". */
function FilterForm({
  label,
  onApply,
  onClear,
  children,
}: {
  label: string;
  onApply: () => void;
  onClear: () => void;
  children: ComponentChildren;
}) {
  return (
    <form
      class="filters"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        onApply();
      }}
    >
      {children}
      <div class="actions">
        <button class="primary" type="submit">
          Apply filters
        </button>
        <button type="button" onClick={onClear}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** What a draft filter form hands its fields: the handler that writes one filter into the draft. */
export type SetFilter<F> = (k: keyof F) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) => void;

/**
 * A filter's select: "Any" (the empty value) first, then each choice, a value shown as itself or a
 * [value, label] pair.
 */
export function AnyOf({
  value,
  onChange,
  choices,
}: {
  value: string;
  onChange: (e: { currentTarget: HTMLSelectElement }) => void;
  choices: ReadonlyArray<string | readonly [string, string]>;
}) {
  return (
    <select value={value} onChange={onChange}>
      <option value="">Any</option>
      {choices.map((c) => {
        const [v, label] = typeof c === 'string' ? [c, c] : c;
        return (
          <option key={v} value={v}>
            {label}
          </option>
        );
      })}
    </select>
  );
}

/** What a page hands its filter form: the draft, and how to change and apply it. */
export interface DraftFilters<F> {
  draft: F;
  setDraft: (draft: F) => void;
  apply: (filters: F) => void;
}

/**
 * A list page's filters as a draft the operator edits, applied on submit; "Clear" empties the draft
 * and applies `none` at once.
 */
export function DraftFilterForm<F extends object>({
  label,
  draft,
  setDraft,
  apply,
  none,
  children,
}: DraftFilters<F> & {
  label: string;
  none: F;
  children: (set: SetFilter<F>) => ComponentChildren;
}) {
  const set: SetFilter<F> = (k) => (e) => setDraft({ ...draft, [k]: e.currentTarget.value });
  return (
    <FilterForm
      label={label}
      onApply={() => apply(draft)}
      onClear={() => {
        setDraft(none);
        apply(none);
      }}
    >
      {children(set)}
    </FilterForm>
  );
}

/**
 * A modal confirmation built on <dialog>: focus moves into it (to Cancel, the first button, unless
 * `focusConfirm`) and Escape cancels.
 */
export function Confirm({
  title,
  children,
  confirmLabel,
  danger,
  onConfirm,
  onCancel,
  busy,
  wide,
  focusConfirm,
}: {
  title: string;
  /** room for tables side by side (the activation's two policies) */
  wide?: boolean;
  /** Enter confirms: for a dialog a keyboard shortcut opened, whose next key is the explicit yes */
  focusConfirm?: boolean;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    if (focusConfirm) yes.current?.focus();
    return () => d?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      class={wide ? 'wide' : undefined}
      aria-labelledby="dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id="dialog-title">{title}</h2>
      <div class="dialog-body">{children}</div>
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button ref={yes} type="button" class={danger ? 'danger' : 'primary'} disabled={busy} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A secret shown exactly once, with a copy button that also works over plain HTTP. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const ref = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      // navigator.clipboard exists only in secure contexts (https or localhost)
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(value);
      else {
        ref.current?.select();
        document.execCommand('copy');
      }
      setCopied(true);
    } catch {
      ref.current?.select();
    }
  };
  return (
    <div class="secret" role="region" aria-label={label}>
      <p>
        <strong>{label}</strong>: copy it now. It is shown only once and cannot be retrieved later.
      </p>
      <div class="row">
        <label class="grow">
          <span class="sr-only">{label}</span>
          <input ref={ref} readOnly value={value} class="mono" onFocus={(e) => e.currentTarget.select()} />
        </label>
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
