// The form that changes a policy's economics (docs/api.md, "Decisions by money"): every figure, and
// the new version's name; it derives a candidate (POST .../derive with a JSON merge patch) and shows
// the problem's field errors beside the fields they name.
import { useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { ApiProblem } from '../api.ts';
import { ErrorBox, fmtMoney, toProblem } from '../ui.tsx';
import { DEFAULT_ECONOMICS, deriveEconomics, fmtProbability, suggestVersion, type Economics } from '../money.ts';

/** The form's fields, named as the problem's `errors[].field` names them after `changes.economics.`. */
const FIELDS = [
  'version',
  'currency',
  'lossRate',
  'declineCost.rate',
  'declineCost.fixed',
  'reviewCost',
  'reviewerAccuracy',
  'reviewsPerDay',
] as const;
type FieldName = (typeof FIELDS)[number];
type Values = Record<FieldName, string>;
const OPTIONAL: ReadonlySet<FieldName> = new Set(['lossRate', 'reviewerAccuracy', 'reviewsPerDay']);

const str = (n: number | undefined) => (n === undefined ? '' : String(n));
function valuesOf(from: string, e: Economics | undefined): Values {
  const x = e ?? DEFAULT_ECONOMICS;
  return {
    version: suggestVersion(from, 'money'),
    currency: x.currency,
    lossRate: str(x.lossRate),
    'declineCost.rate': str(x.declineCost.rate),
    'declineCost.fixed': str(x.declineCost.fixed),
    reviewCost: str(x.reviewCost),
    reviewerAccuracy: str(x.reviewerAccuracy),
    reviewsPerDay: str(x.reviewsPerDay),
  };
}

/**
 * The problem's field errors by form field: `changes.economics.reviewCost` → reviewCost; a whole
 * object (`declineCost`) goes to its first field. What names no field stays in the summary.
 */
function byField(p: ApiProblem): { fields: Partial<Record<FieldName, string>>; rest: ApiProblem } {
  const fields: Partial<Record<FieldName, string>> = {};
  const rest: ApiProblem['errors'] = [];
  for (const e of p.errors) {
    const name = e.field === 'version' ? 'version' : /^changes\.economics\.(.+)$/.exec(e.field)?.[1];
    const field = name && (FIELDS.find((f) => f === name) ?? FIELDS.find((f) => f.startsWith(`${name}.`)));
    if (field) fields[field] = fields[field] ? `${fields[field]}; ${e.message}` : e.message;
    else rest.push(e);
  }
  // a taken version answers 409 without a field: it belongs beside the version
  if (p.status === 409 && p.errors.length === 0) fields.version = p.detail;
  return { fields, rest: new ApiProblem(p.status, p.code, p.detail, rest, p.extra) };
}

function MoneyInput({
  name,
  label,
  hint,
  values,
  errors,
  set,
  ...input
}: {
  name: FieldName;
  label: string;
  hint?: string;
  values: Values;
  errors: Partial<Record<FieldName, string>>;
  set: (name: FieldName, value: string) => void;
} & Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'name' | 'label' | 'value'>) {
  const id = `econ-${name.replace('.', '-')}`;
  const error = errors[name];
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        {...input}
        id={id}
        name={name}
        value={values[name]}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
        onInput={(e) => set(name, e.currentTarget.value)}
      />
      {hint && (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-error`} class="field-error" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}

const num = { type: 'number', step: 'any', inputMode: 'decimal' } as const;
const share = (v: string) => (v.trim() === '' || !Number.isFinite(Number(v)) ? '…' : fmtProbability(Number(v)));

/** The form: every figure of the economics, a new version's name; derives a candidate from `from`. */
export function EditEconomics({
  from,
  economics,
  onDone,
  onCancel,
}: {
  from: string;
  economics: Economics | undefined;
  onDone: (version: string) => void;
  onCancel: () => void;
}) {
  const [values, setValues] = useState<Values>(() => valuesOf(from, economics));
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);
  const set = (name: FieldName, value: string) => setValues((v) => ({ ...v, [name]: value }));
  const submit = async (e: Event) => {
    e.preventDefault();
    setProblem(undefined);
    const missing: Partial<Record<FieldName, string>> = {};
    for (const f of FIELDS) if (!OPTIONAL.has(f) && values[f].trim() === '') missing[f] = 'is required';
    setErrors(missing);
    if (Object.keys(missing).length > 0) return;
    // an empty optional figure is removed from the document (null in a merge patch): its default applies
    const figure = (f: FieldName) => (values[f].trim() === '' ? null : Number(values[f]));
    const patch = {
      currency: values.currency.trim().toUpperCase(),
      lossRate: figure('lossRate'),
      declineCost: { rate: figure('declineCost.rate'), fixed: figure('declineCost.fixed') },
      reviewCost: figure('reviewCost'),
      reviewerAccuracy: figure('reviewerAccuracy'),
      reviewsPerDay: figure('reviewsPerDay'),
    };
    setBusy(true);
    try {
      const p = await deriveEconomics(from, values.version.trim(), patch);
      onDone(p.version);
    } catch (err) {
      const { fields, rest } = byField(toProblem(err));
      setErrors(fields);
      setProblem(rest);
    } finally {
      setBusy(false);
    }
  };
  const props = { values, errors, set };
  const c = values.currency.trim().toUpperCase() || '…';
  return (
    <form class="economics-form" onSubmit={submit} noValidate aria-labelledby="h-edit-economics">
      <h3 id="h-edit-economics">Edit economics</h3>
      <p class="muted">
        Saved as a new candidate derived from <span class="mono">{from}</span>; backtest and activate it as any other.
        An empty optional figure takes its default.
      </p>
      <div class="economics-grid">
        <MoneyInput name="currency" label="Currency" hint="ISO 4217 code, or a crypto asset" {...props} />
        <MoneyInput
          name="lossRate"
          label="Loss rate (optional)"
          hint={`0–1: an approved fraud loses ${share(values.lossRate || '1')} of its amount`}
          {...num}
          {...props}
        />
        <MoneyInput
          name="declineCost.rate"
          label="Decline cost: rate"
          hint={`0–1 of the amount: ${share(values['declineCost.rate'])}`}
          {...num}
          {...props}
        />
        <MoneyInput
          name="declineCost.fixed"
          label="Decline cost: fixed"
          hint={`${c} per honest trade turned away`}
          {...num}
          {...props}
        />
        <MoneyInput name="reviewCost" label="Review cost" hint={`${c} per review`} {...num} {...props} />
        <MoneyInput
          name="reviewerAccuracy"
          label="Reviewer accuracy (optional)"
          hint={`0.5–1: right ${share(values.reviewerAccuracy || '0.95')} of the time`}
          {...num}
          {...props}
        />
        <MoneyInput
          name="reviewsPerDay"
          label="Reviews per day (optional)"
          hint="the desk's capacity; empty: no limit"
          {...num}
          {...props}
        />
        <MoneyInput name="version" label="New version" hint="the candidate's name" maxLength={64} {...props} />
      </div>
      {(economics?.reviewGainMin ?? 0) > 0 && (
        <p class="muted small">
          The least a review must save ({fmtMoney(economics!.reviewGainMin, economics!.currency)}) was set by a fit for
          its capacity and stays as it is: fit again to set it for a new capacity.
        </p>
      )}
      <ErrorBox error={problem} what="The economics were refused" />
      <div class="actions">
        <button class="primary" type="submit" disabled={busy}>
          {busy ? 'Deriving…' : 'Derive a candidate with these economics'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
