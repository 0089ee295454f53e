// lib/reloader.ts: loads everything on start; a change reloads its key; changes arriving during a
// reload are coalesced into one more reload; a failed reload is reported, keeps the last good
// value, reaches the requests waiting on it, and the next change tries again; stop ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Reloader } from '../../src/lib/reloader.ts';

/** A value per key, loaded from `source` only when every key read succeeds (as the registries do). */
function harness() {
  const source = new Map<string, number>([
    ['a', 1],
    ['b', 1],
  ]);
  const value = new Map<string, number>();
  const loads: Array<readonly string[] | 'all'> = [];
  const failures: unknown[] = [];
  let gate: Promise<void> | undefined;
  let broken = false;
  const reloader = new Reloader<string>({
    name: 'test values',
    load: async (keys) => {
      loads.push(keys ?? 'all');
      await gate;
      if (broken) throw new Error('store unavailable');
      for (const key of keys ?? [...source.keys()]) value.set(key, source.get(key)!);
    },
    failed: (_name, err) => failures.push(err),
  });
  return {
    source,
    value,
    loads,
    failures,
    reloader,
    hold: () => {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    breakStore: (b: boolean) => (broken = b),
  };
}

test('start loads every key; a change reloads only its key', async () => {
  const h = harness();
  await h.reloader.start();
  assert.deepEqual(h.loads, ['all']);
  h.source.set('a', 2);
  h.source.set('b', 2);
  h.reloader.changed('a');
  await h.reloader.ready();
  assert.deepEqual(h.loads, ['all', ['a']]);
  assert.equal(h.value.get('a'), 2);
  assert.equal(h.value.get('b'), 1, 'b was not reported changed');
  assert.equal(h.reloader.ready(), undefined, 'nothing pending once the reload is done');
});

test('changes during a reload are coalesced into one more reload of what changed', async () => {
  const h = harness();
  await h.reloader.start();
  const release = h.hold();
  h.reloader.changed('a');
  const first = h.reloader.ready();
  h.reloader.changed('b');
  h.reloader.changed('a');
  h.reloader.changed('b');
  assert.equal(h.reloader.ready(), first, 'one reload in progress at a time');
  h.source.set('a', 3);
  h.source.set('b', 3);
  release();
  await first;
  assert.deepEqual(h.loads, ['all', ['a'], ['b', 'a']], 'each changed key once, in the order reported');
  assert.deepEqual([h.value.get('a'), h.value.get('b')], [3, 3]);
});

test('a change of everything during a reload reloads every key once more', async () => {
  const h = harness();
  await h.reloader.start();
  const release = h.hold();
  h.reloader.changed('a');
  h.reloader.changed();
  h.reloader.changed('b');
  release();
  await h.reloader.ready();
  assert.deepEqual(h.loads, ['all', ['a'], 'all']);
});

test('a failed reload keeps the last good value, is reported, fails the waiting request, and is retried by the next change', async () => {
  const h = harness();
  await h.reloader.start();
  h.source.set('a', 5);
  h.breakStore(true);
  h.reloader.changed('a');
  const waited = new Promise<unknown>((resolve) => h.reloader.waitForReload(undefined, undefined, resolve));
  assert.match(String(await waited), /store unavailable/);
  assert.equal(h.value.get('a'), 1, 'the last good value stays');
  assert.equal(h.failures.length, 1);
  h.breakStore(false);
  h.reloader.changed('a');
  await h.reloader.ready();
  assert.equal(h.value.get('a'), 5);
  assert.equal(h.failures.length, 1);
});

test('a request arriving with no reload in progress goes on at once', () => {
  const h = harness();
  let called = 0;
  h.reloader.waitForReload(undefined, undefined, (err) => {
    assert.equal(err, undefined);
    called++;
  });
  assert.equal(called, 1);
});

test('stop waits for the reload in progress and ignores later changes', async () => {
  const h = harness();
  await h.reloader.start();
  const release = h.hold();
  h.reloader.changed('a');
  let stopped = false;
  const stopping = h.reloader.stop().then(() => (stopped = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(stopped, false, 'stop returned while a reload was still running');
  release();
  await stopping;
  h.reloader.changed('b');
  assert.equal(h.reloader.ready(), undefined);
  assert.deepEqual(h.loads, ['all', ['a']]);
});
