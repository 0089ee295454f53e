import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { isDigest, looksLikeRawIdentifier, rawIdentifierIn } from '../../src/lib/identifiers.ts';
import { newId } from '../../src/lib/ids.ts';
import { digest, disguisedRawIdentifier } from '../helpers/fuzz.ts';
import { luhnComplete } from '../helpers/fuzz.ts';

test('e-mail addresses are refused', () => {
  for (const v of ['alice@example.com', 'a.b+tag@mail.example.co.uk', ' Bob@Example.ORG ', 'x@y-z.io']) {
    assert.equal(looksLikeRawIdentifier(v), 'email', v);
  }
});

test('phone numbers are refused', () => {
  for (const v of [
    '+14155552671',
    '+44 7700 900123',
    '+1 (415) 555-2671',
    '+49-30-901820',
    '(555) 123-4567',
    '555-123-4567',
    '555.123.4567',
    '07700 900123',
    '5551234',
    '14155552671',
    '447700900123',
  ]) {
    assert.equal(looksLikeRawIdentifier(v), 'phone', v);
  }
});

test('IBANs are refused (mod-97 valid, any case, spaces allowed)', () => {
  for (const v of [
    'GB82WEST12345698765432',
    'GB82 WEST 1234 5698 7654 32',
    'gb82west12345698765432',
    'DE89370400440532013000',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'NO9386011117947',
    'BR1800360305000010009795493C1',
  ]) {
    assert.equal(looksLikeRawIdentifier(v), 'iban', v);
  }
  // A wrong check digit or wrong length is not an IBAN (and has letters, so is not a phone).
  assert.equal(looksLikeRawIdentifier('GB83WEST12345698765432'), null);
  assert.equal(looksLikeRawIdentifier('GB82WEST1234569876543'), null);
});

test('card numbers are refused, and reported as card before phone', () => {
  for (const v of [
    '4111111111111111',
    '4111 1111 1111 1111',
    '4111-1111-1111-1111',
    '5500005555555559',
    '378282246310005',
    '6011000990139424',
    '4222222222222',
  ]) {
    assert.equal(looksLikeRawIdentifier(v), 'card', v);
  }
  // 16 digits failing Luhn: neither a card nor (too long) a phone.
  assert.equal(looksLikeRawIdentifier('4111111111111112'), null);
});

test('hashes and opaque ids are accepted', () => {
  const sha = createHash('sha256').update('x').digest();
  const accepted = [
    sha.toString('hex'),
    sha.toString('hex').toUpperCase(),
    sha.toString('base64url'),
    sha.toString('base64'),
    createHash('md5').update('x').digest('hex'),
    createHash('sha1').update('x').digest('hex'),
    '1'.repeat(64),
    randomUUID(),
    '12345678-1234-1234-1234-123456789012',
    newId('ent'),
    newId('x').slice(2),
    'user_12345',
    'user-1234567',
    'acct:9876543210abc',
    'merchant_42_buyer_7',
    '42',
    '123456',
    '12345678901234567890', // 20 digits: longer than any phone or card
    'hello world',
    '@handle',
    'user@localhost',
    'a@b.c1',
    'V1StGXR8_Z5jdHi6B-myT', // nanoid
    '',
  ];
  for (const v of accepted) assert.equal(looksLikeRawIdentifier(v), null, v);
});

test('property: random 64-char lowercase hex is never flagged', () => {
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }), (h) => {
      return looksLikeRawIdentifier(h) === null;
    }),
    { numRuns: 2000 },
  );
});

test('property: random 32-char hex (MD5) and 21–22 char base64url ids are never flagged', () => {
  const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 32, maxLength: 32 });
  const b64 = fc.string({
    unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
    minLength: 21,
    maxLength: 22,
  });
  fc.assert(
    fc.property(fc.oneof(hex, b64), (s) => {
      // An all-digit 21/22-char string is still not flagged (too long for a phone or card), so no pre().
      return looksLikeRawIdentifier(s) === null;
    }),
    { numRuns: 5000 },
  );
});

test('property: random Luhn-valid card numbers (13–19 digits, optional grouping) are flagged card', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 12, maxLength: 18 }),
      fc.constantFrom('', ' ', '-'),
      (body, sep) => {
        const digits = luhnComplete(body);
        const grouped = digits.replace(/(\d{4})(?=\d)/g, `$1${sep}`);
        return looksLikeRawIdentifier(grouped) === 'card';
      },
    ),
    { numRuns: 2000 },
  );
});

