// Profiles in memory (src/trust/profile-cache.ts): an entry answers only while nothing it depends on
// has changed. Another connection's event is read at the next turn (SQLite) or at once (PostgreSQL:
// every answer is checked), this process's own at once; a commit that stores only decisions keeps
// the entry; a different counterparty reads its own count.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { freshStore, backends, type TestStore } from '../helpers/app.ts';
import { twoInstances } from '../helpers/instances.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { loadProfile, type ProfileQuery } from '../../src/trust/profile.ts';
import { ProfileCache } from '../../src/trust/profile-cache.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const E = hash('entity'),
  CP1 = hash('cp1'),
  CP2 = hash('cp2');
let seq = 0;
const trade = (entity: string, counterparty: string, amount = 50): TrustEvent => ({
  event_id: `pc-${++seq}`,
  type: 'trade.completed',
  entity_id: entity,
  occurred_at: new Date().toISOString(),
  amount,
  currency: 'USD',
  counterparty_id: counterparty,
});
const chargeback = (entity: string): TrustEvent => ({
  event_id: `pc-${++seq}`,
  type: 'chargeback',
  entity_id: entity,
  occurred_at: new Date().toISOString(),
});
const ingest = (store: Store, events: TrustEvent[]) =>
  ingestEvents(store, events, DEFAULT_POLICY, { environment: 'live' });
const query = (counterpartyId?: string): ProfileQuery => ({
  environment: 'live',
  entityId: E,
  currency: 'USD',
  counterpartyId,
  now: Date.now(),
  ringFanout: DEFAULT_POLICY.maxIdentifierFanout,
});

for (const backend of backends())
  describe(`ProfileCache (${backend})`, () => {
    let s: TestStore;
    let other: Store;
    let cache: ProfileCache;
    before(async () => {
      s = await freshStore(backend);
      other = openStore(s.url);
      cache = new ProfileCache(s.store);
      await ingest(s.store, [trade(E, CP1), trade(E, CP2), trade(E, CP2)]);
    });
    after(async () => {
      await other.close();
      await s.drop();
    });

    test("another connection's event is read at the next turn, not an older profile", async () => {
      const before = (await cache.load(query(CP1))).profile.chargebacks;
      await ingest(other, [chargeback(E)]);
      await nextTurn();
      assert.equal((await cache.load(query(CP1))).profile.chargebacks, before + 1);
    });

    test("this process's own ingestion is read at once", async () => {
      const before = (await cache.load(query(CP1))).profile.tradesCompleted;
      await ingest(s.store, [trade(E, CP1)]);
      assert.equal((await cache.load(query(CP1))).profile.tradesCompleted, before + 1);
    });

    test('a commit that stores only decisions keeps the entry: the profile is not read again', async () => {
      await nextTurn();
      const first = await cache.load(query(CP1));
      // A change no trigger sees, on this connection (so no data_version move either): only a read would show it.
      await sql`update entity_currency set trades = trades + 100 where entity_id = ${E}`.execute(s.store.db);
      await other.db
        .insertInto('decisions')
        .values({
          id: 'dec_profile_cache',
          kind: 'score',
          environment: 'live',
          principal_id: 'key_x',
          owner_client_id: 'c',
          subject_id: E,
          request_digest: hash('r'),
          result: '{}',
          policy_version: 'v',
          created_at: Date.now(),
        } as never)
        .execute();
      await nextTurn();
      const second = await cache.load(query(CP1));
      assert.deepEqual(second.profile.amountStats, first.profile.amountStats, 'served from memory');
      assert.equal(
        (await loadProfile(s.store, query(CP1))).profile.amountStats.n,
        first.profile.amountStats.n + 100,
        'the store has moved',
      );
      await sql`update entity_currency set trades = trades - 100 where entity_id = ${E}`.execute(s.store.db);
    });

    test('a different counterparty reads its own trade count; none named reads none', async () => {
      await nextTurn();
      const one = await cache.load(query(CP1));
      const two = await cache.load(query(CP2));
      const none = await cache.load(query());
      const stranger = await cache.load(query(hash('stranger')));
      assert.equal(two.profile.counterpartyTrades, (await loadProfile(s.store, query(CP2))).profile.counterpartyTrades);
      assert.equal(two.profile.counterpartyTrades, 2);
      assert.equal(one.profile.counterpartyTrades, (await loadProfile(s.store, query(CP1))).profile.counterpartyTrades);
      assert.equal(none.profile.counterpartyTrades, null);
      assert.equal(stranger.profile.counterpartyTrades, 0);
    });

    test('a lost store connection fails the load: an entry is never answered without its check', async () => {
      const own = openStore(s.url);
      const lost = new ProfileCache(own);
      await lost.load(query(CP1));
      await own.close();
      await assert.rejects(lost.load(query(CP2)));
      // PostgreSQL checks every use against the store; SQLite's check is the turn's generation poll,
      // a file read that has no connection to lose.
      if (backend === 'postgres')
        await assert.rejects(lost.load(query(CP1)), 'the entry is checked against the store, which is gone');
    });

    test('a small cache evicts the least recently used entities and reuses their slots, cleared or not, every answer still a fresh read', async () => {
      const small = new ProfileCache(s.store, 3);
      const entities = Array.from({ length: 8 }, (_, i) => hash(`small-${i}`));
      await ingest(
        s.store,
        entities.map((entity, i) => trade(entity, CP1, 10 + i)),
      );
      for (let round = 0; round < 4; round++) {
        if (round === 2) small.clear();
        for (const entity of [...entities, ...entities.slice(0, 2)]) {
          const q = { ...query(CP1), entityId: entity };
          assert.deepEqual(await small.load(q), await loadProfile(s.store, q));
        }
      }
    });

    test('property: after any interleaving of events on either connection, the cached profile equals a fresh read', async () => {
      const entities = [hash('p1'), hash('p2'), hash('p3')];
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              op: fc.constantFrom('own', 'other', 'load', 'turn'),
              entity: fc.nat(2),
              counterparty: fc.nat(2),
              kind: fc.constantFrom('trade', 'chargeback'),
            }),
            { minLength: 1, maxLength: 12 },
          ),
          async (steps) => {
            await nextTurn();
            for (const step of steps) {
              const entity = entities[step.entity]!;
              const event = step.kind === 'trade' ? trade(entity, entities[step.counterparty]!) : chargeback(entity);
              if (step.op === 'own') await ingest(s.store, [event]);
              else if (step.op === 'other') {
                await ingest(other, [event]);
                await nextTurn(); // another connection's commit is seen from the next turn on
              } else if (step.op === 'turn') await nextTurn();
              const q = { ...query(entities[step.counterparty]), entityId: entity };
              const cached = await cache.load(q);
              assert.deepEqual(cached, await loadProfile(s.store, q));
            }
          },
        ),
        { numRuns: 25 },
      );
    });

    test('an entity with a ring gets the same profile again (PostgreSQL keeps no entry for it: a ring reaches past the checked state)', async () => {
      const device = { type: 'device' as const, hash: hash('ring-device') };
      const [x, y] = [hash('ring-x'), hash('ring-y')];
      await ingest(
        s.store,
        [x, y].map((entity) => ({
          event_id: `pc-${++seq}`,
          type: 'identifier.linked' as const,
          entity_id: entity,
          occurred_at: new Date().toISOString(),
          linked_identifiers: [device],
        })),
      );
      await ingest(s.store, [
        {
          event_id: `pc-${++seq}`,
          type: 'fraud.reported' as const,
          entity_id: y,
          occurred_at: new Date().toISOString(),
        },
      ]);
      await nextTurn();
      const q = { ...query(CP1), entityId: x };
      const first = await cache.load(q);
      assert.ok(first.profile.ring, 'x has a ring');
      assert.deepEqual(await cache.load(q), first);
      // A change no trigger sees and no state check reads: only a fresh read shows it.
      await sql`insert into entity_currency (environment, entity_id, currency, trades, volume, log_mean, log_m2) values ('live', ${x}, 'USD', 7, 70, 2, 0)`.execute(
        s.store.db,
      );
      try {
        const again = await cache.load(q);
        if (backend === 'postgres')
          assert.equal(again.profile.amountStats.n, 7, 'PostgreSQL kept no entry: read afresh');
        else assert.deepEqual(again, first, 'SQLite answers from memory while the generation holds');
      } finally {
        await sql`delete from entity_currency where entity_id = ${x}`.execute(s.store.db);
      }
    });
  });

