// The SQLite store checkpoints from a worker thread (src/store/checkpointer.ts): commits no longer
// carry the checkpoint, yet the WAL is still copied into the database file and reused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openStore } from '../../src/store/db.ts';
import { startCheckpointer } from '../../src/store/checkpointer.ts';

const paths = () => {
  const path = join(tmpdir(), `vouch-ckpt-${randomBytes(6).toString('hex')}.db`);
  return { path, cleanup: () => ['', '-wal', '-shm'].forEach((s) => rmSync(path + s, { force: true })) };
};

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

test('a commit leaves the checkpoint to the worker: automatic checkpoints are off on the serving connection', async () => {
  const { path, cleanup } = paths();
  const store = openStore(`sqlite:${path}`);
  try {
    assert.equal(store.sqlite!.pragma('wal_autocheckpoint', { simple: true }), 0);
    // The WAL's file is kept up to its bound when it starts over: no truncation inside a commit.
    assert.equal(store.sqlite!.pragma('journal_size_limit', { simple: true }), 1024 * 1024 * 1024);
  } finally {
    await store.close();
    cleanup();
  }
});

test('written pages reach the database file without any checkpoint on the serving connection, and survive a reopen', async () => {
  const { path, cleanup } = paths();
  const store = openStore(`sqlite:${path}`);
  try {
    await store.migrate();
    const before = statSync(path).size;
    const db = store.sqlite!;
    db.exec('create table filler (id integer primary key, body text not null)');
    const insert = db.prepare('insert into filler (body) values (?)');
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(randomBytes(512).toString('hex'));
    })();
    // The main file grows only when a checkpoint copies the WAL into it: nobody but the worker does.
    assert.ok(
      await until(() => statSync(path).size > before + 1_000_000, 5000),
      'the worker checkpointed the WAL into the database file',
    );
    // A reader on another connection sees every row (the WAL and the file agree).
    const other = new BetterSqlite3(path, { readonly: true });
    assert.equal((other.prepare('select count(*) as n from filler').get() as { n: number }).n, 2000);
    other.close();
  } finally {
    await store.close();
  }
  // Closing stops the worker and checkpoints: the data is in the file and the WAL is gone.
  assert.equal(existsSync(`${path}-wal`), false);
  const reopened = new BetterSqlite3(path, { readonly: true });
  assert.equal((reopened.prepare('select count(*) as n from filler').get() as { n: number }).n, 2000);
  reopened.close();
  cleanup();
});

test('VOUCH_SQLITE_SYNCHRONOUS=full syncs every commit (synchronous 2); the default is NORMAL (1)', async () => {
  for (const [option, expected] of [
    [undefined, 1],
    ['full', 2],
  ] as const) {
    const { path, cleanup } = paths();
    const store = openStore(`sqlite:${path}`, option ? { sqliteSynchronous: option } : {});
    try {
      assert.equal(store.sqlite!.pragma('synchronous', { simple: true }), expected);
    } finally {
      await store.close();
      cleanup();
    }
  }
});

test('an in-memory store starts no checkpointer (nothing to copy) and keeps SQLite defaults', async () => {
  const store = openStore('sqlite::memory:');
  try {
    assert.notEqual(store.sqlite!.pragma('wal_autocheckpoint', { simple: true }), 0);
  } finally {
    await store.close();
  }
});

test('a checkpointer that cannot run hands checkpoints back (onFailure), and stopping it then still returns', async () => {
  let failed = false;
  const checkpointer = startCheckpointer(
    join(tmpdir(), `vouch-absent-${randomBytes(6).toString('hex')}`, 'x.db'),
    () => {
      failed = true;
    },
    { intervalMs: 10 },
  );
  assert.ok(await until(() => failed, 5000), 'onFailure ran');
  await checkpointer.stop();
});

/**
 * A database whose WAL holds `rows` rows of 1 KB, written as the serving connection writes: no
 * automatic checkpoint, and no size limit that would trim the WAL on its own.
 */
function walWith(rows: number) {
  const { path, cleanup } = paths();
  const writer = new BetterSqlite3(path);
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec('create table filler (id integer primary key, body text not null)');
  const insert = writer.prepare('insert into filler (body) values (?)');
  writer.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(randomBytes(512).toString('hex'));
  })();
  return { path, cleanup, writer, insert };
}

test('a WAL past VOUCH_SQLITE_WAL_LIMIT_MB is checkpointed and truncated (TRUNCATE), not left to grow', async () => {
  const { path, cleanup, writer, insert } = walWith(4000);
  const limit = 1024 * 1024;
  assert.ok(statSync(`${path}-wal`).size > 3 * limit, 'the WAL starts well past the limit');
  const checkpointer = startCheckpointer(path, () => {}, { intervalMs: 20, walLimitBytes: limit });
  try {
    assert.ok(
      await until(() => statSync(`${path}-wal`).size <= limit, 5000),
      `the WAL is still ${statSync(`${path}-wal`).size} bytes`,
    );
    // Nothing was lost, and the writer carries on in the truncated WAL.
    insert.run('after');
    assert.equal((writer.prepare('select count(*) as n from filler').get() as { n: number }).n, 4001);
  } finally {
    await checkpointer.stop();
    writer.close();
    cleanup();
  }
});

