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
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/, `${what} -> ${res.statusCode} not problem+json`);
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
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff\ud800', '💥', 'e\u0301', '\u202e', '\r\n', '%00', "' or 1=1 --", '"; drop table api_keys; --',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'null', 'NaN', '-0', '1e309', 'keys:read', 'keys:read keys:write', 'admin',
  '2999-01-01T00:00:00Z', '2000-02-30T00:00:00Z', '9999-12-31T23:59:60Z', '+275760-09-13T00:00:00.000Z', 'client_credentials', ADMIN_ID,
  'x'.repeat(1000), 'y'.repeat(60_000), 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'vch_live_', generateApiKey('live'),
);
export const scalar = fc.oneof(
  nasty,
  fc.string({ maxLength: 50 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, 604800, 604801, true, false, null),
);
export const value = fc.oneof({ depthSize: 'small' }, scalar, fc.jsonValue({ maxDepth: 3 }), fc.array(scalar, { maxLength: 5 }), fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 4 }));

/** JSON text with exactly the given keys, in order, duplicates and `__proto__` included (JSON.stringify would drop them). */
export const objectText = (entries: [string, unknown][]) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;

/** Bodies for an endpoint whose fields are `keys`. */
export function bodies(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, fc.constantFrom('__proto__', 'constructor', 'prototype', 'owner_client_id', 'status', 'id'), fc.string({ maxLength: 10 }));
  return fc.oneof(
    // Arbitrary JSON documents.
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
    // The right keys with values of any type.
    fc.array(fc.tuple(fc.constantFrom(...keys), value), { maxLength: keys.length + 1 }).map(objectText),
    // Any keys, prototype-pollution ones included, possibly repeated.
    fc.array(fc.tuple(key, value), { maxLength: 8 }).map(objectText),
    // Deep nesting, as the whole body or inside a known field.
    fc.tuple(fc.integer({ min: 1, max: 5000 }), fc.constantFrom(...keys), fc.constantFrom('[', '{"a":')).map(([depth, k, open]) => {
      const close = open === '[' ? ']' : '}';
      return `{${JSON.stringify(k)}:${open.repeat(depth)}1${close.repeat(depth)}}`;
    }),
    fc.integer({ min: 1, max: 5000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
    // Huge strings, around the 64 KiB limit.
    fc.tuple(fc.constantFrom(...keys), fc.integer({ min: 30_000, max: 70_000 })).map(([k, n]) => objectText([[k, 'z'.repeat(n)]])),
    // Broken JSON.
    fc.string({ maxLength: 40 }),
  );
}
