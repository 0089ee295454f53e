// IBAN detection in a normalised value: from each word start, the letters and digits that follow
// (any separators between them skipped) are read up to the country's registered length and
// checked with mod 97. Each start reads at most 34 characters, so the scan is linear.
import { standsAlone } from './identifiers-context.ts';
import { isAsciiDigit, isAsciiLetter, isSpace, isWordChar } from './identifiers-normalise.ts';

// IBAN lengths per the SWIFT IBAN registry. Requiring the registered length (rather than any
// 15–34 chars) keeps 32-char MD5 hex digests and 21/22-char random ids from being refused by a
// 1-in-97 mod-97 coincidence.
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HN: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/** ISO 13616 / ISO 7064 mod 97-10: the first four characters moved to the end, A=10..Z=35. */
function checksumValid(compact: string): boolean {
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let rem = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i);
    rem = c <= 57 ? (rem * 10 + (c - 48)) % 97 : (rem * 100 + (c - 55)) % 97;
  }
  return rem === 1;
}

/**
 * The end of a valid IBAN starting at `start`, or -1. In free text (`text`) whitespace may only
 * fall between the print format's groups of four, so the words of a sentence ("at 10 am to the
 * bank": AT10AMTOTHEBANK…) are not read as one.
 */
function ibanEnd(s: string, start: number, text: boolean): number {
  let compact = '';
  let length = 34;
  let i = start;
  for (; i < s.length && compact.length < length; i++) {
    if (!isWordChar(s, i)) {
      if (text && compact.length % 4 !== 0 && isSpace(s, i)) return -1;
      continue;
    }
    const letter = isAsciiLetter(s, i);
    if (!letter && !isAsciiDigit(s, i)) return -1;
    const n = compact.length;
    if (n < 2 ? !letter : n < 4 ? letter : false) return -1;
    compact += s[i]!.toUpperCase();
    if (n === 1) {
      length = IBAN_LENGTHS[compact] ?? 0;
      if (length === 0) return -1;
    }
  }
  if (compact.length < length || (i < s.length && isWordChar(s, i))) return -1;
  return checksumValid(compact) ? i : -1;
}

/** A word start, or the start of the word after a bare `IBAN` label (`IBANGB82…`). */
function startsWord(s: string, i: number): boolean {
  if (i === 0 || !isWordChar(s, i - 1)) return true;
  // Compared by code, case folded by bit 0x20, so the letters of a digest allocate nothing.
  if (i < 4 || (s.charCodeAt(i - 1) | 0x20) !== 110) return false;
  return s.slice(i - 4, i).toLowerCase() === 'iban' && (i === 4 || !isWordChar(s, i - 5));
}

/** Whether a normalised value (free text if `text`) holds a valid IBAN standing as a value of its own. */
export function containsIban(s: string, text: boolean): boolean {
  for (let i = 0; i + 15 <= s.length; i++) {
    if (!isAsciiLetter(s, i) || !startsWord(s, i)) continue;
    const end = ibanEnd(s, i, text);
    if (end >= 0 && standsAlone(s, i, end)) return true;
  }
  return false;
}
