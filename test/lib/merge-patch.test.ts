// RFC 7396's examples (appendix A), and a patch cannot reach an object's prototype.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergePatch, MergePatchError } from '../../src/lib/merge-patch.ts';

test('RFC 7396 appendix A: members merge, null removes, arrays and scalars replace', () => {
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, want] of cases) assert.deepEqual(mergePatch(target, patch), want);
});

test('a member named __proto__, constructor or prototype is refused, at any depth', () => {
  for (const text of ['{"__proto__": {"polluted": true}}', '{"a": {"constructor": {}}}', '{"prototype": 1}'])
    assert.throws(() => mergePatch({ a: {} }, JSON.parse(text)), MergePatchError);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
