// The cursor pagination every "newest first" listing shares (keys, webhooks and their deliveries,
// decisions, policies, an entity's timeline).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeTimeKey, encodeTimeKey, nextCursor, pageOf } from '../../src/lib/pagination.ts';

test('limit + 1 rows read: the first limit are the page, and another page follows', () => {
  const page = pageOf(['e', 'd', 'c', 'b'], 3);
  assert.deepEqual(page, { rows: ['e', 'd', 'c'], more: true });
  assert.equal(
    nextCursor(page, (last) => `after-${last}`),
    'after-c',
  );
});

test('limit rows or fewer read: the last page, with no next cursor', () => {
  assert.deepEqual(pageOf(['b', 'a'], 2), { rows: ['b', 'a'], more: false });
  assert.equal(
    nextCursor(pageOf(['b', 'a'], 2), () => 'never'),
    null,
  );
  assert.equal(
    nextCursor(pageOf([], 5), () => 'never'),
    null,
  );
});

test('paging through any listing visits every row once, in order', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 7 }), (count, limit) => {
      const all = Array.from({ length: count }, (_, i) => count - i);
      const seen: number[] = [];
      let after: number | undefined;
      for (let pages = 0; pages <= count; pages++) {
        const page = pageOf(all.filter((n) => after === undefined || n < after).slice(0, limit + 1), limit);
        seen.push(...page.rows);
        const cursor = nextCursor(page, (last) => String(last));
        if (cursor === null) break;
        after = Number(cursor);
      }
      assert.deepEqual(seen, all);
    }),
  );
});

test('a time-and-key cursor reads back the position it was made from', () => {
  assert.equal(encodeTimeKey({ at: 1764093600000, key: 'dec_01ABC' }), '1764093600000.dec_01ABC');
  assert.deepEqual(decodeTimeKey('1764093600000.dec_01ABC'), { at: 1764093600000, key: 'dec_01ABC' });
  // A key may hold dots (policy versions): the time ends at the first one.
  assert.deepEqual(decodeTimeKey('5.2026-11-24.1'), { at: 5, key: '2026-11-24.1' });
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.string({ minLength: 1, maxLength: 64 }),
      (at, key) => {
        assert.deepEqual(decodeTimeKey(encodeTimeKey({ at, key })), { at, key });
      },
    ),
  );
});

test('a cursor that is not time-and-key names no position', () => {
  for (const cursor of ['', '.key', '12', '12.', 'x.key', '-1.key', '12345678901234567.key'])
    assert.equal(decodeTimeKey(cursor), undefined, cursor);
});
