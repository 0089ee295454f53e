// The shapes a peer's answers must have (docs/network.md, "A peer's limits"): every label this
// deployment can seal fits the bounds the syncing side holds a peer's `sealed` to; nesting is
// refused before parsing, in place and in the worker thread alike; a peer's Retry-After is bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseBounded } from '../../src/network/bounded-json.ts';
import { parseOff } from '../../src/network/json-thread.ts';
import { RETRY_AFTER_MAX_S, retryAfterSeconds, SEALED_MAX_CHARS, SEALED_MIN_CHARS } from '../../src/network/limits.ts';
import { openLabel, sealLabel, type Label } from '../../src/network/oprf.ts';
import { FLAG_KINDS } from '../../src/model/network-signal.ts';
import { checkFlagsPage } from '../../src/network/pull.ts';
import { randomBytes } from 'node:crypto';

const label = fc.record({
  kinds: fc.dictionary(fc.constantFrom(...FLAG_KINDS), fc.integer({ min: 1, max: 1e9 }), {
    minKeys: 1,
    noNullPrototype: true,
  }),
  latest_month: fc
    .tuple(fc.integer({ min: 2000, max: 9999 }), fc.integer({ min: 1, max: 12 }))
    .map(([y, m]) => `${y}-${String(m).padStart(2, '0')}`),
});

test('every label sealed as the protocol says passes the page check, and opens', () => {
  fc.assert(
    fc.property(label, (l) => {
      const key = randomBytes(32);
      const tag = randomBytes(32).toString('base64url');
      const sealed = sealLabel(l as Label, key, tag);
      assert.ok(sealed.length >= SEALED_MIN_CHARS && sealed.length <= SEALED_MAX_CHARS, `${sealed.length}`);
      const page = checkFlagsPage({ epoch: '1.0', since: '1', next_cursor: null, entries: [{ tag, sealed }] }, 1);
      assert.equal(page.held.get(tag), sealed);
      assert.deepEqual(openLabel(sealed, key, tag), { kinds: { ...l.kinds }, latest_month: l.latest_month });
    }),
    { numRuns: 200 },
  );
});

test("a page check names what is wrong and never echoes the peer's bytes", () => {
  const tag = randomBytes(32).toString('base64url');
  assert.throws(
    () =>
      checkFlagsPage(
        {
          epoch: '1.0',
          since: '1',
          entries: [
            { tag, withdrawn: true },
            { tag, withdrawn: true },
          ],
        },
        1,
      ),
    /2 entries where at most 1 were asked/,
  );
  assert.throws(
    () => checkFlagsPage({ epoch: '1.0', since: '1', entries: [{ tag: `${tag}<script>`, withdrawn: true }] }, 1),
    (err: Error) => !err.message.includes('<script>'),
  );
  assert.throws(
    () => checkFlagsPage({ epoch: '1.0', since: '1', entries: [{ tag, withdrawn: true, sealed: 'x'.repeat(120) }] }, 1),
    /neither a sealed label/,
  );
  assert.deepEqual(
    [...checkFlagsPage({ epoch: '1.0', since: '1', entries: [{ tag, withdrawn: true }] }, 1).withdrawn],
    [tag],
  );
});

test('nesting past the bound is refused before parsing, in place and in the worker thread', async () => {
  assert.throws(() => parseBounded('[[[[[[[[[1]]]]]]]]]', 8), /nested deeper than 8/);
  assert.deepEqual(parseBounded('{"a":"[[[[[[[[[[[[","b":[[1]]}', 8), { a: '[[[[[[[[[[[[', b: [[1]] });
  assert.deepEqual(parseBounded('{"a":"\\"[[[[[[[[[[","b":1}', 8), { a: '"[[[[[[[[[[', b: 1 });
  // Past the size parsed in place (32 KiB): the worker answers.
  await assert.rejects(parseOff(`${'['.repeat(40_000)}${']'.repeat(40_000)}`, 8), /nested deeper than 8/);
  const big = { entries: Array.from({ length: 2000 }, (_, i) => ({ tag: String(i).repeat(10) })) };
  assert.deepEqual(await parseOff(JSON.stringify(big), 8), big);
  await assert.rejects(parseOff(`{"a":"${'x'.repeat(40_000)}`, 8));
});

test("a peer's Retry-After: seconds or an HTTP date, at least a second, at most a day", () => {
  assert.equal(retryAfterSeconds('3600'), 3600);
  assert.equal(retryAfterSeconds('0'), 1);
  assert.equal(retryAfterSeconds('999999999'), RETRY_AFTER_MAX_S);
  assert.equal(retryAfterSeconds(new Date(Date.now() + 120_000).toUTCString()), 120);
  assert.equal(retryAfterSeconds(undefined), 60);
  assert.equal(retryAfterSeconds('soon'), 60);
});
