import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { entityFraction, splitByEntity } from '../../src/policies/split.ts';

const entity = (i: number) => createHash('sha256').update(`e${i}`).digest('hex');
/** three decisions per entity, interleaved */
const rows = Array.from({ length: 30_000 }, (_, i) => ({ id: i, entity: entity(i % 10_000) }));

describe('splitByEntity', () => {
  test('the same data splits the same way', () => {
    const a = splitByEntity(rows, (r) => r.entity);
    const b = splitByEntity([...rows], (r) => r.entity);
    assert.deepEqual(
      a.holdout.map((r) => r.id),
      b.holdout.map((r) => r.id),
    );
    assert.equal(a.train.length + a.holdout.length, rows.length);
  });

  test('no entity is on both sides, and order is kept', () => {
    const { train, holdout } = splitByEntity(rows, (r) => r.entity);
    const held = new Set(holdout.map((r) => r.entity));
    assert.ok(train.every((r) => !held.has(r.entity)));
    assert.ok(holdout.every((r, i) => i === 0 || holdout[i - 1]!.id < r.id));
  });

  test('the held-out share of entities is close to the default 0.3', () => {
    const { holdout } = splitByEntity(rows, (r) => r.entity);
    const share = new Set(holdout.map((r) => r.entity)).size / 10_000;
    assert.ok(Math.abs(share - 0.3) < 0.015, `share ${share}`);
  });

  test('a custom fraction and salt are honoured; 0 and 1 are exact', () => {
    const some = rows.slice(0, 3000);
    assert.equal(splitByEntity(some, (r) => r.entity, { fraction: 0 }).holdout.length, 0);
    assert.equal(splitByEntity(some, (r) => r.entity, { fraction: 1 }).train.length, 0);
    const half = splitByEntity(some, (r) => r.entity, { fraction: 0.5 }).holdout.length / some.length;
    assert.ok(Math.abs(half - 0.5) < 0.05);
    const other = splitByEntity(some, (r) => r.entity, { salt: 'other' });
    assert.notDeepEqual(
      other.holdout.map((r) => r.id),
      splitByEntity(some, (r) => r.entity).holdout.map((r) => r.id),
    );
  });

  test('a fraction outside 0 … 1 is refused', () => {
    assert.throws(() => splitByEntity(rows, (r) => r.entity, { fraction: 1.5 }), RangeError);
    assert.throws(() => splitByEntity(rows, (r) => r.entity, { fraction: Number.NaN }), RangeError);
  });

  test('adding data never moves an entity across (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (id) => {
        const f = entityFraction(id);
        assert.ok(f >= 0 && f < 1);
        assert.equal(entityFraction(id), f);
      }),
    );
  });
});
