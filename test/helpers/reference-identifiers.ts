// src/trust/identifiers.ts as it was before issue 13, kept verbatim as the reference the faster
// detector is checked against (test/trust/identifiers.test.ts).
// Raw-identifier detection (CONTRACT §5): callers must send hashes, never a phone number,
// e-mail, IBAN or card number. The input is first normalised so trivial disguises (Unicode
// compatibility forms, other-script digits, URI schemes, display names, separators) do not hide
// a raw value; every step is a single pass or an anchored regex without nested quantifiers,
// because the input is untrusted.

export type RawIdentifierKind = 'phone' | 'email' | 'iban' | 'card';

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isUpper = (c: number): boolean => c >= 65 && c <= 90;
const isLower = (c: number): boolean => c >= 97 && c <= 122;
const isAlnum = (c: number): boolean => isDigit(c) || isUpper(c) || isLower(c);
// ASCII is decided by char code; the Unicode property regexes only run for other characters.
const isAscii = (ch: string): boolean => ch.length === 1 && ch.charCodeAt(0) < 128;
const isSpace = (ch: string): boolean => /\s/u.test(ch);
const isLetter = (ch: string): boolean => (isAscii(ch) ? isUpper(ch.charCodeAt(0)) || isLower(ch.charCodeAt(0)) : /\p{L}/u.test(ch));
/** Anything that is neither a letter nor a number separates digits or IBAN groups. */
const isSeparator = (ch: string): boolean => (isAscii(ch) ? !isAlnum(ch.charCodeAt(0)) : !/[\p{L}\p{N}]/u.test(ch));