for (const backend of backends()) {
  describe(`profiles in memory over HTTP, two instances over one store (${backend})`, () => {
    test('a chargeback ingested on one instance is in the next score on the other, whatever the amount', async () => {
      const world = await twoInstances(backend);
      try {
        const key = await world.key('pc', 'live', 'operator', ['trust:read', 'trust:write']);
        const headers = { 'x-api-key': key };
        const entity = hash('http-entity');
        const score = async (amount: number) => {
          const res = await world.a.inject({
            method: 'POST',
            url: '/api/v1/trust/score',
            headers,
            payload: { entity_id: entity, amount, currency: 'USD', context: { counterparty_id: CP1 } },
          });
          assert.equal(res.statusCode, 200, res.body);
          return res.json() as { score: number; signals: Array<{ name: string }> };
        };
        const events = await world.b.inject({
          method: 'POST',
          url: '/api/v1/trust/events',
          headers,
          payload: { events: [trade(entity, CP1)] },
        });
        assert.equal(events.statusCode, 200, events.body);
        const first = await score(100);
        assert.ok(!first.signals.some((x) => x.name === 'chargebacks'));
        const more = await world.b.inject({
          method: 'POST',
          url: '/api/v1/trust/events',
          headers,
          payload: { events: [chargeback(entity)] },
        });
        assert.equal(more.statusCode, 200, more.body);
        const second = await score(101);
        assert.ok(
          second.signals.some((x) => x.name === 'chargebacks'),
          JSON.stringify(second.signals),
        );
        assert.ok(second.score > first.score);
      } finally {
        await world.close();
      }
    });
  });
}
