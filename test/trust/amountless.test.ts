// trade.completed without an amount (issue 8, item 13): the trade counts, only the amount and
// volume statistics leave it out. Ingested through ingestEvents directly: the schema's relaxation
// of `amount` belongs to the validation layer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { loadProfile } from '../../src/trust/profile.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';

const LIVE = { environment: 'live' } as const;

describeEachBackend('trade.completed without amount', (ctx) => {
  test('counts as a completed trade (and towards velocity) but not towards volume or amount statistics', async () => {
    const id = hash(`amountless-${Date.now()}`);
    const at = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
    const events = [
      {
        event_id: `al-1-${id}`,
        type: 'trade.completed',
        entity_id: id,
        occurred_at: at(50),
        amount: 100,
        currency: 'USD',
        counterparty_id: hash('al-cp'),
      },
      {
        event_id: `al-2-${id}`,
        type: 'trade.completed',
        entity_id: id,
        occurred_at: at(40),
        counterparty_id: hash('al-cp'),
      },
      { event_id: `al-3-${id}`, type: 'trade.completed', entity_id: id, occurred_at: at(30), currency: 'USD' },
    ] as TrustEvent[];
    assert.deepEqual(await ingestEvents(ctx().store, events, DEFAULT_POLICY, LIVE), { accepted: 3, duplicates: 0 });
    const token = await ctx().token();
    const agg = (
      await ctx().inject({ method: 'GET', url: `/api/v1/trust/entities/${id}`, headers: bearer(token) })
    ).json();
    assert.equal(agg.trades_completed, 3);
    assert.deepEqual(agg.volume_completed, { USD: 100 });
    const { profile } = await loadProfile(ctx().store, {
      environment: 'live',
      entityId: id,
      currency: 'USD',
      counterpartyId: hash('al-cp'),
      now: Date.now(),
    });
    assert.equal(profile.tradesCompleted, 3);
    assert.equal(profile.velocity.tradesLastHour, 3);
    assert.equal(profile.velocity.volumeLastDay, 100);
    assert.deepEqual({ n: profile.amountStats.n, volume: profile.amountStats.volume }, { n: 1, volume: 100 });
    assert.ok(Number.isFinite(profile.amountStats.logMean) && Number.isFinite(profile.amountStats.logM2));
    assert.equal(profile.counterpartyTrades, 2);
    // and it scores normally
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/score',
      headers: bearer(token),
      payload: { entity_id: id, amount: 100, currency: 'USD' },
    });
    assert.equal(res.statusCode, 200, res.body);
  });
});
