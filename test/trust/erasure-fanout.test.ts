// An erasure racing the entity.flagged fan-out: a worker that read a fan-out row naming the entity
// before the erasure loses its lease, so it can write no webhook event from that old plan, and the
// row left for the next claim names the digest (docs/api.md, "Erasure").
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { deleteFanout, insertFanoutRow, leaseFanout, setFanoutProgress } from '../../src/webhooks/fanout-repository.ts';

describeEachBackend('Erasure while a fan-out is being expanded', (ctx) => {
  const W = hash(`fanout-erased-${process.pid}-${Date.now()}`);
  const fanoutId = `fan_erasure_${process.pid}_${Date.now()}`;
  let lease = 0;

  before(async () => {
    const service = await ctx().token();
    await postEvents(ctx(), service, [event('trade.completed', W, { amount: 10, currency: 'USD' })]);
    const now = Date.now();
    await insertFanoutRow(ctx().store.db, {
      id: fanoutId,
      environment: 'live',
      owner_client_id: 'cli_test',
      facts: JSON.stringify({ facts: [{ entity_id: W, reason: 'fraud_reported' }], fanout: 10 }),
      created_at: now,
    });
    lease = now + 60_000;
    // A worker holds the row, with a plan made from the entity still being there.
    assert.equal((await leaseFanout(ctx().store.db, fanoutId, lease, now)).length, 1);
    const res = await ctx().inject({
      method: 'DELETE',
      url: `/api/v1/trust/entities/${W}`,
      headers: bearer(await ctx().token(['trust:read', 'trust:write'], 'admin')),
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('the holder can neither record progress nor finish the row: its old plan is never written', async () => {
    assert.equal(Number(await setFanoutProgress(ctx().store.db, fanoutId, lease, 100)), 0);
    assert.equal(Number(await deleteFanout(ctx().store.db, fanoutId, lease)), 0);
  });

  test('the row is free for the next claim and names the digest, not the id', async () => {
    const row = await ctx()
      .store.db.selectFrom('webhook_fanouts')
      .selectAll()
      .where('id', '=', fanoutId)
      .executeTakeFirstOrThrow();
    assert.ok(Number(row.lease_until) < Date.now());
    assert.ok(!row.facts.includes(W));
    assert.match(row.facts, /erased_[0-9a-f]{64}/);
  });
});
