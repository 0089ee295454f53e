// An erasure folds SQLite's WAL into the database file so the erased rows' bytes leave it
// (src/store/secure-delete.ts). A reader on another connection that holds an older snapshot keeps
// the checkpoint from finishing: the fold tries again until the reader moves on, gives up after its
// attempts with false (the next checkpoint folds the frames in), and never throws.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { freshStore } from '../helpers/app.ts';
import { foldWriteAheadLog } from '../../src/store/secure-delete.ts';

const store = await freshStore('sqlite');
after(() => store.drop());

const wal = () => statSync(`${store.store.sqlite!.name}-wal`).size;

test('a reader holding an older snapshot makes the fold wait; once it moves on the WAL is emptied', async () => {
  const writer = store.store.sqlite!;
  writer.exec('create table fold_probe (v text)');
  writer.prepare('insert into fold_probe values (?)').run('before');
  const reader = new BetterSqlite3(writer.name, { fileMustExist: true });
  try {
    reader.exec('begin');
    reader.prepare('select count(*) from fold_probe').get();
    // a write after the reader's snapshot: its frames cannot be folded while the reader holds it
    writer.prepare('insert into fold_probe values (?)').run('after');
    assert.equal(await foldWriteAheadLog(store.store, 3), false, 'the fold reported done under a reader');
    assert.ok(wal() > 0, 'the WAL was emptied under a reader');
    const folding = foldWriteAheadLog(store.store);
    reader.exec('commit');
    assert.equal(await folding, true);
    assert.equal(wal(), 0);
  } finally {
    reader.close();
  }
});

test('a store without SQLite has nothing to fold', async () => {
  assert.equal(await foldWriteAheadLog({ ...store.store, sqlite: undefined } as never), true);
});
