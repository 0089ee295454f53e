// How the test runner shares processes among files (scripts/test-groups.ts): balance puts every file
// in one group, heaviest group first, with the weights spread across the groups.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { balance } from '../../scripts/test-groups.ts';

test('every file lands in exactly one group, never more groups than asked or files given, heaviest group first', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 40 }),
      fc.integer({ min: 1, max: 30 }),
      fc.integer({ min: 0, max: 1000 }),
      (files, count, seed) => {
        const weight = (f: string) => ((f.length * 7919 + seed) % 97) + 1;
        const groups = balance(files, count, weight);
        assert.deepEqual(groups.flat().sort(), [...files].sort());
        assert.ok(groups.length <= Math.max(1, Math.min(count, files.length)));
        assert.ok(groups.every((g) => g.length > 0));
        const weights = groups.map((g) => g.reduce((sum, f) => sum + weight(f), 0));
        assert.deepEqual(
          weights,
          [...weights].sort((a, b) => b - a),
        );
      },
    ),
  );
});

test('weights are spread: no group is heavier than the lightest by more than the heaviest file', () => {
  const files = Array.from({ length: 30 }, (_, i) => `f${i}`);
  const weight = (f: string) => Number(f.slice(1)) + 1;
  const groups = balance(files, 4, weight);
  const weights = groups.map((g) => g.reduce((sum, f) => sum + weight(f), 0));
  assert.equal(groups.length, 4);
  assert.ok(Math.max(...weights) - Math.min(...weights) <= 30, `weights ${weights.join(', ')}`);
});