// Unicode encodes every script's decimal digits as one contiguous run 0–9 (a stability policy),
// so a digit's value is its distance from the start of its run, modulo 10.
const digitValues = new Map<number, string>();
function asciiDigit(ch: string): string {
  const cp = ch.codePointAt(0)!;
  let value = digitValues.get(cp);
  if (value === undefined) {
    let start = cp;
    while (start > 0 && cp - start < 60 && /\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
    value = String((cp - start) % 10);
    digitValues.set(cp, value);
  }
  return value;
}

const SCHEMES = ['tel:', 'sms:', 'callto:', 'mailto:'];

/** The value without a leading URI scheme, and without the scheme's parameters (`;ext=`, `?subject=`). */
function stripScheme(s: string): string {
  const lower = s.slice(0, 8).toLowerCase();
  for (const scheme of SCHEMES) {
    if (lower.startsWith(scheme)) {
      let rest = s.slice(scheme.length);
      if (rest.startsWith('//')) rest = rest.slice(2);
      const params = rest.search(/[;?]/);
      return (params >= 0 ? rest.slice(0, params) : rest).trim();
    }
  }
  return s;
}

// A label pasted in front of the value: "phone: …", "whatsapp:…", "Card 4111…", "tel +1…".
const KNOWN_LABEL = /^(?:tel|phone|mobile|cell|whatsapp|sms|card|mail|e-?mail|iban)\b[\s:]*/i;
const ANY_LABEL = /^\p{L}[\p{L}\p{N} _.-]{0,19}?\s*:\s*(?=\S)/u;
const OPENING = /^[\p{Ps}\p{Pi}"'`]$/u;
const CLOSING = /^[\p{Pe}\p{Pf}"'`]$/u;
const TRAILING = '.,;:!?';

/** One round of unwrapping: display name, surrounding quotes or brackets, a label, a scheme, trailing punctuation. */
function unwrapOnce(value: string): string {
  let s = value;
  if (s.endsWith('>')) {
    const open = s.lastIndexOf('<');
    s = (open >= 0 ? s.slice(open + 1, -1) : s.slice(0, -1)).trim();
  }
  const first = [...s][0] ?? '';
  const last = [...s].at(-1) ?? '';
  if (s.length >= 2 && OPENING.test(first) && CLOSING.test(last)) s = s.slice(first.length, s.length - last.length).trim();
  // One prefix a round, scheme first, so "Card mailto:…?subject=…" loses its label, then its scheme.
  const scheme = stripScheme(s);
  if (scheme !== s) s = scheme;
  else {
    const known = s.replace(KNOWN_LABEL, '');
    s = known !== s ? known : s.replace(ANY_LABEL, '');
  }
  let end = s.length;
  while (end > 0 && TRAILING.includes(s[end - 1]!)) end--;
  return s.slice(0, end).trim();
}

/**
 * The value as a detector should see it: NFKC, invisible format characters dropped, every decimal
 * digit in ASCII, ideographic full stops as '.', then unwrapped (the address inside
 * `Display Name <…>`, no surrounding quotes or brackets, no label or URI scheme, no trailing
 * punctuation) until nothing changes, at most a few rounds.
 */
export function normaliseIdentifier(value: string): string {
  // Printable ASCII is already NFKC, has no format characters and only ASCII digits.
  const ascii = /^[\x20-\x7e]*$/.test(value);
  let out = ascii ? value : '';
  if (!ascii) for (const ch of value.normalize('NFKC')) {
    const cp = ch.codePointAt(0)!;
    if (cp < 128) out += ch;
    else if (/\p{Cf}/u.test(ch)) continue; // zero-width spaces, soft hyphens, direction marks
    else if (cp === 0x3002 || cp === 0xff61) out += '.';
    else if (/\p{Nd}/u.test(ch)) out += asciiDigit(ch);
    else out += ch;
  }
  let s = out.trim();
  for (let round = 0; round < 6; round++) {
    const next = unwrapOnce(s);
    if (next === s) break;
    s = next;
  }
  return s;
}

/** Without separators at either end (`-4111…-`, `#4111…`, `+4111…`): for the card and IBAN checks. */
function trimSeparators(s: string): string {
  const chars = [...s];
  let start = 0;
  let end = chars.length;
  while (start < end && isSeparator(chars[start]!)) start++;
  while (end > start && isSeparator(chars[end - 1]!)) end--;
  return chars.slice(start, end).join('');
}

/** A phone without a trailing extension (`x12`, `ext. 12`, `extension 12`). */
const withoutExtension = (s: string): string => s.replace(/\s*(?:x|ext\.?|extension)\s*\d{1,6}$/i, '');

function looksLikeEmail(s: string): boolean {
  const at = s.indexOf('@');
  if (at <= 0 || at !== s.lastIndexOf('@')) return false;
  for (const ch of s.slice(0, at)) if (isSpace(ch)) return false;
  // Domain: dot-separated labels of letters (any script), digits and hyphens; the last (TLD) is
  // 2+ letters.
  const labels = s.slice(at + 1).split('.');
  if (labels.length < 2) return false;
  for (const label of labels) {
    if (label.length === 0) return false;
    for (const ch of label) if (!/[\p{L}\p{N}\p{M}-]/u.test(ch)) return false;
  }
  const tld = [...labels[labels.length - 1]!];
  return tld.length >= 2 && tld.every(isLetter);
}
// IBAN lengths per the SWIFT IBAN registry. Requiring the registered length (rather than any
// 15–34 chars) keeps 32-char MD5 hex digests and 21/22-char random ids from being refused by a
// 1-in-97 mod-97 coincidence.
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29,
  BY: 28, CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29,
  ES: 24, FI: 18, FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28,
  HN: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20,
  LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19,
  MN: 20, MR: 27, MT: 31, MU: 30, NI: 28, NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29,
  PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24,
  SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
  YE: 30,
};

/** Strips a leading `IBAN` label (`IBAN GB82…`, `iban: GB82…`). */
function stripIbanLabel(s: string): string {
  if (s.slice(0, 4).toUpperCase() !== 'IBAN') return s;
  let i = 4;
  while (i < s.length && isSeparator(s[i]!)) i++;
  return s.slice(i);
}

function looksLikeIban(value: string): boolean {
  const s = stripIbanLabel(value);
  if (s.length < 15 || !isLetter(s[0]!)) return false;
  // Separators are allowed anywhere (print format groups by four); case is ignored.
  let compact = '';
  for (const ch of s) {
    if (isSeparator(ch)) continue;
    if (!isAlnum(ch.charCodeAt(0)) || ch.length > 1) return false;
    compact += ch;
    if (compact.length > 34) return false;
  }
  compact = compact.toUpperCase();
  if (IBAN_LENGTHS[compact.slice(0, 2)] !== compact.length) return false;
  if (!isDigit(compact.charCodeAt(2)) || !isDigit(compact.charCodeAt(3))) return false;
  // ISO 13616 / ISO 7064 mod 97-10: move the first four chars to the end, letters A=10..Z=35.
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let rem = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i);
    rem = isDigit(c) ? (rem * 10 + (c - 48)) % 97 : (rem * 100 + (c - 55)) % 97;
  }
  return rem === 1;
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * The ASCII digits of `s` once separators are dropped, and whether a '+' led them; null when a
 * letter or any other non-separator is present. At most 20 digits are collected (longer runs are
 * neither phones nor cards).
 */
function digitsOnly(s: string): { digits: string; plus: boolean } | null {
  let digits = '';
  let plus = false;
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    if (ch.length === 1 && isDigit(c)) {
      digits += ch;
      if (digits.length > 20) return null;
    } else if (ch === '+' && digits.length === 0 && !plus) {
      plus = true;
    } else if (!isSeparator(ch)) {
      return null;
    }
  }
  return { digits, plus };
}

