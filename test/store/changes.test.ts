// The change watcher (src/store/changes.ts): another connection's commit is seen by the next turn
// of the event loop, and data_version is read once per turn, not once per caller.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { freshStore, type TestStore } from '../helpers/app.ts';
import { openStore, type Store } from '../../src/store/db.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('ChangeWatcher on SQLite', () => {
  let s: TestStore;
  let other: Store;
  before(async () => {
    s = await freshStore('sqlite');
    other = openStore(s.url);
    await sql`create table t (x integer)`.execute(other.db);
  });
  after(async () => {
    await other.close();
    await s.drop();
  });

  test("another connection's commit moves the generation at the first poll of the next turn", async () => {
    const changes = s.store.changes;
    changes.poll();
    await nextTurn();
    changes.poll();
    const before = changes.generation;
    await sql`insert into t (x) values (1)`.execute(other.db);
    await nextTurn();
    assert.equal(changes.poll(), true);
    assert.equal(changes.generation, before + 1);
    await nextTurn();
    assert.equal(changes.poll(), false, 'nothing new');
    assert.equal(changes.generation, before + 1);
  });

  test('data_version is read once per turn: later polls of the same turn do not query', async () => {
    const changes = s.store.changes;
    await nextTurn();
    const reads: string[] = [];
    const stmt = changes as unknown as { dataVersion: () => number };
    const original = stmt.dataVersion;
    stmt.dataVersion = () => {
      reads.push('read');
      return original();
    };
    try {
      changes.poll();
      changes.poll();
      changes.poll();
      assert.equal(reads.length, 1);
      await nextTurn();
      changes.poll();
      assert.equal(reads.length, 2);
    } finally {
      stmt.dataVersion = original;
    }
  });

  test("this process's own writes move the generation at once, without a poll", () => {
    const changes = s.store.changes;
    const before = changes.generation;
    changes.localWrite();
    assert.equal(changes.generation, before + 1);
  });
});
