// The expiry heap pops in time order whatever the order of pushes, and builds the same from pairs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MinHeap } from '../../src/lib/min-heap.ts';

test('pops every pair in ascending time, pushed one by one or built at once', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 200 }), (times) => {
      const pushed = new MinHeap<string>();
      times.forEach((t, i) => pushed.push(t, `k${i}`));
      const built = MinHeap.of(times.map((t, i): [number, string] => [t, `k${i}`]));
      const sorted = [...times].sort((a, b) => a - b);
      for (const heap of [pushed, built]) {
        const out: number[] = [];
        assert.equal(heap.size, times.length);
        while (heap.peek() !== undefined) out.push(heap.pop()!.time);
        assert.deepEqual(out, sorted);
        assert.equal(heap.pop(), undefined);
      }
    }),
  );
});