// Adversarial shapes that a backtracking or quadratic scan would choke on; each has a known answer.
// (Their timing lives in the bench: bench/micro-cpu.ts times the detector.)
test('long adversarial input gets the right answer', () => {
  const cases: Array<[string, string | null]> = [
    ['1 '.repeat(5000), 'phone'], // spaced digits: a window of them is a phone
    ['1-'.repeat(5000), null], // one dashed run of 5000 digits: no phone or card as a whole
    ['@'.repeat(10000), null],
    [`a@${'b.'.repeat(5000)}`, null],
    [`a@${'b.'.repeat(5000)}com`, 'email'],
    [`+${'('.repeat(10000)}`, null],
    ['GB82 '.repeat(2000), null],
    ['\u3164'.repeat(10000), null],
    ['%2'.repeat(5000), null],
    ['%41'.repeat(5000), null],
    ['&#43;'.repeat(2000), null],
    [`${'phone '.repeat(2000)}1`, null],
    ['x1234567'.repeat(1000), null],
    ['\ud83d\ude00'.repeat(5000), null],
    [`${'a'.repeat(10000)}4155552671`, null],
    [`${' '.repeat(10000)}4155552671${' '.repeat(10000)}`, 'phone'],
  ];
  for (const [value, kind] of cases)
    assert.equal(looksLikeRawIdentifier(value), kind, `${JSON.stringify(value.slice(0, 20))}…`);
});

// Issue 8, item 8: trivial disguises must not get a raw identifier past the detector.
test('disguised raw identifiers are refused (schemes, display names, full-width, other-script digits, separators, labels)', () => {
  const cases: Array<[string, string]> = [
    ['tel:+14155552671', 'phone'],
    ['TEL:+1-415-555-2671', 'phone'],
    ['sms:+14155552671', 'phone'],
    ['tel://+14155552671', 'phone'],
    ['+1_415_555_2671', 'phone'],
    ['+1/415/555/2671', 'phone'],
    ['+1\u2013415\u2013555\u20132671', 'phone'], // en dashes
    ['+1\u00a0415\u00a0555\u00a02671', 'phone'], // no-break spaces
    ['+1\u200b4155552671', 'phone'], // a zero-width space
    ['\uff0b\uff11\uff14\uff11\uff15\uff15\uff15\uff15\uff12\uff16\uff17\uff11', 'phone'], // full-width
    ['+\u0661\u0664\u0661\u0665\u0665\u0665\u0665\u0662\u0666\u0667\u0661', 'phone'], // Arabic-Indic digits
    ['\u0967\u096a\u0967\u096b\u096b\u096b\u096b\u0968\u096c\u096d\u0967', 'phone'], // Devanagari digits
    ['555_123_4567', 'phone'],
    ['+14155552671.', 'phone'],
    ['John Doe <a@b.com>', 'email'],
    ['"Doe, John" <mailto:alice@example.com>', 'email'],
    ['<alice@example.com>', 'email'],
    ['mailto:alice@example.com', 'email'],
    ['MAILTO:Alice@Example.COM', 'email'],
    ['a@b.com.', 'email'],
    ['alice\uff20example.com', 'email'], // full-width @
    ['alice\ufe6bexample.com', 'email'], // small commercial at
    ['alice@example\u3002com', 'email'], // ideographic full stop
    ['ali\u200bce@exa\u200bmple.com', 'email'],
    ['alice@пример.рф', 'email'],
    ['4111.1111.1111.1111', 'card'],
    ['4111_1111_1111_1111', 'card'],
    ['4111/1111/1111/1111', 'card'],
    ['4111\u20131111\u20131111\u20131111', 'card'],
    ['\uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11', 'card'],
    ['\u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661', 'card'],
    ['IBAN GB82 WEST 1234 5698 7654 32', 'iban'],
    ['iban: GB82WEST12345698765432', 'iban'],
    ['IBAN:DE89370400440532013000', 'iban'],
    ['GB82-WEST-1234-5698-7654-32', 'iban'],
    ['GB82.WEST.1234.5698.7654.32', 'iban'],
    ['GB82_WEST_1234_5698_7654_32', 'iban'],
    ['GB82/WEST/1234/5698/7654/32', 'iban'],
    [
      '\uff27\uff22\uff18\uff12\uff37\uff25\uff33\uff34\uff11\uff12\uff13\uff14\uff15\uff16\uff19\uff18\uff17\uff16\uff15\uff14\uff13\uff12',
      'iban',
    ],
    ['GB\u0668\u0662WEST12345698765432', 'iban'],
  ];
  for (const [v, kind] of cases) assert.equal(looksLikeRawIdentifier(v), kind, JSON.stringify(v));
});

