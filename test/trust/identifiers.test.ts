import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { looksLikeRawIdentifier } from '../../src/trust/identifiers.ts';
import { newId } from '../../src/keys/format.ts';

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
  for (const v of ['4111111111111111', '4111 1111 1111 1111', '4111-1111-1111-1111', '5500005555555559', '378282246310005', '6011000990139424', '4222222222222']) {
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

function luhnComplete(body: number[]): string {
  // Append the check digit that makes `body` Luhn-valid.
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

test('stays fast on long adversarial input', () => {
  const inputs = ['1 '.repeat(5000), '@'.repeat(10000), 'a@' + 'b.'.repeat(5000), '+' + '('.repeat(10000), 'GB82 '.repeat(2000)];
  const start = performance.now();
  for (const v of inputs) looksLikeRawIdentifier(v);
  assert.ok(performance.now() - start < 200);
});
