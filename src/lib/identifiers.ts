// Raw-identifier detection (docs/api.md, "Raw identifiers"): callers must send hashes, never a
// phone number, e-mail, IBAN or card number. The value is normalised first (identifiers-normalise.ts)
// so a disguise does not hide what it is, then each detector scans it for an identifier standing
// as a value of its own (identifiers-context.ts). Every step is a linear scan or an anchored
// regex without nested quantifiers, because the input is untrusted.
import { digitRunKind } from './identifiers-digits.ts';
import { containsEmail } from './identifiers-email.ts';
import { containsIban } from './identifiers-iban.ts';
import { normaliseIdentifier } from './identifiers-normalise.ts';

export type RawIdentifierKind = 'phone' | 'email' | 'iban' | 'card';

function detect(s: string, text: boolean): RawIdentifierKind | null {
  if (s.length === 0) return null;
  if (containsEmail(s)) return 'email';
  if (containsIban(s, text)) return 'iban';
  return digitRunKind(text ? withoutDatesAndAmounts(s) : s, text);
}

/**
 * The kind of raw personal identifier `value` appears to be, or null when it looks like an
 * opaque id or hash. A Luhn-valid 13–15 digit run says 'card' rather than 'phone'.
 */
export function looksLikeRawIdentifier(value: string): RawIdentifierKind | null {
  return detect(normaliseIdentifier(value), false);
}

// Numbers prose is full of, which would otherwise read as 7+ digits with separators: dates
// (2026-11-20, 20.11.2026, 11/20/26), times (10:30, 10:30:15.5), and amounts with thousands
// separators or decimals (1,250,000.00, 12345.67). Each is bounded by lookarounds, never nested.
const PROSE_NUMBERS = [
  /(?<![\d.,/-])\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?![-/.]?\d)/g,
  /(?<![\d.,/-])\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2})(?![-/.]?\d)/g,
  /(?<![\d:])\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?![:.]?\d)/g,
  /(?<![\d.,+])\d{1,3}(?:,\d{3})+(?:\.\d{1,9})?(?![.,]?\d)/g,
  /(?<![\d.,+])\d{1,15}\.\d{1,2}(?![.,]?\d)/g,
];

/** Dates, times and amounts replaced by a word, so a number of prose is not taken for a phone. */
function withoutDatesAndAmounts(s: string): string {
  let out = s;
  for (const pattern of PROSE_NUMBERS) out = out.replace(pattern, 'N');
  return out;
}

/**
 * The kind of raw identifier written somewhere in free text (a label's note), or null: the same
 * detectors as for ids, except that dates, times and amounts are not numbers to check, and a
 * sentence's punctuation separates numbers.
 */
export function rawIdentifierInText(text: string): RawIdentifierKind | null {
  return detect(normaliseIdentifier(text), true);
}

/** Values found not to be raw identifiers, by the object holding them (see rawIdentifierIn). */
const cleanIn = new WeakMap<object, string[]>();

/**
 * looksLikeRawIdentifier(value) for a value held by `holder` (the request body, event, context or
 * linked-identifier object it came in), remembering a clean verdict for that object: the schema
 * keyword (http/validation.ts) and the handler's backstop check (schemas.ts) look at the same
 * strings of the same parsed body, and the second look is then a lookup. Only a null verdict is
 * kept, keyed by the holder object and the string's content, so the answer is always what
 * looksLikeRawIdentifier gives; nothing is shared between requests (each parses its own objects).
 */
export function rawIdentifierIn(value: string, holder: unknown): RawIdentifierKind | null {
  if (holder === null || typeof holder !== 'object') return looksLikeRawIdentifier(value);
  const clean = cleanIn.get(holder);
  if (clean !== undefined && clean.includes(value)) return null;
  const kind = looksLikeRawIdentifier(value);
  if (kind === null) {
    if (clean === undefined) cleanIn.set(holder, [value]);
    else if (clean.length < 8) clean.push(value);
  }
  return kind;
}

/**
 * VOUCH_REQUIRE_HASHED_IDS: a hex or base64url digest of at least 32 characters (hex is a subset
 * of the base64url alphabet; up to two '=' of padding are tolerated).
 */
export function isDigest(value: string): boolean {
  return /^[A-Za-z0-9_-]{32,}={0,2}$/.test(value);
}