test('normalisation does not turn opaque ids into raw identifiers', () => {
  for (const v of [
    'usr_01HZX3K4M5N6P7Q8R9S0T1V2W3',
    'tel:abc',
    'mailto:',
    '<>',
    'John Doe <>',
    'IBAN',
    'iban-lookup-service',
    '#order-12',
    'a@b.c1.',
    '\u0661\u0662\u0663', // three Arabic-Indic digits: a small number
    '2'.repeat(32),
  ]) {
    assert.equal(looksLikeRawIdentifier(v), null, JSON.stringify(v));
  }
});

test('isDigest: hex and base64url digests of at least 32 characters only', () => {
  const sha = createHash('sha256').update('x').digest();
  for (const v of [
    sha.toString('hex'),
    sha.toString('hex').toUpperCase(),
    sha.toString('base64url'),
    createHash('md5').update('x').digest('hex'),
    `${sha.toString('base64url')}=`,
  ]) {
    assert.equal(isDigest(v), true, v);
  }
  for (const v of [
    '',
    'abc',
    'f'.repeat(31),
    sha.toString('base64'),
    newId('usr'),
    'alice@example.com',
    `${'a'.repeat(40)} `,
    `${'a'.repeat(40)}\u0000`,
    'a'.repeat(40) + '===',
  ]) {
    assert.equal(isDigest(v), false, v);
  }
});

test('property: phones, e-mails, IBANs and Luhn-valid cards in random disguises are always detected', () => {
  fc.assert(
    fc.property(disguisedRawIdentifier, ({ kind, text }) => {
      const found = looksLikeRawIdentifier(text);
      // A 13–15 digit phone may also pass Luhn: either way it is refused.
      if (kind === 'phone') return found === 'phone' || found === 'card';
      return found === kind;
    }),
    { numRuns: 3000 },
  );
});

test('property: random hex and base64url digests (32–88 chars) are never flagged and always pass isDigest', () => {
  fc.assert(
    fc.property(digest, (s) => looksLikeRawIdentifier(s) === null && isDigest(s)),
    { numRuns: 5000 },
  );
});

test('review findings: quotes and brackets, trailing punctuation, edge separators, URI parameters, extensions and labels do not hide a raw identifier', () => {
  const cases: Array<[string, string]> = [
    ['"a@b.com"', 'email'],
    ['(a@b.com)', 'email'],
    ['[a@b.com]', 'email'],
    ["'a@b.com'", 'email'],
    ['(4111 1111 1111 1111)', 'card'],
    ['(GB82 WEST 1234 5698 7654 32)', 'iban'],
    ['a@b.com,', 'email'],
    ['a@b.com;', 'email'],
    ['a@b.com>', 'email'],
    ['-4111-1111-1111-1111-', 'card'],
    ['#4111111111111111', 'card'],
    ['+4111111111111111', 'card'],
    ['-GB82WEST12345698765432', 'iban'],
    ['tel:+1-415-555-0100;ext=12', 'phone'],
    ['mailto:a@b.com?subject=hi', 'email'],
    ['+1 415 555 0100 x12', 'phone'],
    ['+1 415 555 0100 ext. 12', 'phone'],
    ['phone: +14155550100', 'phone'],
    ['tel +14155550100', 'phone'],
    ['whatsapp:+14155550100', 'phone'],
    ['card:4111111111111111', 'card'],
  ];
  for (const [value, kind] of cases) {
    const found = looksLikeRawIdentifier(value);
    assert.ok(found === kind || (kind === 'phone' && found === 'card'), `${value}: ${found}`);
  }
  // and still not an order number glued to its word, a labelled hash or a URL
  for (const value of [
    'order#1234567',
    'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    'https://example.com/u/42',
    'usr_01HZX3K9Q2W8E5R7T6Y4U1I0OP',
  ]) {
    assert.equal(looksLikeRawIdentifier(value), null, value);
  }
});

test('rawIdentifierIn: the verdict of looksLikeRawIdentifier, whatever the holder has seen before', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.constantFrom('alice@example.com', '+14155552671', '4111 1111 1111 1111', 'GB82 WEST 1234 5698 7654 32'),
          fc.stringMatching(/^[0-9a-f]{8,64}$/),
          fc.string(),
        ),
        { maxLength: 20 },
      ),
      (values) => {
        const holder = {};
        for (const round of [1, 2]) {
          for (const v of values)
            assert.equal(
              rawIdentifierIn(v, holder),
              looksLikeRawIdentifier(v),
              `${JSON.stringify(v)} (round ${round})`,
            );
        }
        for (const v of values) assert.equal(rawIdentifierIn(v, undefined), looksLikeRawIdentifier(v));
      },
    ),
    { numRuns: 300 },
  );
});
