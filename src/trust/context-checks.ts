// The checks of a request's `context` beyond its schema (docs/api.md, "Trust scoring": "Context"):
// its bounds (serialised size, depth, string length, list and map sizes), which also bound what a
// rule condition can be handed (docs/rules.md, "Cost"), and raw identifiers in the members Vouch
// does not define — free text a caller chose to send, stored with the decision and shown to rules,
// reviewers and webhooks, so a phone number there is refused as it is in a note.
import { CONTEXT_BOUNDS, DEFINED_CONTEXT_MEMBERS } from '../model/context-bounds.ts';
import { rawIdentifierInText } from '../lib/identifiers.ts';
import { rawIdentifierMessage } from '../http/validation.ts';
import type { FieldError } from '../http/problem.ts';

const fieldOf = (path: string, key: string | number): string =>
  typeof key === 'number' || /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
    ? `${path}.${key}`
    : `${path}[${JSON.stringify(key)}]`;

/** Size and depth problems of a context, at most a few, each naming where. */
export function contextBoundErrors(field: string, context: unknown): FieldError[] {
  if (context === undefined || context === null) return [];
  const errors: FieldError[] = [];
  const walk = (value: unknown, path: string, level: number): void => {
    if (errors.length >= 5) return;
    if (typeof value === 'string') {
      if (value.length > CONTEXT_BOUNDS.maxString)
        errors.push({
          field: path,
          message: `is ${value.length} characters long; at most ${CONTEXT_BOUNDS.maxString}`,
        });
      return;
    }
    if (value === null || typeof value !== 'object') return;
    // the leaves count as a level: an object at the last level may hold nothing
    if (level >= CONTEXT_BOUNDS.maxDepth && Object.keys(value).length > 0) {
      errors.push({ field, message: `nests deeper than ${CONTEXT_BOUNDS.maxDepth} levels` });
      return;
    }
    if (Array.isArray(value)) {
      if (value.length > CONTEXT_BOUNDS.maxItems) {
        errors.push({ field: path, message: `has ${value.length} items; at most ${CONTEXT_BOUNDS.maxItems}` });
        return;
      }
      value.forEach((v, i) => walk(v, fieldOf(path, i), level + 1));
      return;
    }
    const keys = Object.keys(value);
    if (keys.length > CONTEXT_BOUNDS.maxMembers) {
      errors.push({ field: path, message: `has ${keys.length} members; at most ${CONTEXT_BOUNDS.maxMembers}` });
      return;
    }
    for (const k of keys) {
      if (k.length > CONTEXT_BOUNDS.maxString) {
        errors.push({ field: path, message: `has a member name of ${k.length} characters` });
        return;
      }
      walk((value as Record<string, unknown>)[k], fieldOf(path, k), level + 1);
    }
  };
  walk(context, field, 1);
  if (errors.length > 0) return errors;
  const size = JSON.stringify(context).length;
  return size > CONTEXT_BOUNDS.maxSerialised
    ? [{ field, message: `is ${size} characters as JSON; at most ${CONTEXT_BOUNDS.maxSerialised}` }]
    : [];
}

/** Raw identifiers in the context members Vouch does not define (their strings, at any depth). */
export function contextRawIdentifierErrors(field: string, context: unknown): FieldError[] {
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return [];
  const errors: FieldError[] = [];
  // runs before the bounds are checked (a raw identifier is reported first): it stops where they would
  const walk = (value: unknown, path: string, level: number): void => {
    if (errors.length >= 5 || level > CONTEXT_BOUNDS.maxDepth) return;
    if (typeof value === 'string') {
      if (value.length > CONTEXT_BOUNDS.maxString) return;
      const kind = rawIdentifierInText(value);
      if (kind) errors.push({ field: path, message: rawIdentifierMessage(kind) });
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const entries = Object.entries(value);
    if (entries.length > Math.max(CONTEXT_BOUNDS.maxItems, CONTEXT_BOUNDS.maxMembers)) return;
    for (const [k, v] of entries) walk(v, fieldOf(path, Array.isArray(value) ? Number(k) : k), level + 1);
  };
  for (const [k, v] of Object.entries(context)) if (!DEFINED_CONTEXT_MEMBERS.has(k)) walk(v, fieldOf(field, k), 2);
  return errors;
}
