// The network's common hashing (docs/network.md, "Common hashing"): two marketplaces' hashes of
// the same phone, e-mail or IBAN meet in the network only if both wrote the raw value the same
// way before hashing it. hashIdentifier is that one way: a canonical form per identifier type, then
// SHA-256, hex. The vectors in docs/network.md are checked against this file by test/sdk.
import { createHash } from 'node:crypto';

/** The identifier types of `linked_identifiers`. */
export type IdentifierType = 'phone' | 'email' | 'bank_account' | 'device' | 'other';

const PHONE_SEPARATORS = /[\s\-./\u00a0]/gu;

function canonicalPhone(raw: string): string {
  let s = raw.replace(PHONE_SEPARATORS, '');
  if (s.startsWith('00')) s = `+${s.slice(2)}`;
  // "+44 (0)20 …": the national trunk prefix written after the country code is not dialled.
  s = s.replace(/^(\+\d{1,3})\(0\)/u, '$1').replace(/[()]/gu, '');
  if (!/^\+[1-9]\d{6,14}$/.test(s)) {
    throw new TypeError(
      'hashIdentifier: a phone number must be international (E.164): "+" or "00", the country code, then 7 to 15 digits in all',
    );
  }
  return s;
}

function canonicalEmail(raw: string): string {
  const s = raw.trim().toLowerCase();
  const at = s.lastIndexOf('@');
  if (at < 1 || at === s.length - 1 || /\s/u.test(s)) throw new TypeError('hashIdentifier: not an e-mail address');
  return s;
}

function canonicalBankAccount(raw: string): string {
  const s = raw.replace(/\s/gu, '').toUpperCase();
  if (s === '') throw new TypeError('hashIdentifier: an empty bank account');
  return s;
}

/**
 * The canonical form `hashIdentifier` hashes. Unicode is NFKC-normalised first (full-width digits
 * and letters become ASCII). phone: E.164 ("+" and digits; spaces, dashes, dots, brackets, a
 * "(0)" after the country code and a leading "00" are rewritten); email: trimmed, lower-cased;
 * bank_account: every space removed, upper-cased (an IBAN as printed becomes its electronic
 * form); device, other: trimmed. Throws a TypeError for a value that has no canonical form.
 */
export function canonicalIdentifier(type: IdentifierType, raw: string): string {
  if (typeof raw !== 'string') throw new TypeError('hashIdentifier: the raw value must be a string');
  const s = raw.normalize('NFKC');
  switch (type) {
    case 'phone':
      return canonicalPhone(s);
    case 'email':
      return canonicalEmail(s);
    case 'bank_account':
      return canonicalBankAccount(s);
    case 'device':
    case 'other': {
      const t = s.trim();
      if (t === '') throw new TypeError(`hashIdentifier: an empty ${type} identifier`);
      return t;
    }
    default:
      throw new TypeError(`hashIdentifier: unknown identifier type ${JSON.stringify(type)}`);
  }
}

/**
 * SHA-256 (lower-case hex) of the canonical form: the `hash` to send in `linked_identifiers`, so
 * that every member of the network hashes the same phone, e-mail or IBAN to the same value.
 */
export function hashIdentifier(type: IdentifierType, raw: string): string {
  return createHash('sha256').update(canonicalIdentifier(type, raw), 'utf8').digest('hex');
}
