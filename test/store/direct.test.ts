// SQLite's direct path (src/store/direct.ts): compiled shapes and grouped inserts run on the driver
// only while no transaction is open, so they never read another request's uncommitted rows nor
// join (and die with) its transaction; a group is all or nothing; the store closes its handle even
// when Kysely never ran a query.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Transaction } from 'kysely';
import { freshStore, type TestStore } from '../helpers/app.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import type { Database } from '../../src/store/schema.ts';
import { PreparedQuery } from '../../src/store/prepared.ts';
import { insertRows, insertRowsAtomically } from '../../src/store/row-inserts.ts';
import { directOf } from '../../src/store/direct.ts';

const COLUMNS = ['id', 'environment', 'name', 'kind', 'description', 'created_at', 'created_by', 'deleted_at'] as const;
const list = (name: string) => ({
  id: `lst_${name}`,
  environment: 'live',
  name,
  kind: 'entity',
  description: null,
  created_at: 1,
  created_by: 'test',
  deleted_at: null,
});

/**
 * A transaction of `store` that has run `first` and stays open until `release` is called, then commits
 * (or, with `rollBack`, fails: `done` rejects with "rolled back").
 */
async function holdTransaction(
  store: Store,
  first: (trx: Transaction<Database>) => Promise<void>,
  rollBack = false,
): Promise<{ release: () => void; done: Promise<void> }> {
  let inside: () => void = () => {};
  const opened = new Promise<void>((resolve) => (inside = resolve));
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const done = store.db.transaction().execute(async (trx) => {
    await first(trx);
    inside();
    await held;
    if (rollBack) throw new Error('rolled back');
  });
  await opened;
  return { release, done };
}

describe('the direct path on SQLite', () => {
  let s: TestStore;
  let count: PreparedQuery<[string], { n: number }>;
  before(async () => {
    s = await freshStore('sqlite');
    count = new PreparedQuery(s.store.db as never, 1, (_db, prefix) =>
      sql<{ n: number }>`select count(*) as n from lists where name like ${prefix}`.compile(s.store.db),
    );
  });
  after(async () => {
    await s.drop();
  });

  test('a read while another transaction is open waits for it, and never sees its uncommitted rows', async () => {
    const { release, done: writer } = await holdTransaction(
      s.store,
      async (trx) => {
        await insertRows(s.store.db, trx, 'lists', COLUMNS, [list('pending-a')]);
      },
      true,
    );
    assert.equal(directOf(s.store.db)?.run('select 1 as one', []), undefined, 'the direct path declines');
    const read = count.execute('pending-%');
    // Nothing is read until the transaction ends (it is rolled back): then none of its rows.
    release();
    await assert.rejects(writer, /rolled back/);
    assert.deepEqual(await read, [{ n: 0 }]);
  });

  test('grouped inserts decline while a transaction is open and write nothing', async () => {
    const { release, done: other } = await holdTransaction(s.store, async (trx) => {
      await sql`select 1`.execute(trx);
    });
    assert.equal(
      insertRowsAtomically(s.store.db, [{ table: 'lists', columns: COLUMNS, rows: [list('declined')] }]),
      false,
    );
    release();
    await other;
    assert.deepEqual(await count.execute('declined'), [{ n: 0 }]);
  });

  test('a group is all or nothing: a failing row in a later chunk leaves none of the group stored', async () => {
    // 70 rows: a chunk of 64, then 4, 1 and 1; the last repeats the first's id.
    const rows = Array.from({ length: 69 }, (_, i) => list(`group-${i}`));
    rows.push({ ...list('group-last'), id: rows[0]!.id });
    assert.throws(() => insertRowsAtomically(s.store.db, [{ table: 'lists', columns: COLUMNS, rows }]));
    assert.deepEqual(await count.execute('group-%'), [{ n: 0 }]);
    // The same rows without the repeat are stored, every one.
    assert.equal(
      insertRowsAtomically(s.store.db, [{ table: 'lists', columns: COLUMNS, rows: rows.slice(0, 69) }]),
      true,
    );
    assert.deepEqual(await count.execute('group-%'), [{ n: 69 }]);
  });

  test('close() closes the handle although every query went the direct way', async () => {
    const own = openStore(s.url);
    const query = new PreparedQuery(own.db as never, 0, () => sql`select 1 as one`.compile(own.db));
    assert.deepEqual(await query.execute(), [{ one: 1 }]);
    await own.close();
    assert.equal(own.sqlite?.open, false);
    await assert.rejects(query.execute());
  });
});
