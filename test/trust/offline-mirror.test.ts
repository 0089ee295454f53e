// bench/quality/offline.ts must stay a faithful mirror of ingest + profile (issue 10 item 3): on a
// small simulated market, the in-memory profile equals the store's for the aggregates the P2P
// features read (last trade, identifier holders, flagged neighbours) and the counts beside them.
import { test, describe, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { loadProfile } from '../../src/trust/profile.ts';
import { simulateMarket } from '../../bench/quality/market.ts';
import { OfflineHistory } from '../../bench/quality/offline.ts';
import type { ScoreRequest } from '../../src/model/types.ts';

const market = simulateMarket({ seed: 7, entities: 120, days: 30, mix: { throwaway: 0.15, mule: 0.15 } });
const now = Date.parse(market.end);

for (const backend of backends()) {
  describe(`offline benchmark mirror vs the store [${backend}]`, () => {
    let t: TestStore;
    const offline = new OfflineHistory(DEFAULT_POLICY);
    before(async () => {
      t = await freshStore(backend);
      const events = [...market.events].sort((a, b) => Date.parse(a.occurred_at) - Date.parse(b.occurred_at));
      for (let i = 0; i < events.length; i += 1000)
        await ingestEvents(t.store, events.slice(i, i + 1000), DEFAULT_POLICY, { environment: 'live', now });
      for (const ev of events) offline.apply(ev);
    });
    after(async () => t?.drop());

    test('every entity, and requests naming linked identifiers: the same last trade, holders and flagged neighbours', async () => {
      const requests: ScoreRequest[] = [
        ...market.entities.map((e) => ({ entity_id: e.entity_id, amount: 100, currency: 'USD', context: {} })),
        ...market.requests
          .filter((r) => r.body.context?.linked_identifiers)
          .slice(0, 40)
          .map((r) => ({
            entity_id: r.body.entity_id,
            amount: r.body.amount,
            currency: r.body.currency,
            context: r.body.context ?? {},
          })),
      ];
      assert.ok(requests.length > 130);
      let shared = 0;
      for (const r of requests) {
        const { profile: stored } = await loadProfile(t.store, {
          environment: 'live',
          entityId: r.entity_id,
          currency: r.currency,
          linked: r.context.linked_identifiers,
          now,
        });
        const mirror = offline.profile(r, now);
        const pick = (p: typeof stored) => ({
          known: p.known,
          tradesCompleted: p.tradesCompleted,
          lastTradeAt: p.lastTradeAt ?? null,
          sharedIdentifierEntities: p.sharedIdentifierEntities ?? 0,
          linkedFlaggedEntities: p.linkedFlaggedEntities,
        });
        assert.deepEqual(pick(mirror), pick(stored), r.entity_id);
        if ((stored.sharedIdentifierEntities ?? 0) > 0) shared++;
      }
      assert.ok(shared > 5, `only ${shared} profiles share an identifier: the check would be vacuous`);
    });
  });
}
