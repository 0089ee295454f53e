// The schema vocabulary every layer's TypeBox schemas share: the string enum, and the two keywords
// the validator (http/validation.ts) reads to word an error for people (docs/api.md, "Errors").
import { Type } from 'typebox';

/** Schema keyword: this string is an identifier the caller must hash (entity ids, linked hashes). */
export const NO_RAW_IDENTIFIER = 'x-no-raw-identifier';
/** Schema keyword: the words to show when the schema's `pattern` does not match. */
export const PATTERN_MESSAGE = 'x-error';

/**
 * A string that must be one of a fixed list: `{type: 'string', enum: [...]}` rather than a union
 * of literals, so OpenAPI shows an enum and a failure reads "must be one of: a, b, c".
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: object = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
