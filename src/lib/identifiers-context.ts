// Whether a phone-, card- or IBAN-shaped run found inside a normalised value stands as a value of
// its own (docs/api.md, "Raw identifiers": labels joined by any punctuation, leading or trailing
// punctuation or words) or is a piece of an opaque id (`user-1234567`, a digest's digits). A run
// stands alone when each side is the edge of the value, a strong joiner (whitespace, brackets,
// quotes, `:`, `=`, `;`, `,`, `|`) or a label word; a weak joiner (`-`, `_`, `/`, `#`, …) or no
// joiner at all next to any other word keeps it inside an id.
import { isLetter, isWordChar } from './identifiers-normalise.ts';

/** Words that name what follows them, joined to it by anything (`phone=`, `tel/`, `card_`, `IBAN`). */
const LEADING_LABELS = new Set([
  'tel',
  'tele',
  'telephone',
  'phone',
  'phoneno',
  'mobile',
  'mob',
  'cell',
  'cellphone',
  'whatsapp',
  'viber',
  'telegram',
  'signal',
  'sms',
  'mms',
  'fax',
  'call',
  'callto',
  'contact',
  'card',
  'cardno',
  'pan',
  'visa',
  'mastercard',
  'amex',
  'iban',
  'mail',
  'email',
  'mailto',
]);
/** Words that qualify what precedes them (`x12`, `-ext`, `_exp`, `(mobile)`), and the labels. */
const TRAILING_WORDS = new Set([
  ...LEADING_LABELS,
  'x',
  'ext',
  'extn',
  'extension',
  'home',
  'work',
  'office',
  'personal',
  'private',
  'main',
  'exp',
  'expiry',
  'expires',
  'valid',
  'cvv',
  'cvc',
]);
const LONGEST_WORD = Math.max(...[...TRAILING_WORDS].map((w) => w.length));

const STRONG_JOINER = /^[\s:=;,|"'<>()[\]{}\p{Ps}\p{Pe}\p{Pi}\p{Pf}]$/u;

/** Walks from `at` in direction `step` (-1: leftwards from the unit before `at`; +1: from `at`). */
function sideStandsApart(s: string, at: number, step: 1 | -1, words: Set<string>): boolean {
  let i = step < 0 ? at - 1 : at;
  let strong = false;
  while (i >= 0 && i < s.length && !isWordChar(s, i)) {
    if (STRONG_JOINER.test(s[i]!)) strong = true;
    i += step;
  }
  if (strong || i < 0 || i >= s.length) return true;
  if (!isLetter(s, i)) return false; // a digit or number glued on: part of a longer run
  let j = i;
  while (j >= 0 && j < s.length && isLetter(s, j) && Math.abs(j - i) <= LONGEST_WORD) j += step;
  if (j >= 0 && j < s.length && isLetter(s, j)) return false; // longer than any label
  const word = (step < 0 ? s.slice(j + 1, i + 1) : s.slice(i, j)).toLowerCase();
  return words.has(word);
}

/** Whether s[start, end) (first to last character of a run) stands as a value of its own. */
export function standsAlone(s: string, start: number, end: number): boolean {
  return sideStandsApart(s, start, -1, LEADING_LABELS) && sideStandsApart(s, end, 1, TRAILING_WORDS);
}
