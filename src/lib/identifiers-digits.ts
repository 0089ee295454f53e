// Phone and card detection in a normalised value. A run is the digits between two letters (or
// the edges), with whatever separators lie between them: a phone is 7–15 digits (E.164 allows at
// most 15; a '+' changes nothing), a card 13–19 digits passing Luhn. A run of more than 19 digits is neither as a
// whole, but its whitespace-separated groups may hold one (`4111 1111 1111 1111 12/27`).
import { standsAlone } from './identifiers-context.ts';
import { isAsciiDigit, isSpace, isWordChar } from './identifiers-normalise.ts';

export type DigitKind = 'phone' | 'card';

const MAX_DIGITS = 19;

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

function kindOf(digits: string): DigitKind | null {
  const n = digits.length;
  if (n >= 13 && n <= MAX_DIGITS && luhn(digits)) return 'card';
  return n >= 7 && n <= 15 ? 'phone' : null;
}

/** A whitespace-free stretch of a run: where its digits start and end. */
interface Group {
  first: number;
  end: number;
  digits: string;
}

/** The groups of s[from, to) that hold digits; `digits` is capped past MAX_DIGITS. */
function groupsOf(s: string, from: number, to: number): Group[] {
  const groups: Group[] = [];
  let current: Group | null = null;
  for (let i = from; i < to; i++) {
    if (isSpace(s, i)) {
      if (current) groups.push(current);
      current = null;
    } else if (isAsciiDigit(s, i)) {
      current ??= { first: i, end: i + 1, digits: '' };
      if (current.digits.length <= MAX_DIGITS) current.digits += s[i]!;
      current.end = i + 1;
    }
  }
  if (current) groups.push(current);
  return groups;
}

/**
 * The kind of the first phone or card in groups[...] standing alone: the whole clause first,
 * then each window of consecutive groups (a card before a phone among the windows).
 */
function clauseKind(s: string, groups: Group[]): DigitKind | null {
  if (groups.length === 0) return null;
  const whole = groups.map((g) => g.digits).join('');
  const first = groups[0]!;
  const last = groups[groups.length - 1]!;
  const wholeKind = whole.length > MAX_DIGITS ? null : kindOf(whole);
  if (wholeKind && standsAlone(s, first.first, last.end)) return wholeKind;
  if (groups.length === 1) return null;
  let phone = false;
  for (let a = 0; a < groups.length; a++) {
    let digits = '';
    for (let b = a; b < groups.length && digits.length + groups[b]!.digits.length <= MAX_DIGITS; b++) {
      digits += groups[b]!.digits;
      if (a === 0 && b === groups.length - 1) break; // the whole clause, already tried
      const kind = kindOf(digits);
      if (kind && standsAlone(s, groups[a]!.first, groups[b]!.end)) {
        if (kind === 'card') return 'card';
        phone = true;
      }
    }
  }
  return phone ? 'phone' : null;
}

// In free text a sentence's punctuation ends a clause: "3, 5, 7 and 9" is not one number.
const CLAUSE_END = /[,;:.!?]/;

/**
 * The first phone or card in a normalised value, or null. `text`: the value is free text, where
 * punctuation followed by whitespace separates numbers instead of joining them.
 */
export function digitRunKind(s: string, text: boolean): DigitKind | null {
  let runStart = 0; // just after the last letter or non-ASCII number: where separators begin
  let i = 0;
  while (i < s.length) {
    if (!isAsciiDigit(s, i)) {
      if (isWordChar(s, i)) runStart = i + 1;
      i++;
      continue;
    }
    let end = i;
    let digits = 0;
    for (; end < s.length; end++) {
      if (isAsciiDigit(s, end)) digits++;
      else if (isWordChar(s, end)) break;
    }
    i = end;
    if (digits < 7) {
      runStart = end; // too few digits for a phone or card: the common case of a digest's digits
      continue;
    }
    let clauseStart = runStart;
    for (let j = runStart; j <= end; j++) {
      const clauseEnds = j === end || (text && CLAUSE_END.test(s[j]!) && j + 1 < end && isSpace(s, j + 1));
      if (!clauseEnds) continue;
      const kind = clauseKind(s, groupsOf(s, clauseStart, j));
      if (kind) return kind;
      clauseStart = j + 1;
    }
    runStart = end;
  }
  return null;
}
