// canonicalJson, cacheKey and sha256Hex as computed before issue 13 (arrays of parts joined; a
// Hash object per digest): the faster versions must give the very same strings, since request
// digests and cache keys are stored with decisions. That earlier code is kept as the reference for
// odd values (sparse arrays, undefined members); what canonical means is checked on its own terms:
// the text reads back as the value, key order does not matter, and a worked example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { cacheKey, canonicalJson, requestDigest, type CacheKeyInput } from '../../src/trust/cache.ts';
import { sha256Hex } from '../../src/lib/digest.ts';

function referenceCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(referenceCanonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${referenceCanonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

test('canonicalJson: the same text as before for any value, sparse arrays and undefined members included', () => {
  fc.assert(
    fc.property(
      fc.anything({ withSparseArray: true, withNullPrototype: true, withObjectString: true, maxDepth: 4 }),
      (value) => {
        assert.equal(canonicalJson(value), referenceCanonicalJson(value));
      },
    ),
    { numRuns: 2000 },
  );
  /* eslint-disable no-sparse-arrays */
  assert.equal(
    canonicalJson([, 1, undefined, { b: undefined, a: [2, ,] }]),
    referenceCanonicalJson([, 1, undefined, { b: undefined, a: [2, ,] }]),
  );
  /* eslint-enable no-sparse-arrays */
});

/** The same value with every object's keys inserted in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).reverse();
  return Object.fromEntries(entries.map(([k, v]) => [k, reversedKeys(v)]));
}

test('canonicalJson of a JSON value: reads back as the value, whatever order its keys were written in', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const text = canonicalJson(value);
      assert.deepStrictEqual(JSON.parse(text), JSON.parse(JSON.stringify(value)));
      assert.equal(canonicalJson(reversedKeys(value)), text);
    }),
    { numRuns: 1000 },
  );
  // Keys sorted by UTF-16 code unit at every level (so "10" before "9", unlike JSON.stringify's integer keys).
  const request = { b: [1, { d: null, c: 'x' }], a: true, 9: 2, 10: 1, é: 0 };
  const text = '{"10":1,"9":2,"a":true,"b":[1,{"c":"x","d":null}],"é":0}';
  assert.equal(canonicalJson(request), text);
  assert.equal(requestDigest(request), createHash('sha256').update(text, 'utf8').digest('hex'));
});

test('sha256Hex and cacheKey: the digests createHash gives', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), fc.string(), fc.double({ noNaN: true }), (s, id, amount) => {
      assert.equal(sha256Hex(s), createHash('sha256').update(s, 'utf8').digest('hex'));
      const input = {
        principalId: id,
        environment: 'live' as const,
        policyVersion: 'v1',
        rulesRevision: '7',
        entityId: s,
        amount,
        currency: 'USD',
        context: { trade_id: id, linked_identifiers: [{ type: 'device' as const, hash: s }] },
      };
      const material = JSON.stringify([
        id,
        'live',
        'v1',
        '7',
        s,
        amount,
        'USD',
        [null, null, null, null, null, null, id],
        [`device\u0000${s}`],
      ]);
      assert.equal(cacheKey(input), createHash('sha256').update(material).digest('base64url'));
    }),
    { numRuns: 500 },
  );
});

test('cacheKey: the same for the same decision inputs written differently, another for any input changed', () => {
  const links = [
    { type: 'device' as const, hash: 'a'.repeat(64) },
    { type: 'phone' as const, hash: 'b'.repeat(64) },
  ];
  const context = {
    counterparty_id: 'cp',
    payment_method: 'card' as const,
    device_os: 'ios',
    linked_identifiers: links,
  };
  const base: CacheKeyInput = {
    principalId: 'p1',
    environment: 'live',
    policyVersion: 'v1',
    rulesRevision: '7',
    entityId: 'e1',
    amount: 100,
    currency: 'USD',
    context,
  };
  const key = cacheKey(base);
  // Context members in another order, linked identifiers reversed and one repeated.
  const rewritten = {
    linked_identifiers: [links[1]!, links[0]!, links[1]!],
    device_os: 'ios',
    payment_method: 'card' as const,
    counterparty_id: 'cp',
  };
  assert.equal(cacheKey({ ...base, context: rewritten }), key);
  const changes: Partial<CacheKeyInput>[] = [
    { principalId: 'p2' },
    { environment: 'test' },
    { policyVersion: 'v2' },
    { rulesRevision: '8' },
    { entityId: 'e2' },
    { amount: 100.01 },
    { currency: 'EUR' },
    { context: { ...context, payment_method: 'bank_transfer' } },
    { context: { ...context, country: 'NG' } },
    { context: { ...context, trade_id: 't1' } },
    { context: { ...context, device_os: 'android' } },
    { context: { ...context, linked_identifiers: [links[0]!] } },
  ];
  const keys = changes.map((change) => cacheKey({ ...base, ...change }));
  assert.equal(new Set([key, ...keys]).size, changes.length + 1, 'every change gives its own key');
});
