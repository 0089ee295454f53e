// lib/group-commit.ts: submissions of one turn share a commit; a failed commit fails exactly the
// items it held; item outcomes stay per item; groups respect the weight bound; drain waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit, type Outcome } from '../../src/lib/group-commit.ts';

test('one turn, one commit; each item gets its own outcome', async () => {
  const groups: number[][] = [];
  const queue = new GroupCommit<number, number>(
    async (items) => {
      groups.push([...items]);
      return items.map((n): Outcome<number> =>
        n % 2 === 0 ? { ok: true, result: n * 10 } : { ok: false, error: new Error(`odd ${n}`) },
      );
    },
    { maxWeight: 100 },
  );
  const settled = await Promise.allSettled([1, 2, 3, 4].map((n) => queue.submit(n)));
  assert.deepEqual(groups, [[1, 2, 3, 4]]);
  assert.deepEqual(
    settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
    ['odd 1', 20, 'odd 3', 40],
  );
});

test('a failed commit fails exactly the items of its group; the next group commits', async () => {
  let calls = 0;
  const queue = new GroupCommit<string, string>(
    async (items) => {
      calls++;
      if (calls === 1) throw new Error('disk full');
      return items.map((item) => ({ ok: true as const, result: item }));
    },
    { maxWeight: 2 },
  );
  const settled = await Promise.allSettled(['a', 'b', 'c'].map((item) => queue.submit(item)));
  assert.deepEqual(
    settled.map((s) => s.status),
    ['rejected', 'rejected', 'fulfilled'],
  );
  assert.equal((settled[0] as PromiseRejectedResult).reason.message, 'disk full');
  assert.equal((settled[2] as PromiseFulfilledResult<string>).value, 'c');
});

test('a group holds at most maxWeight, but one heavier item still forms a group of its own', async () => {
  const groups: number[][] = [];
  const queue = new GroupCommit<number, undefined>(
    async (items) => {
      groups.push([...items]);
      return items.map(() => ({ ok: true as const, result: undefined }));
    },
    { maxWeight: 10 },
  );
  await Promise.all([4, 5, 20, 3, 3].map((w) => queue.submit(w, w)));
  assert.deepEqual(groups, [[4, 5], [20], [3, 3]]);
});

test('a commit that reports too few outcomes rejects the items it left out', async () => {
  const queue = new GroupCommit<number, number>(async () => [{ ok: true, result: 1 }], { maxWeight: 10 });
  const settled = await Promise.allSettled([queue.submit(1), queue.submit(2)]);
  assert.deepEqual(
    settled.map((s) => s.status),
    ['fulfilled', 'rejected'],
  );
});

test('drain resolves once everything submitted has settled, and at once when idle', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const queue = new GroupCommit<number, number>(
    async (items) => {
      await gate;
      return items.map((n) => ({ ok: true as const, result: n }));
    },
    { maxWeight: 10 },
  );
  await queue.drain();
  const pending = queue.submit(7);
  let drained = false;
  const draining = queue.drain().then(() => {
    drained = true;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(drained, false);
  release();
  assert.equal(await pending, 7);
  await draining;
  assert.equal(drained, true);
});

test('`between` runs once each group is resolved and before the next is taken; its failure fails nobody', async () => {
  const log: string[] = [];
  let failing = true;
  const queue = new GroupCommit<string, string>(
    async (items) => {
      log.push(`commit ${items.join('')}`);
      return items.map((item) => ({ ok: true as const, result: item }));
    },
    {
      maxWeight: 2,
      between: async () => {
        log.push('between');
        await new Promise((r) => setTimeout(r, 5));
        log.push('between done');
        if (failing) {
          failing = false;
          throw new Error('checkpoint failed');
        }
      },
    },
  );
  const results = await Promise.all(
    ['a', 'b', 'c'].map((item) =>
      queue.submit(item).then((r) => {
        log.push(`answered ${r}`);
        return r;
      }),
    ),
  );
  await queue.drain();
  assert.deepEqual(results, ['a', 'b', 'c']);
  // The group's promises are resolved before `between` starts (their callbacks run while it
  // awaits), and the next group is taken only after it.
  assert.deepEqual(log, [
    'commit ab',
    'between',
    'answered a',
    'answered b',
    'between done',
    'commit c',
    'between',
    'answered c',
    'between done',
  ]);
});
