// The host-wide rate-limit store's parts, without processes: the primary's counters (fixed
// windows), one IPC message per event-loop turn, and local counting when the primary is silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostCounters, clusterStoreOver } from '../../src/http/cluster-rate-limit.ts';

type Result = { current: number; ttl: number };
const incr = (store: ReturnType<typeof clusterStoreOver>['store'], key: string, window = 1000, max = 10) =>
  new Promise<Result>((resolve, reject) => store.incr(key, (err, r) => (err ? reject(err) : resolve(r!)), window, max));

test('host counters: fixed windows per key; a read does not count; an expired window starts again at 1', () => {
  const counters = new HostCounters();
  assert.deepEqual(counters.apply(['p:a', 1000, 0], 0), [1, 1000]);
  assert.deepEqual(counters.apply(['p:a', 1000, 0], 400), [2, 600]);
  assert.deepEqual(counters.apply(['p:b', 1000, 0], 400), [1, 1000]);
  assert.deepEqual(counters.apply(['p:a', 1000, 1], 500), [2, 500]);
  assert.deepEqual(counters.apply(['p:a', 1000, 0], 1000), [1, 1000]);
  assert.deepEqual(counters.apply(['p:c', 1000, 1], 1000), [0, 0]);
  counters.evict(5000);
  assert.equal(counters.size, 0);
});

test('worker side: the increments of one event-loop turn travel as one message, and each caller gets its own answer', async () => {
  const sent: { id: number; ops: [string, number, 0 | 1][] }[] = [];
  const fake = clusterStoreOver((message, cb) => {
    sent.push(message);
    cb(null);
    return true;
  });
  const counters = new HostCounters();
  const results = Promise.all(Array.from({ length: 5 }, () => incr(fake.store, 'p:x')));
  await new Promise((r) => setImmediate(r));
  assert.equal(sent.length, 1, 'one message for the whole turn');
  assert.equal(sent[0]!.ops.length, 5);
  fake.receive({ type: 'vouch:rate-limit', id: sent[0]!.id, results: sent[0]!.ops.map((op) => counters.apply(op)) });
  assert.deepEqual(
    (await results).map((r) => r.current),
    [1, 2, 3, 4, 5],
  );
  // Route limits carry their route in the key, as with Redis.
  const child = fake.store.child({ routeInfo: { method: 'GET', url: '/x' } });
  const pending = new Promise<Result>((resolve) => child.incr('k', (_e, r) => resolve(r!), 1000, 10));
  await new Promise((r) => setImmediate(r));
  assert.equal(sent[1]!.ops[0]![0], 'GET/x-k');
  fake.receive({ type: 'vouch:rate-limit', id: sent[1]!.id, results: [[7, 900]] });
  assert.deepEqual(await pending, { current: 7, ttl: 900 });
});

test('worker side: a primary that does not answer (or a closed channel) means counting locally, limits still enforced', async () => {
  const silent = clusterStoreOver(() => true);
  const started = Date.now();
  const first = await incr(silent.store, 'p:y');
  assert.equal(first.current, 1);
  assert.ok(Date.now() - started < 2000);
  // Meanwhile the store counts locally without waiting for the primary again.
  const quick = Date.now();
  assert.equal((await incr(silent.store, 'p:y')).current, 2);
  assert.ok(Date.now() - quick < 100, 'waited for the silent primary again');

  const closed = clusterStoreOver((_m, cb) => {
    cb(new Error('channel closed'));
    return false;
  });
  assert.equal((await incr(closed.store, 'p:z')).current, 1);
  assert.equal((await incr(closed.store, 'p:z')).current, 2);
});

test('worker side: after an event-loop stall the answer that arrived with the timeout still wins over counting locally', async () => {
  const sent: { id: number; ops: [string, number, 0 | 1][] }[] = [];
  const fake = clusterStoreOver((message, cb) => {
    sent.push(message);
    cb(null);
    return true;
  });
  const pending = incr(fake.store, 'p:stall');
  await new Promise((r) => setImmediate(r));
  assert.equal(sent.length, 1);
  // The answer is readable in the next turn, but a synchronous stall longer than the answer
  // timeout comes first (a big SQLite batch): the timer and the answer become due together.
  setImmediate(() => fake.receive({ type: 'vouch:rate-limit', id: sent[0]!.id, results: [[52, 800]] }));
  const until = Date.now() + 400;
  while (Date.now() < until) {
    /* stall */
  }
  assert.deepEqual(await pending, { current: 52, ttl: 800 });
});

test('worker side: counting locally goes on from the count the primary last gave for the key, not from zero', async () => {
  const sent: { id: number; ops: [string, number, 0 | 1][] }[] = [];
  const fake = clusterStoreOver((message, cb) => {
    sent.push(message);
    cb(null);
    return true;
  });
  const first = incr(fake.store, 'p:seed', 60_000, 60);
  await new Promise((r) => setImmediate(r));
  fake.receive({ type: 'vouch:rate-limit', id: sent[0]!.id, results: [[51, 50_000]] });
  assert.equal((await first).current, 51);
  // The primary goes silent (the later messages are never answered): the next increments are counted here, on top of
  // 51.
  assert.equal((await incr(fake.store, 'p:seed', 60_000, 60)).current, 52);
  assert.equal((await incr(fake.store, 'p:seed', 60_000, 60)).current, 53);
});
