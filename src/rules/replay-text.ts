// Reading a stored decision's text columns for a rule test (docs/rules.md, "Testing a rule"):
// JSON objects and arrays that decode to the expected shape or to nothing (a row written by an
// older version, or damaged, never fails a test), and the two numbers of the score response read
// by pattern.
import type { MatchedRule } from '../model/outcomes.ts';

export const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

// The score response is large (every signal with its description) and only two numbers of it are
// needed: read them by pattern instead of parsing it. `"score":` and `"safe_amount":` can only
// occur unescaped as keys (a string value escapes its quotes), and `score` comes right after
// `entity_id`, so its first occurrence is the top-level one.
export const SCORE = /"score":(-?[0-9.eE+-]+)/;
export const SAFE_AMOUNT = /"safe_amount":(-?[0-9.eE+-]+|null)/;
export function numberIn(text: string | null, pattern: RegExp): number | null {
  if (text === null) return null;
  const m = pattern.exec(text);
  if (!m || m[1] === 'null') return null;
  return finite(Number(m[1]));
}

export function storedRules(text: string | null): MatchedRule[] {
  if (text === null) return [];
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v)
      ? (v as MatchedRule[]).filter((r) => r !== null && typeof r === 'object' && typeof r.id === 'string')
      : [];
  } catch {
    return [];
  }
}
