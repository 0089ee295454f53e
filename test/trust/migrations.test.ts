// 002_identifier_stats and 003_event_scope on a store that already holds history: identifier
// counts are built from the stored links and flags; events keep their payloads under the unknown
// owner '' so no client's new ids collide with them.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Migrator, sql, type Kysely } from 'kysely';
import { backends, type Backend } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../../src/config/policy.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';

async function storeAt001(backend: Backend): Promise<{ store: Store; drop(): Promise<void> }> {
  const tag = randomBytes(6).toString('hex');
  let store: Store;
  let drop: () => Promise<void>;
  let schema: string | undefined;
  if (backend === 'sqlite') {
    const path = join(tmpdir(), `vouch-mig-${tag}.db`);
    store = openStore(`sqlite:${path}`);
    drop = async () => {
      await store.close();
      for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
    };
  } else {
    const base = process.env.VOUCH_TEST_POSTGRES_URL!;
    schema = `m_${tag}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    store = openStore(base, { schema, poolSize: 2 });
    drop = async () => {
      await store.close();
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    };
  }
  const migrator = new Migrator({
    db: store.db as Kysely<unknown>,
    provider: { getMigrations: async () => ({ '001_initial': MIGRATIONS['001_initial']!(backend) }) },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
  return { store, drop };
}

for (const backend of backends()) {
  describe(`migrations over existing history [${backend}]`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const c of cleanups) await c();
    });

    test('identifier_stats is built from stored links and flags; legacy events get owner "" and keep their payloads', async () => {
      const { store, drop } = await storeAt001(backend);
      cleanups.push(drop);
      const [a, b, c] = [hash('mig-a'), hash('mig-b'), hash('mig-c')];
      const device = hash('mig-device');
      const blank = { version: 1, first_seen_at: 1, last_event_at: 1, trades_completed: 0, trades_cancelled: 0, disputes_opened: 0, disputes_won: 0, disputes_lost: 0, chargebacks: 0, fraud_reports: 0, blocklisted: 0, blocklist_changed_at: 0, decay_at: 1, d_trades_completed: 0, d_trades_cancelled: 0, d_disputes_lost: 0, d_chargebacks: 0, d_fraud_reports: 0 };
      const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await db.insertInto('entities').values([{ ...blank, entity_id: a }, { ...blank, entity_id: b, fraud_reports: 1 }, { ...blank, entity_id: c, blocklisted: 1 }]).execute();
      await db.insertInto('identifiers').values([a, b, c].map((entity_id) => ({ id_type: 'device', hash: device, entity_id, created_at: 1 }))).execute();
      const legacy = { event_id: 'legacy-1', type: 'chargeback', entity_id: a, occurred_at: new Date(Date.now() - 60_000).toISOString() };
      await db.insertInto('events').values({ event_id: 'legacy-1', entity_id: a, type: 'chargeback', occurred_at: Date.parse(legacy.occurred_at), payload: JSON.stringify(legacy), ingested_at: 1 }).execute();

      const applied = await store.migrate();
      assert.ok(applied.includes('002_identifier_stats') && applied.includes('003_event_scope'), applied.join(','));
      const stats = await store.db.selectFrom('identifier_stats').selectAll().execute();
      assert.deepEqual(stats.map((s) => [s.id_type, s.hash, Number(s.entities), Number(s.flagged_entities)]), [['device', device, 3, 2]]);
      const events = await store.db.selectFrom('events').select(['client_id', 'event_id', 'payload']).execute();
      assert.deepEqual(events.map((e) => [e.client_id, e.event_id]), [['', 'legacy-1']]);

      // the unknown owner's ids: the same event again (keys in another order) is a duplicate, a
      // different one a conflict; another client's id of the same name is its own event
      const reordered = Object.fromEntries(Object.entries(legacy).reverse()) as unknown as TrustEvent;
      assert.deepEqual(await ingestEvents(store, [reordered], DEFAULT_POLICY), { accepted: 0, duplicates: 1 });
      await assert.rejects(ingestEvents(store, [{ ...legacy, type: 'fraud.reported' } as TrustEvent], DEFAULT_POLICY), /different event/);
      assert.deepEqual(await ingestEvents(store, [legacy as TrustEvent], DEFAULT_POLICY, { clientId: 'client-x' }), { accepted: 1, duplicates: 0 });
      const decisionColumns = await sql<{ cache_key: string | null }>`select cache_key, cache_state from decisions`.execute(store.db);
      assert.deepEqual(decisionColumns.rows, []);
    });
  });
}
