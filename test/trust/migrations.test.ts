// 002_identifier_stats and 003_event_scope on a store that already holds history: identifier
// counts are built from the stored links and flags; events keep their payloads under the unknown
// owner '' so no client's new ids collide with them. 009_environments: history stored before test mode
// is live history, read by live callers and by no test caller.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { ADMIN_ID, ADMIN_SECRET, backends, bearer, testConfig, type Backend } from '../helpers/app.ts';
import { buildApp } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { hash } from '../helpers/trust.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';
import { storeMigratedBefore } from '../helpers/migrations.ts';

const LIVE = { environment: 'live' } as const;

const storeAt001 = (backend: Backend) => storeMigratedBefore(backend, '002');

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
      const blank = {
        version: 1,
        first_seen_at: 1,
        last_event_at: 1,
        trades_completed: 0,
        trades_cancelled: 0,
        disputes_opened: 0,
        disputes_won: 0,
        disputes_lost: 0,
        chargebacks: 0,
        fraud_reports: 0,
        blocklisted: 0,
        blocklist_changed_at: 0,
        decay_at: 1,
        d_trades_completed: 0,
        d_trades_cancelled: 0,
        d_disputes_lost: 0,
        d_chargebacks: 0,
        d_fraud_reports: 0,
      };
      const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await db
        .insertInto('entities')
        .values([
          { ...blank, entity_id: a },
          { ...blank, entity_id: b, fraud_reports: 1 },
          { ...blank, entity_id: c, blocklisted: 1 },
        ])
        .execute();
      await db
        .insertInto('identifiers')
        .values([a, b, c].map((entity_id) => ({ id_type: 'device', hash: device, entity_id, created_at: 1 })))
        .execute();
      const legacy = {
        event_id: 'legacy-1',
        type: 'chargeback',
        entity_id: a,
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
      };
      await db
        .insertInto('events')
        .values({
          event_id: 'legacy-1',
          entity_id: a,
          type: 'chargeback',
          occurred_at: Date.parse(legacy.occurred_at),
          payload: JSON.stringify(legacy),
          ingested_at: 1,
        })
        .execute();

      const applied = await store.migrate();
      assert.ok(applied.includes('002_identifier_stats') && applied.includes('003_event_scope'), applied.join(','));
      const stats = await store.db.selectFrom('identifier_stats').selectAll().execute();
      assert.deepEqual(
        stats.map((s) => [s.id_type, s.hash, Number(s.entities), Number(s.flagged_entities)]),
        [['device', device, 3, 2]],
      );
      const events = await store.db.selectFrom('events').select(['client_id', 'event_id', 'payload']).execute();
      assert.deepEqual(
        events.map((e) => [e.client_id, e.event_id]),
        [['', 'legacy-1']],
      );

      // the unknown owner's ids: the same event again (keys in another order) is a duplicate, a
      // different one a conflict; another client's id of the same name is its own event
      const reordered = Object.fromEntries(Object.entries(legacy).reverse()) as unknown as TrustEvent;
      assert.deepEqual(await ingestEvents(store, [reordered], DEFAULT_POLICY, LIVE), { accepted: 0, duplicates: 1 });
      await assert.rejects(
        ingestEvents(store, [{ ...legacy, type: 'fraud.reported' } as TrustEvent], DEFAULT_POLICY, LIVE),
        /different event/,
      );
      assert.deepEqual(
        await ingestEvents(store, [legacy as TrustEvent], DEFAULT_POLICY, {
          environment: 'live',
          clientId: 'client-x',
        }),
        { accepted: 1, duplicates: 0 },
      );
      const decisionColumns = await sql<{
        cache_key: string | null;
      }>`select cache_key, cache_state from decisions`.execute(store.db);
      assert.deepEqual(decisionColumns.rows, []);
    });
    test('009_environments: history stored before it is live: a live caller reads entity, timeline and linked flags, a test key gets 404', async () => {
      const { store, drop } = await storeMigratedBefore(backend, '009');
      cleanups.push(drop);
      const [a, flagged] = [hash('mig9-a'), hash('mig9-flagged')];
      const device = hash('mig9-device');
      const blank = {
        version: 1,
        first_seen_at: 1,
        last_event_at: 1,
        trades_completed: 1,
        trades_cancelled: 0,
        disputes_opened: 0,
        disputes_won: 0,
        disputes_lost: 0,
        chargebacks: 0,
        fraud_reports: 0,
        blocklisted: 0,
        blocklist_changed_at: 0,
        decay_at: 1,
        d_trades_completed: 1,
        d_trades_cancelled: 0,
        d_disputes_lost: 0,
        d_chargebacks: 0,
        d_fraud_reports: 0,
      };
      const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await db
        .insertInto('entities')
        .values([
          { ...blank, entity_id: a },
          { ...blank, entity_id: flagged, fraud_reports: 1, d_fraud_reports: 1 },
        ])
        .execute();
      await db
        .insertInto('identifiers')
        .values([a, flagged].map((entity_id) => ({ id_type: 'device', hash: device, entity_id, created_at: 1 })))
        .execute();
      await db
        .insertInto('identifier_stats')
        .values({ id_type: 'device', hash: device, entities: 2, flagged_entities: 1, version: 1 })
        .execute();
      const stored = {
        event_id: 'mig9-1',
        type: 'trade.completed',
        entity_id: a,
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
      };
      await db
        .insertInto('events')
        .values({
          client_id: ADMIN_ID,
          event_id: 'mig9-1',
          entity_id: a,
          type: 'trade.completed',
          occurred_at: Date.parse(stored.occurred_at),
          payload: JSON.stringify(stored),
          ingested_at: 1,
        })
        .execute();
      await store.migrate();

      const config = testConfig();
      await ensureBootstrapAdmin(store, config);
      const app = await buildApp({ config, store, logger: false });
      cleanups.unshift(() => app.close());
      const tokenRes = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
      });
      const live = bearer(tokenRes.json().access_token as string);
      const keyRes = await app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: live,
        payload: { name: 'mig9-test', environment: 'test', scopes: ['trust:read'] },
      });
      const testKey = { 'x-api-key': keyRes.json().key as string };

      const entity = await app.inject({ method: 'GET', url: `/api/v1/trust/entities/${a}`, headers: live });
      assert.equal(entity.statusCode, 200, entity.body);
      assert.deepEqual(entity.json().linked_identifiers, [{ type: 'device', hash: device, entities: 2 }]);
      const timeline = await app.inject({ method: 'GET', url: `/api/v1/trust/entities/${a}/events`, headers: live });
      assert.deepEqual(
        (timeline.json() as { data: Array<{ event_id: string }> }).data.map((e) => e.event_id),
        ['mig9-1'],
      );
      const scored = await app.inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        headers: live,
        payload: { entity_id: a, amount: 10, currency: 'USD' },
      });
      const signal = (scored.json() as { signals: Array<{ name: string; value: number }> }).signals.find(
        (s) => s.name === 'linked_flagged_entities',
      );
      assert.equal(signal?.value, 1, scored.body);
      assert.equal(
        (await app.inject({ method: 'GET', url: `/api/v1/trust/entities/${a}`, headers: testKey })).statusCode,
        404,
      );
      assert.equal(
        (await app.inject({ method: 'GET', url: `/api/v1/trust/entities/${a}/events`, headers: testKey })).statusCode,
        404,
      );
    });
  });
}
