// Shared fast-check fuzzing material: hostile bodies and the check that an answer is well formed
// (never a 5xx; every 4xx a problem document carrying the request id).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_ID } from './app.ts';
import { generateApiKey } from '../../src/keys/format.ts';

export const RUNS = 150;
export const JSON_TYPE = { 'content-type': 'application/json' };

export function wellBehaved(res: LightMyRequestResponse, what: string): void {
  what = what.length > 300 ? `${what.slice(0, 300)}…` : what;
  assert.ok(res.statusCode < 500, `${what} -> ${res.statusCode}: ${res.body.slice(0, 300)}`);
  if (res.statusCode >= 400) {
    assert.match(
      String(res.headers['content-type']),
      /^application\/problem\+json/,
      `${what} -> ${res.statusCode} not problem+json`,
    );
    const body = res.json() as Record<string, unknown>;
    assert.equal(body.status, res.statusCode);
    assert.equal(body.type, `/problems/${String(body.code)}`);
    assert.equal(typeof body.title, 'string');
    assert.equal(typeof body.detail, 'string');
    assert.equal(body.request_id, res.headers['x-request-id']);
  }
}

// Strings that have broken services before.
export const nasty = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '💥',
  'e\u0301',
  '\u202e',
  '\r\n',
  '%00',
  "' or 1=1 --",
  '"; drop table api_keys; --',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'null',
  'NaN',
  '-0',
  '1e309',
  'keys:read',
  'keys:read keys:write',
  'admin',
  '2999-01-01T00:00:00Z',
  '2000-02-30T00:00:00Z',
  '9999-12-31T23:59:60Z',
  '+275760-09-13T00:00:00.000Z',
  'client_credentials',
  ADMIN_ID,
  'x'.repeat(1000),
  'y'.repeat(60_000),
  'key_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  'vch_live_',
  generateApiKey('live'),
);
export const scalar = fc.oneof(
  nasty,
  fc.string({ maxLength: 50 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, 604800, 604801, true, false, null),
);
export const value = fc.oneof(
  { depthSize: 'small' },
  scalar,
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(scalar, { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 4 }),
);

/**
 * JSON text with exactly the given keys, in order, duplicates and `__proto__` included (JSON.stringify would drop
 * them).
 */
export const objectText = (entries: [string, unknown][]) =>
  `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;

/** Bodies for an endpoint whose fields are `keys`. */
export function bodies(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...keys) },
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'owner_client_id', 'status', 'id'),
    fc.string({ maxLength: 10 }),
  );
  return fc.oneof(
    // Arbitrary JSON documents.
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    // The right keys with values of any type.
    fc.array(fc.tuple(fc.constantFrom(...keys), value), { maxLength: keys.length + 1 }).map(objectText),
    // Any keys, prototype-pollution ones included, possibly repeated.
    fc.array(fc.tuple(key, value), { maxLength: 8 }).map(objectText),
    // Deep nesting, as the whole body or inside a known field (up to about 60 KiB: under the body limit).
    fc
      .tuple(fc.integer({ min: 1, max: 30_000 }), fc.constantFrom(...keys), fc.constantFrom('[', '{"a":'))
      .map(([depth, k, open]) => {
        const close = open === '[' ? ']' : '}';
        return `{${JSON.stringify(k)}:${open.repeat(depth)}1${close.repeat(depth)}}`;
      }),
    fc.integer({ min: 1, max: 30_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
    // Huge strings, around the 64 KiB limit.
    fc
      .tuple(fc.constantFrom(...keys), fc.integer({ min: 30_000, max: 70_000 }))
      .map(([k, n]) => objectText([[k, 'z'.repeat(n)]])),
    // Broken JSON.
    fc.string({ maxLength: 40 }),
  );
}

// ---- Raw identifiers in disguise, and digests (the raw-identifier detector's fuzz material) ----

/** `body` with the check digit appended that makes it Luhn-valid (a card number for the detector). */
export function luhnComplete(body: number[]): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = body[body.length - 1 - i]!;
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body.join('') + String((10 - (sum % 10)) % 10);
}

const DIGIT_ZEROS = [0x30, 0x660, 0x6f0, 0x966, 0x9e6, 0xe50, 0xff10, 0x1040, 0x17e0, 0x1d7ce];
const SEPARATORS = [
  ' ',
  '-',
  '.',
  '_',
  '/',
  '\u00a0',
  '\u2009',
  '\u2013',
  '\u2011',
  '\u00b7',
  '\u200b',
  '\u3000',
  '\uff0d',
  '(',
  ')',
];
const digit = fc.integer({ min: 0, max: 9 });
const sepArb = fc.constantFrom(...SEPARATORS);

/** Writes every ASCII digit of `s` in one randomly chosen script. */
const inScript = (s: string, zero: number) => s.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));
/** Full-width forms of ASCII letters, digits and '@', '+', '.'. */
const fullWidth = (s: string) => s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

/** Splits `s` into groups at random points and joins them with random separators. */
function separated(s: string): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.boolean(), sepArb), { minLength: s.length, maxLength: s.length })
    .map((cuts) => [...s].map((c, i) => (i > 0 && cuts[i]![0] ? cuts[i]![1] : '') + c).join(''));
}

const phoneArb = fc
  .oneof(
    fc
      .array(digit, { minLength: 8, maxLength: 15 })
      .filter((d) => d[0] !== 0)
      .map((d) => `+${d.join('')}`),
    fc.array(digit, { minLength: 7, maxLength: 12 }).map((d) => d.join('')),
  )
  .chain((p) => {
    const plus = p.startsWith('+');
    return separated(plus ? p.slice(1) : p).map((body) => (plus ? `+${body}` : body));
  });

const cardArb = fc.array(digit, { minLength: 12, maxLength: 18 }).map(luhnComplete).chain(separated);

// Valid IBANs built from a country's registered length and a computed mod-97 check.
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
];
const ibanChar = fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ');
const ibanArb = fc
  .constantFrom(...IBAN_COUNTRIES)
  .chain(([cc, len]) =>
    fc.array(ibanChar, { minLength: len - 4, maxLength: len - 4 }).map((bban) => {
      const numeric = (s: string) => [...s].map((c) => (/[0-9]/.test(c) ? c : String(c.charCodeAt(0) - 55))).join('');
      let rem = 0;
      for (const c of numeric(`${bban.join('')}${cc}00`)) rem = (rem * 10 + Number(c)) % 97;
      return `${cc}${String(98 - rem).padStart(2, '0')}${bban.join('')}`;
    }),
  )
  .chain((iban) =>
    fc
      .tuple(fc.constantFrom('', ' ', '-', '.', '_', '/', '\u00a0'), fc.constantFrom('', 'IBAN ', 'iban: ', 'IBAN:'))
      .map(([sep, label]) => label + iban.replace(/(.{4})(?=.)/g, `$1${sep}`)),
  );

const wordArb = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'),
  minLength: 1,
  maxLength: 10,
});
const emailArb = fc
  .tuple(
    fc.array(wordArb, { minLength: 1, maxLength: 3 }),
    fc.array(
      wordArb.map((w) => w.replace(/^[0-9]+/, 'x')),
      { minLength: 1, maxLength: 3 },
    ),
    fc.constantFrom('com', 'org', 'io', 'co.uk', 'de', 'email'),
  )
  .map(([local, domain, tld]) => `${local.join('.')}@${domain.join('.')}.${tld}`);

const randomCase = (s: string) =>
  fc
    .array(fc.boolean(), { minLength: s.length, maxLength: s.length })
    .map((up) => [...s].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));

/** Wraps an identifier in the disguises a careless or evasive client might use. */
function disguised(kind: 'phone' | 'email' | 'card' | 'iban', value: string): fc.Arbitrary<string> {
  return fc
    .record({
      script: fc.constantFrom(...DIGIT_ZEROS),
      wide: fc.boolean(),
      scheme: fc.constantFrom(
        '',
        kind === 'email' ? 'mailto:' : kind === 'phone' ? 'tel:' : '',
        kind === 'phone' ? 'SMS:' : '',
      ),
      name: fc.constantFrom('', 'John Doe', '"Doe, John"', 'Ødegård'),
      dot: fc.boolean(),
      pad: fc.constantFrom('', ' ', '\t', '\u3000'),
      // quotes and brackets around the whole value
      wrap: fc.constantFrom('', '""', "''", '()', '[]', '{}', '«»', '\u201c\u201d'),
      // a label in front: "phone: +1…", "whatsapp:+1…", "card 4111…"
      label: fc.constantFrom('', 'phone: ', 'contact:', 'whatsapp:', 'Card ', 'mail: ', 'tel '),
      // punctuation after it, as pasted from a sentence
      tail: fc.constantFrom('', ',', ';', '!', ':'),
      // parameters of a tel: or mailto: URI, or a phone extension
      extra: fc.constantFrom(
        '',
        kind === 'phone' ? ';ext=12' : kind === 'email' ? '?subject=hi' : '',
        kind === 'phone' ? ' x12' : '',
        kind === 'phone' ? ' ext. 345' : '',
      ),
      // separators around a card or IBAN
      edge: fc.constantFrom(
        '',
        kind === 'card' || kind === 'iban' ? '-' : '',
        kind === 'card' ? '#' : '',
        kind === 'card' ? '+' : '',
      ),
    })
    .chain((d) =>
      (kind === 'email' || kind === 'iban' ? randomCase(value) : fc.constant(value)).map((v) => {
        let s = kind === 'email' ? v : inScript(v, d.script);
        if (d.wide) s = fullWidth(s);
        s = d.edge + s + (d.edge === '-' ? '-' : '');
        s = d.scheme + s + (d.scheme || d.extra.startsWith(' ') ? d.extra : '');
        if (d.name) s = `${d.name} <${s}>`;
        else if (d.dot) s = `${s}.`;
        else if (d.wrap) s = `${d.wrap[0]}${s}${d.wrap[1]}`;
        s = d.label + s + d.tail;
        return d.pad + s + d.pad;
      }),
    );
}

export type RawKind = 'phone' | 'email' | 'card' | 'iban';

/** A real-shaped phone, e-mail, valid IBAN or Luhn-valid card, in a random disguise. */
export const disguisedRawIdentifier: fc.Arbitrary<{ kind: RawKind; value: string; text: string }> = fc.oneof(
  phoneArb.chain((value) => disguised('phone', value).map((text) => ({ kind: 'phone' as const, value, text }))),
  emailArb.chain((value) => disguised('email', value).map((text) => ({ kind: 'email' as const, value, text }))),
  cardArb.chain((value) => disguised('card', value).map((text) => ({ kind: 'card' as const, value, text }))),
  ibanArb.chain((value) => disguised('iban', value).map((text) => ({ kind: 'iban' as const, value, text }))),
);

/** Hex and base64url digests of 32 to 88 characters. */
export const digest: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 32, maxLength: 64 }),
  fc.string({
    unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
    minLength: 32,
    maxLength: 88,
  }),
  fc
    .uint8Array({ minLength: 24, maxLength: 64 })
    .chain((b) => fc.constantFrom(Buffer.from(b).toString('hex'), Buffer.from(b).toString('base64url'))),
);