test('below the limit the WAL is only checkpointed (PASSIVE), not truncated', async () => {
  const { path, cleanup, writer } = walWith(1000);
  const size = statSync(`${path}-wal`).size;
  const checkpointer = startCheckpointer(path, () => {}, { intervalMs: 20, walLimitBytes: 64 * 1024 * 1024 });
  try {
    // The checkpoint copied the pages into the database file...
    assert.ok(await until(() => statSync(path).size > 500_000, 5000), 'the worker checkpointed');
    // ...and the WAL file kept its size (SQLite reuses it from the start).
    assert.equal(statSync(`${path}-wal`).size, size);
  } finally {
    await checkpointer.stop();
    writer.close();
    cleanup();
  }
});

/** About 4 MB of rows in one commit, past every WAL bound these tests set; returns the insert for more. */
function fillWal(db: BetterSqlite3.Database): BetterSqlite3.Statement {
  db.exec('create table filler (id integer primary key, body text not null)');
  const insert = db.prepare('insert into filler (body) values (?)');
  db.transaction(() => {
    for (let i = 0; i < 4000; i++) insert.run(randomBytes(512).toString('hex'));
  })();
  return insert;
}

test('the store passes its WAL limit (VOUCH_SQLITE_WAL_LIMIT_MB) to the checkpointer', async () => {
  const { path, cleanup } = paths();
  const store = openStore(`sqlite:${path}`, { sqliteWalLimitBytes: 512 * 1024 });
  try {
    fillWal(store.sqlite!);
    assert.ok(
      await until(() => statSync(`${path}-wal`).size <= 512 * 1024, 5000),
      `the WAL is still ${statSync(`${path}-wal`).size} bytes`,
    );
  } finally {
    await store.close();
    cleanup();
  }
});

test('with a writer that checkpoints between its commits, a WAL past its bound is finished by the writer and starts over, never truncated', async () => {
  const { path, cleanup } = paths();
  const store = openStore(`sqlite:${path}`, { sqliteWalLimitBytes: 512 * 1024, sqliteCheckpoints: 'writer' });
  try {
    const db = store.sqlite!;
    const insert = fillWal(db);
    const size = statSync(`${path}-wal`).size;
    // The thread asks the writer (checkpointIfDue runs a checkpoint only once asked)…
    let ran = false;
    for (let i = 0; i < 200 && !ran; i++) {
      ran = await store.checkpointIfDue!();
      if (!ran) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(ran, 'the checkpoint thread never asked the writer');
    // …instead of truncating the WAL itself,
    assert.equal(statSync(`${path}-wal`).size, size);
    // and the writer's next commit starts the WAL over from its beginning.
    insert.run('after');
    const [status] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
    assert.ok(status!.log < 10, `the WAL holds ${status!.log} frames`);
    assert.equal((db.prepare('select count(*) as n from filler').get() as { n: number }).n, 4001);
  } finally {
    await store.close();
    cleanup();
  }
});

test('with a writer that never gets to it, the checkpoint thread truncates the WAL past its bound itself', async () => {
  const { path, cleanup } = paths();
  const store = openStore(`sqlite:${path}`, { sqliteWalLimitBytes: 512 * 1024, sqliteCheckpoints: 'writer' });
  try {
    fillWal(store.sqlite!);
    assert.ok(
      await until(() => statSync(`${path}-wal`).size <= 512 * 1024, 10_000),
      `the WAL is still ${statSync(`${path}-wal`).size} bytes`,
    );
  } finally {
    await store.close();
    cleanup();
  }
});

test('a cluster worker whose primary checkpoints starts no checkpointer and leaves automatic checkpoints off', async () => {
  const { path, cleanup } = paths();
  const store = openStore(`sqlite:${path}`, { sqliteCheckpoints: 'none' });
  try {
    assert.equal(store.sqlite!.pragma('wal_autocheckpoint', { simple: true }), 0);
    assert.equal(await store.checkpointIfDue!(), false);
  } finally {
    await store.close();
    cleanup();
  }
});

test('stopping a checkpointer leaves no timer behind to keep the process alive', async () => {
  const { path, cleanup, writer } = walWith(10);
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const checkpointer = startCheckpointer(path, () => {}, { intervalMs: 20 });
  try {
    await checkpointer.stop();
    assert.equal(timers(), before, 'a timer of stop() is still pending');
  } finally {
    writer.close();
    cleanup();
  }
});
