// The first step of raw-identifier detection (docs/api.md, "Raw identifiers"): the value as the
// detectors see it, with the disguises that change how it is written but not what it is taken
// off. The result is plain to scan: every character is one UTF-16 unit, digits are ASCII, and
// the classes below decide letters, digits and separators.

const isAsciiDigitCode = (c: number): boolean => c >= 48 && c <= 57;
const isAsciiLetterCode = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

export const isAsciiDigit = (s: string, i: number): boolean => isAsciiDigitCode(s.charCodeAt(i));
export const isAsciiLetter = (s: string, i: number): boolean => isAsciiLetterCode(s.charCodeAt(i));

const LETTER = /^\p{L}$/u;
const WORD = /^[\p{L}\p{N}]$/u;

/** A letter of any script (normalised text only: one unit per character). */
export function isLetter(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c < 128 ? isAsciiLetterCode(c) : LETTER.test(s[i]!);
}

/** A letter or a number: everything else separates digits, IBAN groups and words. */
export function isWordChar(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c < 128 ? isAsciiDigitCode(c) || isAsciiLetterCode(c) : WORD.test(s[i]!);
}

const WHITESPACE = /^\s$/u;
export const isSpace = (s: string, i: number): boolean => WHITESPACE.test(s[i]!);

// Unicode encodes every script's decimal digits as one contiguous run 0–9 (a stability policy),
// so a digit's value is its distance from the start of its run, modulo 10.
const DECIMAL = /^\p{Nd}$/u;
const digitValues = new Map<number, string>();
function asciiDigit(cp: number): string {
  let value = digitValues.get(cp);
  if (value === undefined) {
    let start = cp;
    while (start > 0 && cp - start < 60 && DECIMAL.test(String.fromCodePoint(start - 1))) start--;
    value = String((cp - start) % 10);
    digitValues.set(cp, value);
  }
  return value;
}

// Invisible characters carry nothing a reader sees: format characters (zero-width spaces, soft
// hyphens, direction marks, U+180E) and the default-ignorable fillers (Hangul U+3164, U+FFA0,
// U+115F, U+1160, variation selectors, tags), several of which are letters by category.
const INVISIBLE = /^[\p{Cf}\p{Default_Ignorable_Code_Point}]$/u;
// Modifier letters (U+30FC 'ー', U+02C9 'ˉ') read as dashes between digits; they become U+2010
// rather than '-', which free text reads as part of a date (identifiers.ts).
const MODIFIER_LETTER = /^\p{Lm}$/u;
const ASTRAL_CLASSES: Array<[RegExp, string]> = [
  [/^\p{L}$/u, '\ua000'],
  [/^\p{N}$/u, '\u2160'],
];

/** One code point as the scanners see it: dropped, a stand-in of its class, or itself. */
function fold(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (cp < 128) return ch;
  if (ch.length === 1 && cp >= 0xd800 && cp <= 0xdfff) return '\ufffd'; // a lone surrogate
  if (INVISIBLE.test(ch)) return '';
  if (cp === 0x3002 || cp === 0xff61) return '.'; // ideographic full stops
  if (DECIMAL.test(ch)) return asciiDigit(cp);
  if (MODIFIER_LETTER.test(ch)) return '\u2010';
  if (ch.length === 1) return ch;
  // Outside the BMP: a one-unit stand-in of the same class, so scanners index code units.
  for (const [cls, standIn] of ASTRAL_CLASSES) if (cls.test(ch)) return standIn;
  return '\ufffd';
}

/** Runs of %XX as the UTF-8 they encode (invalid bytes become U+FFFD); a malformed % stays. */
function decodePercent(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  commat: '@',
  plus: '+',
  period: '.',
  nbsp: ' ',
  amp: '&',
  hyphen: '-',
  dash: '-',
  lpar: '(',
  rpar: ')',
};

/** HTML character references (`&#43;`, `&#x40;`, `&commat;`) as the characters they stand for. */
function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(
    /&(?:#(\d{1,7})|#[xX]([0-9A-Fa-f]{1,6})|([a-zA-Z]{2,8}));/g,
    (whole, dec?: string, hex?: string, name?: string) => {
      if (name !== undefined) return NAMED_ENTITIES[name.toLowerCase()] ?? whole;
      const cp = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
      return cp <= 0x10ffff ? String.fromCodePoint(cp) : '\ufffd';
    },
  );
}

// Printable ASCII without '%' or '&' is already in its final form: the common case (hex digests).
const PLAIN_ASCII = /^[\x20-\x24\x27-\x7e]*$/;

/**
 * The value as a detector should see it: percent-encoding and character references decoded
 * (twice-encoded values too), NFKC, invisible characters dropped, decimal digits of every script
 * in ASCII, ideographic full stops as '.', modifier letters as a hyphen, characters outside the BMP
 * as a one-unit stand-in of their class, trimmed.
 */
export function normaliseIdentifier(value: string): string {
  if (PLAIN_ASCII.test(value)) return value.trim();
  let s = value.normalize('NFKC');
  for (let round = 0; round < 3; round++) {
    const next = decodeEntities(decodePercent(s)).normalize('NFKC');
    if (next === s) break;
    s = next;
  }
  let out = '';
  for (const ch of s) out += fold(ch);
  return out.trim();
}
