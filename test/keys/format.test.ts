import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { apiKeyPrefix, crc32Fallback, generateApiKey, parseApiKey } from '../../src/keys/format.ts';
import { generateSecret, safeEqualHex, sha256Hex } from '../../src/lib/digest.ts';
import { newId, encodeUlid, ulid } from '../../src/lib/ids.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = /^vch_(live|test)_[0-9A-Za-z]{49}$/;

// Independent encoder for the checksum so the test does not reuse the code under test.
function crcBase62(s: string): string {
  let n = zlib.crc32(s);
  let out = '';
  do {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(6, '0');
}

test('generated keys have the contract shape and parse back with their environment', () => {
  for (const env of ['live', 'test'] as const) {
    const key = generateApiKey(env);
    assert.equal(key.length, 58);
    assert.match(key, KEY_SHAPE);
    assert.ok(key.startsWith(`vch_${env}_`));
    assert.deepEqual(parseApiKey(key), { env });
  }
});

test('checksum is zlib CRC-32 of the head, base62, padded to 6', () => {
  // Known vector, cross-checked with Python's zlib.crc32: CRC-32 = 0xef14158d -> '4NS2lJ'.
  const head = 'vch_live_' + '0123456789abcdefghijABCDEFGHIJ0123456789abc';
  assert.equal(zlib.crc32(head), 0xef14158d);
  assert.equal(crcBase62(head), '4NS2lJ');
  assert.deepEqual(parseApiKey(head + '4NS2lJ'), { env: 'live' });
  assert.equal(parseApiKey(head + '4NS2lj'), null);
  // The standard CRC-32 check value, so crcBase62 itself is trustworthy: 0xCBF43926 -> '3jZRME'.
  assert.equal(zlib.crc32('123456789'), 0xcbf43926);
  assert.equal(crcBase62('123456789'), '3jZRME');
  // A small CRC is left-padded with '0'.
  const zeroHead = 'vch_test_' + '0'.repeat(43);
  assert.deepEqual(parseApiKey(zeroHead + crcBase62(zeroHead)), { env: 'test' });
  // Every generated key's last 6 chars are the independently computed checksum.
  const g = generateApiKey('test');
  assert.equal(g.slice(52), crcBase62(g.slice(0, 52)));
});

test('table CRC-32 fallback agrees with zlib.crc32', () => {
  assert.equal(crc32Fallback('123456789'), 0xcbf43926);
  assert.equal(crc32Fallback(''), 0);
  fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => crc32Fallback(s) === zlib.crc32(s)));
});

test('rejects a single changed character, wrong env, wrong length and non-base62 chars', () => {
  const key = generateApiKey('live');
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
  assert.equal(parseApiKey(flip(key, 20)), null);
  assert.equal(parseApiKey(flip(key, 57)), null);
  assert.equal(parseApiKey(key.replace('vch_live_', 'vch_prod_')), null);
  assert.equal(parseApiKey(key.replace('vch_live_', 'VCH_live_')), null);
  // Swapping env with a valid checksum for the other env's head still must match the env.
  const other = 'vch_test_' + key.slice(9, 52);
  assert.equal(parseApiKey(other + key.slice(52)), null);
  assert.equal(parseApiKey(key.slice(0, -1)), null);
  assert.equal(parseApiKey(key + '0'), null);
  assert.equal(parseApiKey(''), null);
  const head = 'vch_live_' + 'A'.repeat(42) + '-';
  assert.equal(parseApiKey(head + crcBase62(head)), null, 'non-base62 even with a valid CRC');
  const head2 = 'vch_live_' + 'A'.repeat(43);
  assert.equal(parseApiKey(head2 + crcBase62(head2).slice(0, 5) + '_'), null);
  assert.deepEqual(parseApiKey(head2 + crcBase62(head2)), { env: 'live' });
});

