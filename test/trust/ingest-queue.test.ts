// Group commit of event batches (src/trust/ingest-queue.ts): batches that arrive together share one
// transaction and one commit, each answers with its own result, and a failing batch fails alone.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Transaction } from 'kysely';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { GroupCommitQueue } from '../../src/trust/ingest-queue.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { EventConflictError } from '../../src/trust/event-ids.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import type { Database } from '../../src/store/schema.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';
import { event, hash } from '../helpers/trust.ts';

const live = { environment: 'live' as const, clientId: 'c1' };
const ev = (type: string, entity: string, extra: Record<string, unknown> = {}) =>
  event(type, entity, extra) as unknown as TrustEvent;

describe('GroupCommitQueue on SQLite', () => {
  let s: TestStore;
  before(async () => {
    s = await freshStore('sqlite');
    await sql`create table scratch (batch text not null)`.execute(s.store.db);
    await sql`create table parent (id text primary key)`.execute(s.store.db);
    await sql`create table child (parent_id text not null references parent (id))`.execute(s.store.db);
  });
  after(async () => s.drop());

  const rows = async () =>
    (await sql<{ batch: string }>`select batch from scratch order by rowid`.execute(s.store.db)).rows.map(
      (r) => r.batch,
    );

  test('batches submitted together run in one transaction, in order, and each resolves with its own result after one commit', async () => {
    const seen: Array<Transaction<Database>> = [];
    const commits: string[][] = [];
    const queue = new GroupCommitQueue<string, string>(
      s.store.db,
      async (trx, batch) => {
        seen.push(trx);
        await sql`insert into scratch (batch) values (${batch})`.execute(trx);
        return `done ${batch}`;
      },
      (results) => commits.push([...results]),
    );
    const results = await Promise.all(['a', 'b', 'c'].map((b) => queue.submit(b, 1)));
    assert.deepEqual(results, ['done a', 'done b', 'done c']);
    assert.equal(new Set(seen).size, 1, 'one shared transaction');
    assert.deepEqual(commits, [['done a', 'done b', 'done c']]);
    assert.deepEqual(await rows(), ['a', 'b', 'c']);
  });

  test('a failing batch rejects alone and leaves nothing; the others of its group are committed', async () => {
    await sql`delete from scratch`.execute(s.store.db);
    const queue = new GroupCommitQueue<string, string>(
      s.store.db,
      async (trx, batch) => {
        await sql`insert into scratch (batch) values (${batch})`.execute(trx);
        if (batch === 'bad') throw new Error('refused');
        return batch;
      },
      () => {},
    );
    const settled = await Promise.allSettled(['x', 'bad', 'y'].map((b) => queue.submit(b, 1)));
    assert.deepEqual(
      settled.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal((settled[1] as PromiseRejectedResult).reason.message, 'refused');
    assert.deepEqual(await rows(), ['x', 'y']);
  });

  test('a group is cut at maxEvents: the batches beyond it commit in the next transaction', async () => {
    const seen: Array<Transaction<Database>> = [];
    const queue = new GroupCommitQueue<string, string>(
      s.store.db,
      async (trx, batch) => {
        seen.push(trx);
        return batch;
      },
      () => {},
      { maxEvents: 250 },
    );
    await Promise.all(['1', '2', '3'].map((b) => queue.submit(b, 100)));
    assert.equal(seen.length, 3);
    assert.equal(seen[0], seen[1]);
    assert.notEqual(seen[1], seen[2]);
  });

  test('when the commit fails, every batch of the group is rejected and nothing is stored', async () => {
    await sql`delete from scratch`.execute(s.store.db);
    const queue = new GroupCommitQueue<string, string>(
      s.store.db,
      async (trx, batch) => {
        await sql`insert into scratch (batch) values (${batch})`.execute(trx);
        // A deferred foreign-key violation fails at COMMIT, after every batch has run.
        if (batch === 'last') {
          await sql`pragma defer_foreign_keys = on`.execute(trx);
          await sql`insert into child (parent_id) values ('no such parent')`.execute(trx);
        }
        return batch;
      },
      () => assert.fail('nothing was committed'),
    );
    const settled = await Promise.allSettled(['first', 'last'].map((b) => queue.submit(b, 1)));
    assert.deepEqual(
      settled.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.deepEqual(await rows(), []);
  });
});

for (const backend of backends()) {
  describe(`concurrent event batches (${backend})`, () => {
    let s: TestStore;
    before(async () => (s = await freshStore(backend)));
    after(async () => s.drop());

    test('each batch of a group gets its own counts; a reused event_id fails only its own batch, which stores nothing', async () => {
      const a = hash(`group-a-${backend}`);
      const b = hash(`group-b-${backend}`);
      const shared = ev('trade.completed', a, { amount: 10, currency: 'USD' });
      const conflicting = { ...shared, type: 'trade.cancelled' } as TrustEvent;
      const batches: TrustEvent[][] = [
        [shared, ev('trade.completed', a, { amount: 20, currency: 'USD' })],
        [shared, ev('trade.cancelled', b)], // one duplicate of the batch before it
        [conflicting, ev('chargeback', b)], // a conflict: its chargeback must not be stored
        [ev('trade.completed', b, { amount: 5, currency: 'USD' })],
      ];
      const ingest = (batch: TrustEvent[]) => ingestEvents(s.store, batch, DEFAULT_POLICY, live);
      // SQLite applies a group's batches in the order they came; PostgreSQL runs them as concurrent
      // transactions, which commit in no set order: there the first batch is in before the others
      // race, so which of `shared` and `conflicting` came first is known on both.
      const first = backend === 'sqlite' ? [] : [await Promise.allSettled([ingest(batches[0]!)])];
      const settled = [...first.flat(), ...(await Promise.allSettled(batches.slice(first.length).map(ingest)))];
      assert.deepEqual(settled[0], { status: 'fulfilled', value: { accepted: 2, duplicates: 0 } });
      assert.deepEqual(settled[1], { status: 'fulfilled', value: { accepted: 1, duplicates: 1 } });
      assert.equal(settled[2]!.status, 'rejected');
      assert.ok((settled[2] as PromiseRejectedResult).reason instanceof EventConflictError);
      assert.deepEqual(settled[3], { status: 'fulfilled', value: { accepted: 1, duplicates: 0 } });
      const entity = (id: string) =>
        s.store.db
          .selectFrom('entities')
          .selectAll()
          .where('environment', '=', 'live')
          .where('entity_id', '=', id)
          .executeTakeFirstOrThrow();
      const ea = await entity(a);
      const eb = await entity(b);
      assert.equal(ea.trades_completed, 2);
      assert.equal(eb.trades_cancelled, 1);
      assert.equal(eb.trades_completed, 1);
      assert.equal(eb.chargebacks, 0, "the failed batch's events are not stored");
      const stored = await s.store.db
        .selectFrom('events')
        .select('event_id')
        .where('entity_id', 'in', [a, b])
        .execute();
      assert.equal(stored.length, 4);
    });

    test('many concurrent batches on one entity add up exactly as if sent one after another', async () => {
      const id = hash(`group-sum-${backend}`);
      const batches = Array.from({ length: 12 }, (_, i) =>
        Array.from({ length: 5 }, () => ev('trade.completed', id, { amount: i + 1, currency: 'EUR' })),
      );
      const results = await Promise.all(batches.map((batch) => ingestEvents(s.store, batch, DEFAULT_POLICY, live)));
      assert.ok(results.every((r) => r.accepted === 5 && r.duplicates === 0));
      const cur = await s.store.db
        .selectFrom('entity_currency')
        .selectAll()
        .where('environment', '=', 'live')
        .where('entity_id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(cur.trades, 60);
      assert.equal(cur.volume, (5 * (12 * 13)) / 2);
    });
  });
}
