// E-mail detection in a normalised value: an address anywhere in it, whatever surrounds it (a
// display name, a scheme, a label, trailing punctuation). Each '@' is checked in one bounded
// look either side, so the scan is linear in the input.
import { isLetter, isWordChar } from './identifiers-normalise.ts';

const LOCAL_PUNCTUATION = new Set("!#$%&'*+-/=?^_`{|}~.");
const MARK = /^\p{M}$/u;
const MAX_LOCAL = 64;
const MAX_LABEL = 63;

const isMark = (s: string, i: number): boolean => s.charCodeAt(i) >= 128 && MARK.test(s[i]!);
const isLocalChar = (s: string, i: number): boolean => isWordChar(s, i) || isMark(s, i) || LOCAL_PUNCTUATION.has(s[i]!);
const isLabelChar = (s: string, i: number): boolean => isWordChar(s, i) || isMark(s, i) || s[i] === '-';

/** A letter or digit among the local-part characters just before `at`. */
function hasLocalPart(s: string, at: number): boolean {
  for (let i = at - 1; i >= 0 && at - i <= MAX_LOCAL && isLocalChar(s, i); i--) {
    if (isWordChar(s, i)) return true;
  }
  return false;
}

/** A top-level domain: letters of any script, or an A-label of an internationalised one (`xn--p1ai`). */
function isTld(label: string): boolean {
  if (/^xn--[a-z0-9-]+$/i.test(label)) return true;
  if (label.length < 2) return false;
  for (let i = 0; i < label.length; i++) if (!isLetter(label, i) && !isMark(label, i)) return false;
  return true;
}

/**
 * Dot-separated labels from `from`, the last a top-level domain. A label's leading or trailing
 * hyphens are punctuation around the address (`a@b.com-`), never part of a host name.
 */
function hasDomain(s: string, from: number): boolean {
  let labels = 0;
  let i = from;
  let last = '';
  for (;;) {
    const start = i;
    while (i < s.length && i - start < MAX_LABEL && isLabelChar(s, i)) i++;
    const label = s.slice(start, i).replace(/^-+/, '').replace(/-+$/, '');
    if (label === '') break;
    last = label;
    labels++;
    if (s[i] !== '.' || i + 1 >= s.length || !isLabelChar(s, i + 1)) break;
    i++;
  }
  // A word glued on with a hyphen (`a@b.com-home`) is not part of the top-level domain.
  return labels >= 2 && (isTld(last) || (last.includes('-') && isTld(last.slice(0, last.indexOf('-')))));
}

/** Whether a normalised value holds an e-mail address. */
export function containsEmail(s: string): boolean {
  for (let at = s.indexOf('@'); at >= 0; at = s.indexOf('@', at + 1)) {
    if (hasLocalPart(s, at) && hasDomain(s, at + 1)) return true;
  }
  return false;
}
