// Text and JSON rewriting for erasure (docs/api.md, "Erasure"): the id replaced by its digest
// wherever a stored value names it, exactly (JSON strings) or as a whole token (free text).
import { containsPattern } from '../store/like.ts';

/** Every string equal to `from`, anywhere in a JSON value, replaced by `to`. */
export function replaceDeep(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value === from ? to : value;
  if (Array.isArray(value)) return value.map((v) => replaceDeep(v, from, to));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceDeep(v, from, to)]));
  }
  return value;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Free text with the id, as a whole token, replaced by the digest: a short id inside another word
 * is left alone, so erasing `ab` does not rewrite "about".
 */
export function replaceToken(text: string, from: string, to: string): string {
  if (!text.includes(from)) return text;
  return text.replace(new RegExp(`(?<![\\p{L}\\p{N}_-])${escapeRegExp(from)}(?![\\p{L}\\p{N}_-])`, 'gu'), to);
}

/** Every string in a JSON value with the id replaced as a token (stored responses: ids appear in details too). */
export function replaceTokensDeep(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return replaceToken(value, from, to);
  if (Array.isArray(value)) return value.map((v) => replaceTokensDeep(v, from, to));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceTokensDeep(v, from, to)]));
  }
  return value;
}

/** A LIKE pattern matching text that contains the id as a JSON string (escape character `\`). */
export function containsJsonString(id: string): string {
  return containsPattern(JSON.stringify(id));
}