function looksLikeCard(s: string): boolean {
  if (!isDigit(s.charCodeAt(0)) || !isDigit(s.charCodeAt(s.length - 1))) return false;
  const found = digitsOnly(s);
  return found !== null && !found.plus && found.digits.length >= 13 && found.digits.length <= 19 && luhn(found.digits);
}

function looksLikePhone(s: string): boolean {
  // Starts with a digit, '+' or an opening bracket and ends with a digit or closing bracket, so
  // "#1234567" (an order number) is not a phone; anything between digits may separate them.
  const first = s[0]!;
  const last = s[s.length - 1]!;
  if (!isDigit(first.charCodeAt(0)) && first !== '+' && !/\p{Ps}/u.test(first)) return false;
  if (!isDigit(last.charCodeAt(0)) && !/\p{Pe}/u.test(last)) return false;
  const found = digitsOnly(s);
  if (found === null) return false;
  // E.164 is at most 15 digits; national formats and bare runs have 7 or more (6 or fewer are
  // ordinary small numbers).
  const n = found.digits.length;
  return found.plus ? n >= 8 && n <= 15 : n >= 7 && n <= 15;
}

/**
 * The kind of raw personal identifier `value` appears to be, or null when it looks like an
 * opaque id or hash. Card is checked before phone so a Luhn-valid 13–15 digit run says 'card'.
 */
export function looksLikeRawIdentifier(value: string): RawIdentifierKind | null {
  const s = normaliseIdentifier(value);
  if (s.length === 0) return null;
  if (looksLikeEmail(s)) return 'email';
  const bare = trimSeparators(s);
  if (bare.length > 0 && looksLikeIban(bare)) return 'iban';
  if (bare.length > 0 && looksLikeCard(bare)) return 'card';
  const phone = withoutExtension(s);
  if (phone.length > 0 && looksLikePhone(phone)) return 'phone';
  return null;
}

/**
 * VOUCH_REQUIRE_HASHED_IDS: a hex or base64url digest of at least 32 characters (hex is a subset
 * of the base64url alphabet; up to two '=' of padding are tolerated).
 */
export function isDigest(value: string): boolean {
  return /^[A-Za-z0-9_-]{32,}={0,2}$/.test(value);
}
