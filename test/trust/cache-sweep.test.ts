// The score cache's expiry sweep (src/trust/cache.ts, issue 42): it removes expired entries and keeps
// fresh ones, a slice of keys a turn, so the event loop is never held for the whole cache; an expired
// entry is never answered, swept or not. Time is a clock the test moves; turns are counted, never timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScoreCache, SWEEP_SLICE } from '../../src/trust/cache.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const entry = (i: number) => ({
  json: `{"n":${i}}`,
  entityId: `e${i}`,
  riskLevel: 'low',
  principalId: 'cli_test',
  state: `s${i}`,
  generation: i,
});

function clockedCache(ttlSeconds: number, maxEntries = 1_000) {
  const clock = { t: 1_000, now: () => clock.t };
  return { cache: new ScoreCache(ttlSeconds, { maxEntries, maxBytes: 1 << 30, clock }), clock };
}

test('a sweep removes the expired entries and keeps the fresh ones', async () => {
  const { cache, clock } = clockedCache(1);
  for (let i = 0; i < 300; i++) cache.set(`old${i}`, entry(i));
  for (let i = 0; i < 200; i++) cache.set(`long${i}`, entry(i), 10_000);
  clock.t += 600;
  for (let i = 0; i < 100; i++) cache.set(`new${i}`, entry(i));
  clock.t += 500;
  await cache.sweep();
  assert.equal(cache.size, 300);
  assert.equal(cache.get('old0'), undefined);
  assert.equal(cache.get('long199')?.entityId, 'e199');
  assert.equal(cache.get('new99')?.entityId, 'e99');
});

test('an expired entry is never answered, before any sweep', () => {
  const { cache, clock } = clockedCache(1);
  cache.set('k', entry(1));
  cache.set('short', entry(2), 10);
  clock.t += 11;
  assert.equal(cache.get('short'), undefined);
  assert.equal(cache.get('k')?.entityId, 'e1');
  clock.t += 1_000;
  assert.equal(cache.get('k'), undefined);
});

test('a sweep of 20,000 entries gives the event loop a turn between slices', async () => {
  const { cache, clock } = clockedCache(1, 20_000);
  for (let i = 0; i < 20_000; i++) cache.set(`k${i}`, entry(i));
  clock.t += 1_001;
  const sizes: number[] = [];
  let done = false;
  const sweep = cache.sweep().then(() => (done = true));
  while (!done) {
    sizes.push(cache.size);
    await nextTurn();
  }
  await sweep;
  assert.equal(cache.size, 0);
  assert.ok(sizes.length >= Math.floor(20_000 / SWEEP_SLICE) - 1, `${sizes.length} turns`);
  // Removed over successive turns: each slice at most SWEEP_SLICE entries, never all at once.
  for (let i = 1; i < sizes.length; i++) {
    assert.ok(sizes[i - 1]! - sizes[i]! <= SWEEP_SLICE, `turn ${i}: ${sizes[i - 1]} then ${sizes[i]}`);
  }
  assert.ok(sizes[0]! < 20_000 && sizes[0]! > 0);
});

test('entries set, read and evicted between slices leave a sweep correct', async () => {
  const { cache, clock } = clockedCache(1, 4_000);
  for (let i = 0; i < 3_000; i++) cache.set(`old${i}`, entry(i));
  clock.t += 1_001;
  let done = false;
  const sweep = cache.sweep().then(() => (done = true));
  let added = 0;
  while (!done) {
    // Fresh entries arrive (evicting the least recently used once full) and some are read again.
    for (let n = 0; n < 200; n++, added++) cache.set(`new${added}`, entry(added));
    assert.equal(cache.get(`new${added >> 1}`)?.entityId, `e${added >> 1}`);
    await nextTurn();
  }
  await sweep;
  assert.equal(cache.size, Math.min(added, 4_000));
  for (let i = 0; i < 3_000; i += 97) assert.equal(cache.get(`old${i}`), undefined);
  assert.equal(cache.get(`new${added - 1}`)?.entityId, `e${added - 1}`);
});

test('a sweep asked for while one runs is that one', async () => {
  const { cache, clock } = clockedCache(1);
  for (let i = 0; i < 1_000; i++) cache.set(`k${i}`, entry(i));
  clock.t += 1_001;
  const first = cache.sweep();
  assert.equal(cache.sweep(), first);
  await first;
  assert.equal(cache.size, 0);
});

test('the timer sweeps once a TTL', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { cache, clock } = clockedCache(2);
  for (let i = 0; i < 1_000; i++) cache.set(`k${i}`, entry(i));
  clock.t += 2_001;
  assert.equal(cache.size, 1_000);
  t.mock.timers.tick(2_000);
  for (let turn = 0; turn < 100 && cache.size > 0; turn++) await nextTurn();
  assert.equal(cache.size, 0);
});

test('clear drops every entry, and a sweep after it finds nothing to do', async () => {
  const { cache } = clockedCache(1);
  for (let i = 0; i < 100; i++) cache.set(`k${i}`, entry(i));
  cache.clear();
  assert.equal(cache.size, 0);
  await cache.sweep();
  cache.set('k1', entry(1));
  assert.equal(cache.get('k1')?.entityId, 'e1');
});

test('clear while a sweep runs answers nothing from before it, and entries set after it stay', async () => {
  const { cache, clock } = clockedCache(1, 4_000);
  for (let i = 0; i < 3_000; i++) cache.set(`old${i}`, entry(i));
  clock.t += 1_001;
  const sweep = cache.sweep();
  cache.clear();
  cache.set('after', entry(1));
  assert.equal(cache.size, 1);
  await sweep;
  assert.equal(cache.get('old2999'), undefined);
  assert.equal(cache.get('after')?.entityId, 'e1');
});
