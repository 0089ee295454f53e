// Flags pages answered from a small cache (docs/network.md, "A peer's request rate"): the same
// page asked again is the same answer, not recomputed; a change of the published set (a new flag,
// an erasure) is served at once; entries expire and the cache holds a bounded number of entries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { pageCache, type PageKey } from '../../src/network/page-cache.ts';
import type { FlagsPage } from '../../src/network/flags-page.ts';
import { networkDb } from '../../src/network/tables.ts';
import { signedInject, standInPeer } from './support.ts';

const page = (entries: number): FlagsPage => ({
  epoch: '1.0',
  entries: Array.from({ length: entries }, (_, i) => ({ tag: `t${i}`, withdrawn: true as const })),
  next_cursor: null,
  since: '0',
});
const key = (over: Partial<PageKey> = {}): PageKey => ({
  peerId: 'p',
  epoch: '0:chargeback',
  since: 0,
  cursor: undefined,
  limit: 1000,
  ...over,
});

describeEachBackend('Flags pages from a cache', (ctx) => {
  test('the same page is computed once; another peer, limit or cursor is not the same page; entries expire', async () => {
    let clock = 1_000_000;
    const cache = pageCache(() => clock);
    const db = networkDb(ctx().store.db);
    let computed = 0;
    const compute = async () => page(++computed);
    assert.equal((await cache.get(db, key(), compute)).cached, false);
    const again = await cache.get(db, key(), compute);
    assert.deepEqual([again.cached, again.page.entries.length, computed], [true, 1, 1]);
    for (const other of [
      key({ peerId: 'q' }),
      key({ limit: 999 }),
      key({ cursor: '5.x' }),
      key({ since: 3 }),
      key({ epoch: '1:chargeback' }),
    ]) {
      assert.equal((await cache.get(db, other, compute)).cached, false);
    }
    clock += 31_000;
    assert.equal((await cache.get(db, key(), compute)).cached, false);
  });

  test('the cache holds a bounded number of entries: the oldest pages go first', async () => {
    let clock = 0;
    const cache = pageCache(() => clock);
    const db = networkDb(ctx().store.db);
    const big = async () => page(5000);
    for (let i = 0; i < 5; i++) {
      clock += 1;
      await cache.get(db, key({ peerId: `big${i}` }), big);
    }
    // 20,000 entries at most: the first of five 5,000-entry pages made room for the fifth.
    assert.equal((await cache.get(db, key({ peerId: 'big0' }), big)).cached, false);
    assert.equal((await cache.get(db, key({ peerId: 'big4' }), big)).cached, true);
  });

  test('over HTTP: the same page twice is the same answer; a new flag and an erasure are served at once', async () => {
    const admin = await ctx().token();
    const peer = standInPeer();
    const added = await ctx().inject({
      method: 'POST',
      url: '/api/v1/network/peers',
      headers: bearer(admin),
      payload: { name: 'puller', url: 'https://93.184.216.34', signing_key: peer.signingKey },
    });
    assert.equal(added.statusCode, 201, added.body);
    const flag = async (n: number) => {
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/events',
        headers: bearer(admin),
        payload: {
          events: [
            {
              event_id: `cache-${n}`,
              type: 'fraud.reported',
              entity_id: `c${n}`.repeat(32),
              occurred_at: '2026-10-03T10:00:00Z',
              linked_identifiers: [{ type: 'phone', hash: `${n}f`.repeat(32) }],
            },
          ],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    const pull = async () => {
      const res = await signedInject(ctx(), peer, 'GET', '/network/v1/flags?limit=5000');
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { entries: Array<{ tag: string; sealed?: string }> };
    };
    await flag(1);
    const first = await pull();
    assert.equal(first.entries.length, 1);
    // Labels are sealed with a fresh IV each time: the very same bytes mean the page was not recomputed.
    assert.deepEqual(await pull(), first);
    await flag(2);
    const grown = await pull();
    assert.equal(grown.entries.length, 2);
    const erased = await ctx().inject({
      method: 'DELETE',
      url: `/api/v1/trust/entities/${'c1'.repeat(32)}`,
      headers: bearer(admin),
    });
    assert.equal(erased.statusCode, 200, erased.body);
    const after = await pull();
    assert.equal(after.entries.length, 1);
    assert.ok(
      !after.entries.some((e) => first.entries.some((f) => f.tag === e.tag)),
      'the erased identifier is no longer served',
    );
  });
});
