// Raw identifiers in composed disguises, for the detector's property tests (unit and HTTP): each
// draw is a valid phone, e-mail, IBAN or Luhn-valid card with several disguises stacked on it
// (docs/api.md, "Raw identifiers"), and legitimate ids that must never be refused.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { luhnComplete } from './fuzz.ts';

export type RawKind = 'phone' | 'email' | 'iban' | 'card';

interface CorpusEntry {
  value: string;
  why: string;
  kind?: RawKind;
}
export interface IdentifierCorpus {
  refused: Array<CorpusEntry & { kind: RawKind }>;
  accepted: CorpusEntry[];
  text_refused: Array<CorpusEntry & { kind: RawKind }>;
  text_accepted: CorpusEntry[];
}

export const corpus = JSON.parse(
  readFileSync(new URL('./identifier-corpus.json', import.meta.url), 'utf8'),
) as IdentifierCorpus;

/** Whether `found` is the answer expected for `kind`: a 13–15 digit phone may also pass Luhn. */
export const refusedAs = (kind: RawKind, found: string | null): boolean =>
  found === kind || (kind === 'phone' && found === 'card');

// ---- the identifiers ----

const digit = fc.integer({ min: 0, max: 9 });
const phone = fc.oneof(
  fc
    .array(digit, { minLength: 8, maxLength: 15 })
    .filter((d) => d[0] !== 0)
    .map((d) => `+${d.join('')}`),
  fc.array(digit, { minLength: 7, maxLength: 12 }).map((d) => d.join('')),
);
const card = fc.array(digit, { minLength: 12, maxLength: 18 }).map(luhnComplete);

const IBAN_COUNTRIES: Array<[string, number]> = [
  ['GB', 22],
  ['DE', 22],
  ['FR', 27],
  ['NL', 18],
  ['NO', 15],
  ['ES', 24],
  ['IT', 27],
  ['BE', 16],
  ['CH', 21],
  ['PL', 28],
  ['MT', 31],
  ['LC', 32],
  ['RU', 33],
];
const iban = fc.constantFrom(...IBAN_COUNTRIES).chain(([cc, len]) =>
  fc
    .array(fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'), { minLength: len - 4, maxLength: len - 4 })
    .map((chars) => {
      const bban = chars.join('');
      let rem = 0;
      for (const c of `${bban}${cc}00`) {
        rem = /[0-9]/.test(c) ? (rem * 10 + Number(c)) % 97 : (rem * 100 + c.charCodeAt(0) - 55) % 97;
      }
      return `${cc}${String(98 - rem).padStart(2, '0')}${bban}`;
    }),
);

const word = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'),
  minLength: 1,
  maxLength: 10,
});
const email = fc
  .tuple(
    fc.array(word, { minLength: 1, maxLength: 3 }),
    fc.array(
      word.map((w) => `d${w}`),
      { minLength: 1, maxLength: 3 },
    ),
    fc.constantFrom('com', 'org', 'io', 'co.uk', 'email', 'xn--p1ai', 'xn--90ais', 'рф'),
  )
  .map(([local, domain, tld]) => `${local.join('.')}@${domain.join('.')}.${tld}`);

// ---- the disguises ----

/** Invisible: default-ignorable and filler code points, which may go anywhere, even inside an e-mail. */
export const INVISIBLE = [
  '\u3164',
  '\uffa0',
  '\u1160',
  '\u115f',
  '\u180e',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u2060',
  '\u2061',
  '\u2062',
  '\u2063',
  '\u2064',
  '\ufeff',
  '\u00ad',
  '\u034f',
  '\ufe0f',
  '\u061c',
  '\u17b4',
  '\u202a',
  '\u202e',
  '\u{e0020}',
];
/** Visible separators between the digits of a phone or card or the characters of an IBAN. */
const VISIBLE = [
  ' ',
  '  ',
  '-',
  '.',
  '_',
  '/',
  '\\',
  '*',
  '~',
  '#',
  '|',
  ',',
  ':',
  '(',
  ')',
  '[',
  ']',
  '\u00a0',
  '\u2009',
  '\u202f',
  '\u2013',
  '\u2014',
  '\u2011',
  '\u2012',
  '\u00b7',
  '\u2022',
  '\u3000',
  '\uff0d',
  '\u2800',
  '\u30fc',
  '\ufe58',
  '\u2010',
  '\ue000',
  ' - ',
];
const DIGIT_ZEROS = [
  0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xbe6, 0xe50, 0xed0, 0xf20, 0x1040, 0x17e0, 0x1810, 0xff10, 0x1d7ce,
  0x1d7d8, 0x1e950,
];
const LABELS = [
  'phone',
  'Phone',
  'TEL',
  'tel',
  'mobile',
  'whatsapp',
  'sms',
  'fax',
  'card',
  'pan',
  'visa',
  'iban',
  'IBAN',
  'email',
  'mail',
  'contact',
  'cell',
];
const LABEL_JOINERS = ['=', ':', ': ', '/', '_', '-', '.', '#', ' ', ' - ', '=>', '|', '~', '*', '\u3164', '%3D'];
const KEYS = ['ref', 'user', 'id', 'customer', 'x'];
const KEY_JOINERS = [':', '=', ': ', ' = ', ' '];
const WRAPS = [
  ['', ''],
  ['"', '"'],
  ["'", "'"],
  ['(', ')'],
  ['[', ']'],
  ['{', '}'],
  ['<', '>'],
  ['\u00ab', '\u00bb'],
  ['\u201c', '\u201d'],
  ['\u300c', '\u300d'],
];
const EDGE_PUNCTUATION = ['', '#', '*', '~', '-', '/', '.', '!', '?', ',', ';', '+', '_', '\u3164', '\u2800', '...'];
const TRAILING_WORDS = [
  '',
  ' (mobile)',
  '(home)',
  ' mobile',
  '-home',
  '_exp',
  ' exp',
  ' exp 12/27',
  ' [work]',
  ' please',
  ' \u2014 call after 6',
];
const SCHEMES: Record<RawKind, string[]> = {
  phone: ['tel:', 'TEL:', 'sms:', 'callto:', 'tel://'],
  email: ['mailto:', 'MAILTO:'],
  card: [],
  iban: [],
};

