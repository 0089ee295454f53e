// Validation failures as the fields they name: Ajv's errors made readable ("is required", "must be
// one of: a, b"), one line per field. lib/domain-errors.ts `schemaMismatch` makes them the one
// problem every schema mismatch answers with (docs/api.md, "Errors"): validation_failed for a body,
// invalid_request for anything else.
import type { FieldError } from '../lib/domain-errors.ts';

export interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldName(context: string | undefined, error: AjvLikeError): string {
  const path = (error.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const extra = error.params?.missingProperty ?? error.params?.additionalProperty;
  if (typeof extra === 'string') path.push(extra);
  const joined = path.join('.');
  if (context && context !== 'body') return joined ? `${context}.${joined}` : context;
  return joined || '(body)';
}

const listValues = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');

function fieldMessage(error: AjvLikeError, allowed: Map<string, unknown[]>): string {
  if (error.keyword === 'additionalProperties') return 'is not a known field';
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'enum' && Array.isArray(error.params?.allowedValues))
    return `must be one of: ${listValues(error.params.allowedValues)}`;
  if (error.keyword === 'const') {
    // A union of literals fails once per branch; name every allowed value in one message.
    const values = allowed.get(error.instancePath ?? '') ?? [error.params?.allowedValue];
    return values.length === 1 ? `must be ${listValues(values)}` : `must be one of: ${listValues(values)}`;
  }
  return error.message ?? 'is invalid';
}

export function toFieldErrors(context: string | undefined, errors: AjvLikeError[]): FieldError[] {
  const allowed = new Map<string, unknown[]>();
  for (const e of errors) {
    if (e.keyword !== 'const') continue;
    const list = allowed.get(e.instancePath ?? '') ?? [];
    if (!list.includes(e.params?.allowedValue)) list.push(e.params?.allowedValue);
    allowed.set(e.instancePath ?? '', list);
  }
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors) {
    // anyOf/union branches repeat themselves; one line per field and message is enough.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const item = { field: fieldName(context, e), message: fieldMessage(e, allowed) };
    const key = `${item.field}\u0000${item.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(item);
    }
  }
  return out.slice(0, 50);
}
