// 036_without_rowid over a store that already holds aggregates: on SQLite each aggregate table is
// rebuilt without a rowid and keeps every row, its indexes and the change counter's triggers; on
// PostgreSQL nothing changes. Run twice, it changes nothing the second time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { backends } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { storeMigratedBefore } from '../helpers/migrations.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { withoutRowid } from '../../src/store/migrations/036_without_rowid.ts';
import type { Store } from '../../src/store/db.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';

const AGGREGATES = ['entities', 'identifiers', 'entity_currency', 'entity_hourly', 'entity_counterparties'] as const;
const ORDER: Record<(typeof AGGREGATES)[number], string> = {
  entities: 'environment, entity_id',
  identifiers: 'environment, id_type, hash, entity_id',
  entity_currency: 'environment, entity_id, currency',
  entity_hourly: 'environment, entity_id, bucket, currency',
  entity_counterparties: 'environment, entity_id, counterparty_id',
};

/** A history touching every aggregate table, in both environments. */
function history(): TrustEvent[] {
  const now = Date.now();
  const events: TrustEvent[] = [];
  for (let i = 0; i < 60; i++) {
    const entity = hash(`rowid-entity-${i % 12}`);
    const at = new Date(now - (i + 1) * 700_000).toISOString();
    events.push({
      event_id: `rowid-${i}`,
      type: i % 9 === 0 ? 'fraud.reported' : 'trade.completed',
      entity_id: entity,
      occurred_at: at,
      ...(i % 9 === 0
        ? {}
        : { amount: 10 + i, currency: i % 2 ? 'USD' : 'EUR', counterparty_id: hash(`rowid-entity-${(i + 5) % 12}`) }),
      linked_identifiers: [{ type: 'device', hash: hash(`rowid-device-${i % 4}`) }],
    } as TrustEvent);
  }
  return events;
}

async function snapshot(store: Store): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of AGGREGATES)
    out[table] = (await sql.raw(`select * from ${table} order by ${ORDER[table]}`).execute(store.db)).rows;
  return out;
}

const schemaOf = async (store: Store, table: string) =>
  (
    await sql<{
      type: string;
      name: string;
      sql: string | null;
    }>`select type, name, sql from sqlite_master where tbl_name = ${table} order by type, name`.execute(store.db)
  ).rows;

for (const backend of backends()) {
  test(`036_without_rowid keeps every aggregate row, index and trigger [${backend}]`, async (t) => {
    const { store, drop } = await storeMigratedBefore(backend, '036');
    t.after(drop);
    const events = history();
    await ingestEvents(store, events, DEFAULT_POLICY, { environment: 'live', clientId: 'c1' });
    await ingestEvents(store, events.slice(0, 20), DEFAULT_POLICY, { environment: 'test', clientId: 'c1' });
    const before = await snapshot(store);
    for (const table of AGGREGATES) assert.ok(before[table]!.length > 0, `${table} holds rows before`);
    const schemaBefore =
      backend === 'sqlite' ? await Promise.all(AGGREGATES.map((table) => schemaOf(store, table))) : [];

    assert.ok((await store.migrate()).includes('036_without_rowid'));
    assert.deepEqual(await snapshot(store), before);
    if (backend === 'sqlite') {
      for (const [i, table] of AGGREGATES.entries()) {
        const after = await schemaOf(store, table);
        assert.match(after.find((r) => r.type === 'table')!.sql!, /without rowid$/i, table);
        // Same indexes and triggers, by their text; the key's autoindex (no text) goes, the key's b-tree is the table.
        const others = (rows: typeof after) =>
          rows.filter((r) => r.type !== 'table' && r.sql !== null).map((r) => [r.type, r.name, r.sql]);
        assert.ok(!after.some((r) => r.sql === null), `${table} has no autoindex left`);
        assert.deepEqual(others(after), others(schemaBefore[i]!), table);
      }
      // The change counter's triggers still move it (024_change_counter).
      const changes = async () =>
        Number((await sql<{ n: number }>`select n from store_changes where id = 1`.execute(store.db)).rows[0]!.n);
      const n = await changes();
      await ingestEvents(
        store,
        [
          {
            event_id: 'rowid-after',
            type: 'trade.cancelled',
            entity_id: hash('rowid-new'),
            occurred_at: new Date().toISOString(),
          },
        ],
        DEFAULT_POLICY,
        { environment: 'live', clientId: 'c1' },
      );
      assert.ok((await changes()) > n, 'an entity write moves the change counter');
      // Again over tables already rebuilt: nothing changes.
      const rebuilt = await snapshot(store);
      const tables = await Promise.all(AGGREGATES.map((table) => schemaOf(store, table)));
      await withoutRowid('sqlite').up(store.db as Kysely<unknown>);
      assert.deepEqual(await snapshot(store), rebuilt);
      assert.deepEqual(await Promise.all(AGGREGATES.map((table) => schemaOf(store, table))), tables);
    }
  });
}
