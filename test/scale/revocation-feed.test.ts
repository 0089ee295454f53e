// How an instance (or worker) learns of revocations written by another, at the store level where
// the interleavings can be forced: on SQLite (workers sharing one file) a commit by another
// process must be applied even when the score cache noticed the file change first; on PostgreSQL
// a bigserial value is taken at insert, not at commit, so two deactivations racing on two
// instances can commit out of seq order, and the lower one must still be applied.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freshStore, type TestStore } from '../helpers/app.ts';
import { sleep, TEST_TIMEOUT_MS } from '../helpers/processes.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { ChangeFeed, type ChangeKind } from '../../src/store/change-feed.ts';

describe('revocation feed on SQLite: two processes on one file', () => {
  let fresh: TestStore;
  let other: Store;
  let feed: ChangeFeed;
  const seen: [ChangeKind, string][] = [];

  before(async () => {
    fresh = await freshStore('sqlite');
    // Worker 2 (`fresh.store`) and worker 1 (`other`): separate connections, as separate processes have.
    other = openStore(fresh.url);
    feed = new ChangeFeed(fresh.store);
    feed.on('key', (subject, kind) => seen.push([kind, subject]));
    await feed.start();
  });

  after(async () => {
    await feed.stop();
    await other.close();
    await fresh.drop();
  });

  test(
    "a revocation committed by another process is applied even when the score cache's poll saw the change first",
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const writer = new ChangeFeed(other);
      await other.db.transaction().execute((trx) => writer.record(trx, 'key', 'key_one'));
      // The change watcher polls at most once a millisecond.
      await sleep(5);
      // A cached score answered between the commit and the next authenticated request polls first.
      fresh.store.changes.poll();
      await sleep(5);
      await feed.poll();
      assert.deepEqual(seen, [['key', 'key_one']], 'the revocation was never applied');
    },
  );
});

describe(
  'revocation feed on PostgreSQL: out-of-order commits',
  { skip: process.env.VOUCH_TEST_POSTGRES_URL ? false : 'VOUCH_TEST_POSTGRES_URL is not set' },
  () => {
    let fresh: TestStore;
    let feed: ChangeFeed;
    const seen: [ChangeKind, string][] = [];

    before(async () => {
      fresh = await freshStore('postgres');
      // "Instance B": learns of revocations written by others.
      feed = new ChangeFeed(fresh.store);
      feed.on('key', (subject, kind) => seen.push([kind, subject]));
      await feed.start();
    });

    after(async () => {
      await feed.stop();
      await fresh.drop();
    });

    test(
      'with no NOTIFY or Redis message at all, a committed revocation applies to the very next request',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        // An instance whose LISTEN connection is down (no pgConfig: it never listens) and without Redis.
        const deaf = new ChangeFeed({ ...fresh.store, pgConfig: undefined });
        const heard: string[] = [];
        deaf.on('key', (subject) => heard.push(subject));
        await deaf.start();
        const writer = new ChangeFeed(fresh.store);
        for (const subject of ['key_a', 'key_b', 'key_c']) {
          await fresh.store.db.transaction().execute((trx) => writer.record(trx, 'key', subject));
          // What authenticate does before each request.
          await deaf.poll();
          assert.equal(heard.at(-1), subject, `${subject} was not applied before the next request`);
        }
        // Requests arriving together share a check; each still sees what was committed before it.
        await fresh.store.db.transaction().execute((trx) => writer.record(trx, 'key', 'key_d'));
        await Promise.all(Array.from({ length: 20 }, () => deaf.poll()));
        assert.deepEqual(heard, ['key_a', 'key_b', 'key_c', 'key_d']);
        await deaf.stop();
      },
    );

    test(
      'a revocation that commits after a higher seq was read is still applied, once',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const writer = new ChangeFeed(fresh.store);
        // The feed has heard the earlier tests' revocations too (by NOTIFY): only these two matter here.
        const mine = () => seen.filter(([, subject]) => subject === 'key_fast' || subject === 'key_slow');
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let inserted!: () => void;
        const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
        // Instance A1 inserts its revocation (taking the lower seq) and is slow to commit...
        const slow = fresh.store.db.transaction().execute(async (trx) => {
          await writer.record(trx, 'key', 'key_slow');
          inserted();
          await gate;
        });
        await insertedYet;
        // ...while instance A2 revokes another key, commits, and B catches up past it.
        await fresh.store.db.transaction().execute((trx) => writer.record(trx, 'key', 'key_fast'));
        await feed.catchUp();
        assert.deepEqual(mine(), [['key', 'key_fast']]);

        release();
        await slow;
        await feed.catchUp();
        assert.deepEqual(
          mine(),
          [
            ['key', 'key_fast'],
            ['key', 'key_slow'],
          ],
          'the late commit was never applied',
        );
        // Applied once: further catch-ups repeat neither.
        await feed.catchUp();
        assert.equal(mine().length, 2);
      },
    );
  },
);