const inScript = (s: string, zero: number) => s.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));
/** Full-width forms of printable ASCII (NFKC maps them back). */
const fullWidth = (s: string) => s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
/** Circled and superscript digits (NFKC maps them to ASCII digits). */
const CIRCLED = ['\u24ea', '\u2460', '\u2461', '\u2462', '\u2463', '\u2464', '\u2465', '\u2466', '\u2467', '\u2468'];
const SUPERSCRIPT = [
  '\u2070',
  '\u00b9',
  '\u00b2',
  '\u00b3',
  '\u2074',
  '\u2075',
  '\u2076',
  '\u2077',
  '\u2078',
  '\u2079',
];

/** Percent-encodes each character of `s` whose flag is set (UTF-8 bytes, as a URL would carry it). */
const percentEncoded = (s: string, flags: boolean[], twice: boolean) =>
  [...s]
    .map((c, i) => {
      if (!flags[i % flags.length]) return c;
      const once = [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      return twice ? once.replace(/%/g, '%25') : once;
    })
    .join('');

// Free text reads digits joined by '.', ',', '-', '/' or ':' in a date, time or amount shape as
// that; elsewhere the same separators may go anywhere.
const PROSE_NUMBER_JOINERS = new Set(['.', ',', '-', '/', ':', '\uff0d', ' - ']);
const TEXT_SEPARATORS = [...VISIBLE.filter((c) => !PROSE_NUMBER_JOINERS.has(c)), ...INVISIBLE];

const disguiseOf = (separators: string[]) =>
  fc.record({
    separators: fc.array(fc.option(fc.constantFrom(...separators), { freq: 2 }), { minLength: 40, maxLength: 40 }),
    invisible: fc.array(fc.option(fc.constantFrom(...INVISIBLE), { freq: 4 }), { minLength: 40, maxLength: 40 }),
    digits: fc.oneof(
      fc.constantFrom(...DIGIT_ZEROS).map((zero) => (s: string) => inScript(s, zero)),
      fc.constantFrom(
        (s: string) => s.replace(/[0-9]/g, (d) => CIRCLED[Number(d)]!),
        (s: string) => s.replace(/[0-9]/g, (d) => SUPERSCRIPT[Number(d)]!),
      ),
    ),
    otherDigits: fc.boolean(),
    wide: fc.boolean(),
    upper: fc.boolean(),
    scheme: fc.nat(),
    label: fc.option(fc.tuple(fc.constantFrom(...LABELS), fc.constantFrom(...LABEL_JOINERS)), { freq: 2 }),
    key: fc.option(fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom(...KEY_JOINERS)), { freq: 4 }),
    displayName: fc.option(fc.constantFrom('John Doe', '"Doe, John"', '\u00d8deg\u00e5rd'), { freq: 4 }),
    wrap: fc.constantFrom(...WRAPS),
    lead: fc.constantFrom(...EDGE_PUNCTUATION),
    tail: fc.constantFrom(...EDGE_PUNCTUATION),
    trailing: fc.constantFrom(...TRAILING_WORDS),
    pad: fc.constantFrom('', ' ', '\t', '\u3000', '\u3164'),
    percent: fc.option(fc.tuple(fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), fc.boolean()), { freq: 3 }),
  });
