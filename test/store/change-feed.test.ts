// store/change-feed.ts as plumbing: a change recorded by one process (here another connection to
// the same store) reaches the listeners of its kind on every other before its next request, and
// no listener of another kind; a change announced after commit reaches this process's listeners
// before the announcement returns (listeners are idempotent: the row may be heard again).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore } from '../helpers/app.ts';
import { openStore } from '../../src/store/db.ts';
import { ChangeFeed, recordChange, type ChangeKind } from '../../src/store/change-feed.ts';

for (const backend of backends()) {
  describe(`change feed [${backend}]`, () => {
    test('each listener hears the kinds it named, from another process, before the next request', async () => {
      const fresh = await freshStore(backend);
      const other = openStore(fresh.url);
      const feed = new ChangeFeed(fresh.store);
      try {
        const policies: string[] = [];
        const credentials: Array<[ChangeKind, string]> = [];
        feed.on('policy', (subject) => policies.push(subject));
        feed.on(['client', 'key'], (subject, kind) => credentials.push([kind, subject]));
        await feed.start();
        const writer = new ChangeFeed(other);
        await other.db.transaction().execute(async (trx) => {
          await writer.record(trx, 'key', 'key_1');
          await writer.record(trx, 'policy', 'live:v2');
          await writer.record(trx, 'rules', 'live');
        });
        // A repository without the feed object writes the same row.
        await other.db.transaction().execute((trx) => recordChange(trx, 'client', 'client_1', other));
        // What authenticate does before each request; the change counter is read once a turn.
        await new Promise((resolve) => setImmediate(resolve));
        await feed.poll();
        assert.deepEqual(policies, ['live:v2']);
        assert.deepEqual(credentials, [
          ['key', 'key_1'],
          ['client', 'client_1'],
        ]);
      } finally {
        await feed.stop();
        await other.close();
        await fresh.drop();
      }
    });

    test('a change announced after commit is heard before the announcement returns', async () => {
      const fresh = await freshStore(backend);
      const feed = new ChangeFeed(fresh.store);
      try {
        const heard: string[] = [];
        feed.on('entity', (subject) => heard.push(subject));
        await feed.start();
        await fresh.store.db.transaction().execute((trx) => feed.record(trx, 'entity', 'digest_1'));
        const announced = feed.announce('entity', 'digest_1');
        assert.deepEqual(heard, ['digest_1'], 'heard synchronously, before any read of the store');
        await announced;
        assert.ok(heard.every((subject) => subject === 'digest_1'));
      } finally {
        await feed.stop();
        await fresh.drop();
      }
    });
  });
}