test('property: every generated key parses; every single-char mutation does not', () => {
  fc.assert(
    fc.property(
      fc.constantFrom('live' as const, 'test' as const),
      fc.nat(57),
      fc.constantFrom(...BASE62.split(''), '_', '-', '+', '/', ' ', 'é'),
      (env, pos, ch) => {
        const key = generateApiKey(env);
        assert.deepEqual(parseApiKey(key), { env });
        fc.pre(key[pos] !== ch);
        const mutated = key.slice(0, pos) + ch + key.slice(pos + 1);
        return parseApiKey(mutated) === null;
      },
    ),
    { numRuns: 2000 },
  );
});

test('property: mutating only the checksum is always caught', () => {
  const key = generateApiKey('live');
  fc.assert(
    fc.property(fc.integer({ min: 52, max: 57 }), fc.constantFrom(...BASE62.split('')), (pos, ch) => {
      fc.pre(key[pos] !== ch);
      return parseApiKey(key.slice(0, pos) + ch + key.slice(pos + 1)) === null;
    }),
  );
});

test('keys are unique and carry ~256 bits (no two equal in a sample)', () => {
  const seen = new Set(Array.from({ length: 500 }, () => generateApiKey('live')));
  assert.equal(seen.size, 500);
});

test('apiKeyPrefix is the first 16 chars', () => {
  const key = generateApiKey('test');
  assert.equal(apiKeyPrefix(key), key.slice(0, 16));
  assert.equal(apiKeyPrefix(key).length, 16);
  assert.ok(apiKeyPrefix(key).startsWith('vch_test_'));
});

test('sha256Hex and safeEqualHex', () => {
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  const d = sha256Hex('secret');
  assert.equal(safeEqualHex(d, sha256Hex('secret')), true);
  assert.equal(safeEqualHex(d, sha256Hex('secreT')), false);
  assert.equal(safeEqualHex(d, d.slice(0, -1)), false);
  assert.equal(safeEqualHex('', ''), true);
});

test('generateSecret is 32 random bytes in base64url', () => {
  const s = generateSecret();
  assert.match(s, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(Buffer.from(s, 'base64url').length, 32);
  assert.notEqual(s, generateSecret());
});

test('newId is prefix + 26-char Crockford ULID, monotonic within a millisecond', () => {
  const id = newId('key');
  assert.match(id, /^key_[0-9A-HJKMNP-TV-Z]{26}$/);
  const ids = Array.from({ length: 1000 }, () => newId('dec'));
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
  // Same and earlier timestamps still produce increasing ids.
  const t = Date.now() + 10_000;
  const a = ulid(t);
  const b = ulid(t);
  const c = ulid(t - 5);
  assert.ok(a < b && b < c);
  // The timestamp part decodes back to the time.
  const decoded = [...a.slice(0, 10)].reduce((n, ch) => n * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(ch), 0);
  assert.equal(decoded, t);
});

/** The encoding before issue 13: BigInt arithmetic over the whole 80-bit random part. */
function referenceCrockford(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

test('encodeUlid: the same characters as the BigInt encoding, also one step on (the increment within a millisecond)', () => {
  const half = fc.oneof(fc.integer({ min: 0, max: 2 ** 40 - 1 }), fc.constantFrom(0, 1, 2 ** 40 - 2, 2 ** 40 - 1));
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), half, half, (time, hi, lo) => {
      const random = (BigInt(hi) << 40n) + BigInt(lo);
      assert.equal(encodeUlid(time, hi, lo), referenceCrockford(BigInt(time), 10) + referenceCrockford(random, 16));
      if (random + 1n < 1n << 80n) {
        const [h, l] = lo < 2 ** 40 - 1 ? [hi, lo + 1] : [hi + 1, 0];
        assert.equal(
          encodeUlid(time, h, l),
          referenceCrockford(BigInt(time), 10) + referenceCrockford(random + 1n, 16),
        );
      }
    }),
    { numRuns: 2000 },
  );
});

test('ulid: thousands of ids within one millisecond stay strictly increasing across pool refills', () => {
  const t = Date.now() + 20_000;
  const ids = Array.from({ length: 3000 }, () => ulid(t));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!);
  const fresh = Array.from({ length: 600 }, (_, i) => ulid(t + 1 + i));
  assert.equal(new Set(fresh.map((id) => id.slice(10))).size, fresh.length);
});
