// Raw-identifier detection (CONTRACT §5): callers must send hashes, never a phone number,
// e-mail, IBAN or card number. Everything here is a hand-written single pass over the input
// (no backtracking regexes), because the input is untrusted.

export type RawIdentifierKind = 'phone' | 'email' | 'iban' | 'card';

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isUpper = (c: number): boolean => c >= 65 && c <= 90;
const isLower = (c: number): boolean => c >= 97 && c <= 122;
const isAlnum = (c: number): boolean => isDigit(c) || isUpper(c) || isLower(c);
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

function looksLikeEmail(s: string): boolean {
  const at = s.indexOf('@');
  if (at <= 0 || at !== s.lastIndexOf('@')) return false;
  for (let i = 0; i < at; i++) if (isSpace(s.charCodeAt(i))) return false;
  // Domain: dot-separated labels of letters, digits and hyphens; the last (TLD) is 2+ letters.
  const domain = s.slice(at + 1);
  let labels = 0;
  let labelLen = 0;
  let labelAllLetters = true;
  for (let i = 0; i <= domain.length; i++) {
    const c = i < domain.length ? domain.charCodeAt(i) : 46; // treat end as a final '.'
    if (c === 46) {
      if (labelLen === 0) return false;
      labels++;
      if (i === domain.length) return labels >= 2 && labelAllLetters && labelLen >= 2;
      labelLen = 0;
      labelAllLetters = true;
    } else if (isAlnum(c) || c === 45) {
      labelLen++;
      if (!isUpper(c) && !isLower(c)) labelAllLetters = false;
    } else {
      return false;
    }
  }
  return false;
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

function looksLikeIban(s: string): boolean {
  // Spaces are allowed anywhere (print format groups by four); case is ignored.
  let compact = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 32) continue;
    if (!isAlnum(c)) return false;
    compact += s[i];
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

/** Digits left after removing the given separators, or null if any other char is present. */
function digitsOnly(s: string, separators: string): string | null {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) out += s[i];
    else if (!separators.includes(s[i]!)) return null;
  }
  return out;
}

function looksLikeCard(s: string): boolean {
  if (!isDigit(s.charCodeAt(0)) || !isDigit(s.charCodeAt(s.length - 1))) return false;
  const digits = digitsOnly(s, ' -');
  return digits !== null && digits.length >= 13 && digits.length <= 19 && luhn(digits);
}

function looksLikePhone(s: string): boolean {
  if (!isDigit(s.charCodeAt(s.length - 1))) return false;
  if (s[0] === '+') {
    const digits = digitsOnly(s.slice(1), ' -.()');
    return digits !== null && digits.length >= 8 && digits.length <= 15;
  }
  const first = s.charCodeAt(0);
  if (!isDigit(first) && first !== 40 /* ( */) return false;
  // National formats and bare digit runs: 7–15 digits (6 or fewer are ordinary small numbers).
  const digits = digitsOnly(s, ' -.()');
  return digits !== null && digits.length >= 7 && digits.length <= 15;
}

/**
 * The kind of raw personal identifier `value` appears to be, or null when it looks like an
 * opaque id or hash. Card is checked before phone so a Luhn-valid 13–15 digit run says 'card'.
 */
export function looksLikeRawIdentifier(value: string): RawIdentifierKind | null {
  const s = value.trim();
  if (s.length === 0) return null;
  if (looksLikeEmail(s)) return 'email';
  if (looksLikeIban(s)) return 'iban';
  if (looksLikeCard(s)) return 'card';
  if (looksLikePhone(s)) return 'phone';
  return null;
}