type Disguise = ReturnType<typeof disguiseOf> extends fc.Arbitrary<infer T> ? T : never;

/**
 * Separators (visible for digit runs and IBANs, invisible only inside an e-mail) between
 * characters; `printedIban`: whitespace in an IBAN only between groups of four, as free text
 * requires (a sentence's short words are not an IBAN's groups).
 */
function separate(kind: RawKind, value: string, d: Disguise, printedIban: boolean): string {
  const chars = [...value];
  return chars
    .map((c, i) => {
      if (i === 0) return c;
      let sep = kind === 'email' ? d.invisible[i % d.invisible.length] : d.separators[i % d.separators.length];
      if (kind === 'iban' && printedIban && sep && /\s/u.test(sep.normalize('NFKC')) && i % 4 !== 0) sep = '\u200b';
      return (sep ?? '') + c;
    })
    .join('');
}

function disguise(kind: RawKind, value: string, d: Disguise, printedIban: boolean): string {
  let s = kind === 'iban' && !d.upper ? value.toLowerCase() : value;
  s = separate(kind, s, d, printedIban);
  if (d.otherDigits && kind !== 'email') s = d.digits(s);
  if (d.wide) s = fullWidth(s);
  const schemes = SCHEMES[kind];
  if (schemes.length > 0 && d.scheme % 3 === 0) s = schemes[d.scheme % schemes.length]! + s;
  if (d.displayName !== null && kind === 'email') s = `${d.displayName} <${s}>`;
  else s = d.wrap[0] + d.lead + s + d.tail + d.wrap[1];
  s += d.trailing;
  if (d.label) {
    // Only the IBAN label may be glued to an IBAN (`IBANGB82…`): any other word would make it part of that word.
    const [label, joiner] = d.label;
    const glued = joiner === '' || joiner === '\u3164';
    if (!(kind === 'iban' && glued && label.toLowerCase() !== 'iban')) s = label + joiner + s;
  }
  if (d.key) s = d.key[0] + d.key[1] + s;
  if (d.percent) s = percentEncoded(s, d.percent[0], d.percent[1]);
  return d.pad + s + d.pad;
}

const raw: fc.Arbitrary<{ kind: RawKind; value: string }> = fc.oneof(
  phone.map((value) => ({ kind: 'phone' as const, value })),
  email.map((value) => ({ kind: 'email' as const, value })),
  card.map((value) => ({ kind: 'card' as const, value })),
  iban.map((value) => ({ kind: 'iban' as const, value })),
);

type Disguised = fc.Arbitrary<{ kind: RawKind; value: string; text: string }>;
const composed = (separators: string[], forText: boolean): Disguised =>
  fc
    .tuple(raw, disguiseOf(separators))
    .map(([{ kind, value }, d]) => ({ kind, value, text: disguise(kind, value, d, forText) }));

/** A valid phone, e-mail, IBAN or Luhn-valid card with random disguises stacked on it. */
export const composedDisguise = composed([...VISIBLE, ...INVISIBLE], false);
/**
 * The same for free text: no separator that would write a date, time or amount (see
 * PROSE_NUMBER_JOINERS), and whitespace in an IBAN only between its groups of four.
 */
export const composedDisguiseForText = composed(TEXT_SEPARATORS, true);

// ---- legitimate ids ----

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Ids a caller legitimately sends: digests, ULIDs, UUIDs, prefixed ids with short numbers. */
export const legitimateId: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 64 }),
  fc.string({ unit: fc.constantFrom(...'0123456789ABCDEF'), minLength: 40, maxLength: 64 }),
  fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 21, maxLength: 88 }),
  fc.uint8Array({ minLength: 16, maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')),
  fc
    .tuple(
      fc.constantFrom('', 'ent_', 'usr_', 'dec_'),
      fc.string({ unit: fc.constantFrom(...CROCKFORD), minLength: 16, maxLength: 16 }),
    )
    .map(([prefix, random]) => `${prefix}01J${'D4KXR8Q'}${random}`),
  fc.uuid(),
  fc
    .tuple(
      fc.constantFrom('user', 'acct', 'order', 'merchant', 'buyer', 'trade'),
      fc.constantFrom('_', '-', '#', '/', '.'),
      fc.integer({ min: 0, max: 999_999 }),
    )
    .map(([prefix, joiner, n]) => `${prefix}${joiner}${n}`),
  fc
    .tuple(
      fc.constantFrom('user', 'acct', 'order', 'ref'),
      fc.constantFrom('_', '-', '#', '/'),
      fc.bigInt({ min: 1_000_000n, max: 10n ** 15n }),
    )
    .map(([prefix, joiner, n]) => `${prefix}${joiner}${n}`),
  fc.integer({ min: 0, max: 999_999 }).map(String),
);
