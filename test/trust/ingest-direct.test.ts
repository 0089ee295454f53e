// Event batches on SQLite's direct path (src/trust/ingest-direct.ts): the same rows as the Kysely
// transaction stores, a group's failing batch rolled back alone, duplicates and conflicts found,
// and nothing run while another transaction holds the connection or when a batch must label or flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Transaction } from 'kysely';
import { freshStore } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { commitDirectly } from '../../src/trust/ingest-direct.ts';
import { prepareBatch, type PreparedBatch } from '../../src/trust/ingest-batch.ts';
import { EventConflictError } from '../../src/trust/event-ids.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import type { Store } from '../../src/store/db.ts';
import type { Database } from '../../src/store/schema.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const TABLES: Record<string, string> = {
  events: 'environment, client_id, event_id',
  entities: 'environment, entity_id',
  entity_currency: 'environment, entity_id, currency',
  entity_hourly: 'environment, entity_id, bucket, currency',
  entity_counterparties: 'environment, entity_id, counterparty_id',
  identifiers: 'environment, id_type, hash, entity_id',
  identifier_stats: 'environment, id_type, hash',
};

/** Pseudo-random batches of the types the direct path takes, over few entities, with repeated ids. */
function batches(seed: number, count: number): TrustEvent[][] {
  let x = seed;
  const r = (n: number) => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % n);
  const types = ['trade.completed', 'trade.cancelled', 'dispute.opened', 'identifier.linked', 'entity.unblocklisted'];
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + r(30) }, () => {
      const id = r(400);
      const type = types[id % types.length]!;
      return {
        event_id: `d-${id}`,
        type,
        entity_id: hash(`d-entity-${id % 9}`),
        occurred_at: new Date(NOW - (id % 50) * 400_000).toISOString(),
        ...(type === 'trade.completed' && id % 3 ? { amount: 5 + (id % 17), currency: id % 2 ? 'USD' : 'EUR' } : {}),
        ...(type === 'trade.completed' || type === 'dispute.opened'
          ? { counterparty_id: hash(`d-entity-${(id + 1) % 9}`) }
          : {}),
        ...(id % 4 === 0 ? { linked_identifiers: [{ type: 'device', hash: hash(`d-device-${id % 5}`) }] } : {}),
      } as TrustEvent;
    }),
  );
}

const prepared = (events: TrustEvent[]) =>
  prepareBatch(events, DEFAULT_POLICY, { environment: 'live', clientId: 'c1', now: NOW });

async function rows(store: Store): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [table, key] of Object.entries(TABLES))
    out[table] = (await sql.raw(`select * from ${table} order by ${key}`).execute(store.db)).rows;
  return out;
}

/** Runs `work` while another transaction holds the connection, then lets that transaction commit. */
async function whileHeld<T>(store: Store, work: () => Promise<T>): Promise<T> {
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => (opened = resolve));
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const done = store.db.transaction().execute(async (trx: Transaction<Database>) => {
    await sql`select 1`.execute(trx);
    opened();
    await held;
  });
  await open;
  const pending = work();
  await new Promise((resolve) => setTimeout(resolve, 5));
  release();
  await done;
  return pending;
}

test('the direct path stores the rows the Kysely transaction stores, batch after batch', async (t) => {
  const direct = await freshStore('sqlite');
  const kysely = await freshStore('sqlite');
  t.after(() => Promise.all([direct.drop(), kysely.drop()]));
  for (const events of batches(7, 25)) {
    const outcomes = commitDirectly(direct.store.db, [prepared(events)]);
    assert.ok(outcomes, 'the direct path ran');
    const viaKysely = await whileHeld(kysely.store, () =>
      ingestEvents(kysely.store, events, DEFAULT_POLICY, { environment: 'live', clientId: 'c1', now: NOW }),
    );
    assert.deepEqual(outcomes[0], { ok: true, result: viaKysely });
  }
  const stored = await rows(direct.store);
  assert.ok(
    stored.identifiers!.length > 0 && stored.entity_hourly!.length > 0 && stored.entity_counterparties!.length > 0,
  );
  assert.deepEqual(stored, await rows(kysely.store));
});

test('a group on the direct path: a conflicting batch rolls back alone, duplicates count, the rest commit', async (t) => {
  const { store, drop } = await freshStore('sqlite');
  t.after(drop);
  const ev = (event_id: string, entity: string, amount = 10) =>
    ({
      event_id,
      type: 'trade.completed',
      entity_id: hash(entity),
      occurred_at: new Date(NOW).toISOString(),
      amount,
      currency: 'USD',
    }) as TrustEvent;
  const first = commitDirectly(store.db, [prepared([ev('g-1', 'g-a'), ev('g-2', 'g-b')])]);
  assert.deepEqual(first, [{ ok: true, result: { accepted: 2, duplicates: 0 } }]);
  const group: PreparedBatch[] = [
    prepared([ev('g-1', 'g-a'), ev('g-3', 'g-a')]),
    // g-2 again with another amount: a conflict; g-4 must not be stored
    prepared([ev('g-4', 'g-c'), ev('g-2', 'g-b', 99)]),
    prepared([ev('g-5', 'g-c')]),
  ];
  const outcomes = commitDirectly(store.db, group)!;
  assert.deepEqual(outcomes[0], { ok: true, result: { accepted: 1, duplicates: 1 } });
  assert.ok(!outcomes[1]!.ok && outcomes[1]!.error instanceof EventConflictError);
  assert.deepEqual((outcomes[1] as { error: EventConflictError }).error.conflicts, [{ index: 1, eventId: 'g-2' }]);
  assert.deepEqual(outcomes[2], { ok: true, result: { accepted: 1, duplicates: 0 } });
  const ids = (await sql<{ event_id: string }>`select event_id from events order by event_id`.execute(store.db)).rows;
  assert.deepEqual(
    ids.map((r) => r.event_id),
    ['g-1', 'g-2', 'g-3', 'g-5'],
  );
  const trades = (
    await sql<{
      trades_completed: number;
    }>`select trades_completed from entities where entity_id = ${hash('g-c')}`.execute(store.db)
  ).rows;
  assert.deepEqual(trades, [{ trades_completed: 1 }], 'only g-5 counted for g-c');
  // A group of one that conflicts: the whole transaction rolls back and the error comes out.
  assert.throws(
    () => commitDirectly(store.db, [prepared([ev('g-6', 'g-d'), ev('g-1', 'g-a', 5)])]),
    EventConflictError,
  );
  const g6 = await sql`select 1 from events where event_id = 'g-6'`.execute(store.db);
  assert.equal(g6.rows.length, 0);
});

test('the direct path declines while a transaction is open, and for events that label or flag', async (t) => {
  const { store, drop } = await freshStore('sqlite');
  t.after(drop);
  const trade = prepared(batches(3, 1)[0]!);
  const declined = await whileHeld(store, async () => commitDirectly(store.db, [trade]));
  assert.equal(declined, undefined);
  const fraud = prepared([
    { event_id: 'f-1', type: 'fraud.reported', entity_id: hash('f'), occurred_at: new Date(NOW).toISOString() },
  ]);
  assert.equal(commitDirectly(store.db, [trade, fraud]), undefined);
  const stored = await sql`select count(*) as n from events`.execute(store.db);
  assert.deepEqual(stored.rows, [{ n: 0 }], 'nothing was written');
});
