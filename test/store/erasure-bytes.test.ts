// Issue 29 item 14: an erased entity leaves no bytes behind (docs/operations.md, "Erasure"). On
// SQLite, PRAGMA secure_delete zeroes the deleted cells and freed pages, so once the WAL is
// checkpointed the id is nowhere in the database's files. On PostgreSQL the dead row versions are
// the server's to reclaim (VACUUM); what the test can hold there is that no live row of any table
// still names the entity.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { event, hash, postEvents, score, tradeHistory } from '../helpers/trust.ts';

describeEachBackend('erasure leaves no bytes of the entity', (ctx, backend) => {
  const entity = hash('erasure-bytes-subject');
  const phone = hash('erasure-bytes-phone');
  let admin = '';

  before(async () => {
    admin = await ctx().token();
    // Enough history that its rows fill whole pages, which the erasure then frees.
    await postEvents(ctx(), admin, [
      ...tradeHistory(entity, 400, 90),
      event('identifier.linked', entity, { linked_identifiers: [{ type: 'phone', hash: phone }] }),
      event('chargeback', entity, { trade_id: 'erasure-bytes-trade', amount: 10, currency: 'USD' }),
    ]);
    const scored = await score(ctx(), admin, {
      entity_id: entity,
      amount: 50,
      currency: 'USD',
      context: { trade_id: 'erasure-bytes-trade' },
    });
    assert.equal(scored.statusCode, 200, scored.body);
  });

  test('after the erasure the entity id is in no page of the store', async () => {
    if (backend === 'sqlite') {
      // Checkpoint before too, so the rows are in the main file when they are deleted.
      ctx().store.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
      assert.ok(readFileSync(ctx().store.sqlite!.name).includes(entity), 'the test must start with the id on disk');
    }
    const res = await ctx().inject({
      method: 'DELETE',
      url: `/api/v1/trust/entities/${entity}`,
      headers: bearer(admin),
    });
    assert.equal(res.statusCode, 200, res.body);
    if (backend === 'sqlite') {
      const handle = ctx().store.sqlite!;
      handle.pragma('wal_checkpoint(TRUNCATE)');
      for (const file of [handle.name, `${handle.name}-wal`]) {
        if (!existsSync(file)) continue;
        assert.equal(readFileSync(file).indexOf(entity), -1, `${file} still holds the erased id`);
      }
      return;
    }
    const tables = await sql<{
      tablename: string;
    }>`select tablename from pg_tables where schemaname = current_schema()`.execute(ctx().store.db);
    for (const { tablename } of tables.rows) {
      const rows = await sql<{
        n: number;
      }>`select count(*)::int as n from ${sql.table(tablename)} t where t::text like ${`%${entity}%`}`.execute(
        ctx().store.db,
      );
      assert.equal(rows.rows[0]!.n, 0, `${tablename} still names the erased entity`);
    }
  });
});
