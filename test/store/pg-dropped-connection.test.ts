// docs/operations.md, "PostgreSQL outages": a connection the server drops while it is checked out
// (inside a transaction, between two queries — what a PostgreSQL restart under load does to every
// busy connection) fails that transaction only; it is never an uncaught exception that takes the
// process down, and the pool serves the next query on a new connection.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { freshStore, type TestStore } from '../helpers/app.ts';

const url = process.env.VOUCH_TEST_POSTGRES_URL;

describe(
  'PostgreSQL: a connection dropped while checked out',
  { skip: url ? false : 'VOUCH_TEST_POSTGRES_URL is not set' },
  () => {
    let fresh: TestStore;
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => void uncaught.push(err);

    before(async () => {
      fresh = await freshStore('postgres');
      // node:test reports an uncaught exception as a failure of whichever test runs; collect it to assert on it
      process.on('uncaughtException', onUncaught);
    });
    after(async () => {
      process.off('uncaughtException', onUncaught);
      await fresh?.drop();
    });

    test('terminated between two queries of a transaction: the transaction fails, the process and the pool go on', async () => {
      const db = fresh.store.db;
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // another connection ends this one, as a server shutting down (57P01) or a crash would
          await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(db);
          // the socket's close arrives while the client is checked out and idle
          await new Promise((r) => setTimeout(r, 200));
          await sql`select 1`.execute(trx);
        }),
      );
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(uncaught, [], 'no uncaught exception');
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      assert.equal(Number(rows[0]!.one), 1);
    });
  },
);
