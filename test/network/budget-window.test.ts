// A peer's evaluation budget is counted over a rolling 24 hours (docs/network.md, "What the budget
// bounds"): no reset at UTC midnight, what was spent comes back 24 h to 24 h 10 min later, and
// concurrent requests never take more than the budget.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachBackend } from '../helpers/app.ts';
import { consumeBudget, pruneBudgets, usedInWindow } from '../../src/network/budget-repository.ts';
import { networkDb } from '../../src/network/tables.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

describeEachBackend('Budget over a rolling 24 hours', (ctx) => {
  const db = () => networkDb(ctx().store.db);

  test('UTC midnight gives nothing back: a budget spent at 23:50 is still spent at 00:10 and for 24 hours', async () => {
    const peer = { id: 'peer-midnight', budget_per_day: 10 };
    const spent = Date.parse('2026-11-26T23:50:00Z');
    assert.equal((await consumeBudget(db(), peer, 10, spent)).granted, true);
    const afterMidnight = await consumeBudget(db(), peer, 1, spent + 20 * MIN);
    assert.equal(afterMidnight.granted, false);
    assert.equal(afterMidnight.used, 10);
    // Given back when the slot of 23:50 leaves the window: 24 h 10 min after 23:50, not before 24 h.
    assert.ok(
      afterMidnight.retryAfterSeconds > 23 * 3600 && afterMidnight.retryAfterSeconds <= 24 * 3600,
      String(afterMidnight.retryAfterSeconds),
    );
    assert.equal((await consumeBudget(db(), peer, 1, spent + 24 * HOUR - MIN)).granted, false);
    const back = await consumeBudget(db(), peer, 10, spent + 24 * HOUR + 10 * MIN);
    assert.deepEqual([back.granted, back.used], [true, 10]);
  });

  test('spent in parts, given back in parts: each slot returns 24 hours after it was spent', async () => {
    const peer = { id: 'peer-parts', budget_per_day: 10 };
    const t0 = Date.parse('2026-11-20T08:00:00Z');
    assert.equal((await consumeBudget(db(), peer, 6, t0)).granted, true);
    assert.equal((await consumeBudget(db(), peer, 4, t0 + 12 * HOUR)).granted, true);
    assert.equal((await consumeBudget(db(), peer, 1, t0 + 20 * HOUR)).granted, false);
    // The first 6 are back, the later 4 still count.
    assert.equal(await usedInWindow(db(), peer.id, t0 + 24 * HOUR + 10 * MIN), 4);
    assert.equal((await consumeBudget(db(), peer, 7, t0 + 24 * HOUR + 10 * MIN)).granted, false);
    assert.equal((await consumeBudget(db(), peer, 6, t0 + 24 * HOUR + 10 * MIN)).granted, true);
  });

  test('concurrent requests take at most the budget', async () => {
    const peer = { id: 'peer-concurrent', budget_per_day: 10 };
    const now = Date.parse('2026-11-21T12:00:00Z');
    const grants = await Promise.all(Array.from({ length: 25 }, () => consumeBudget(db(), peer, 1, now)));
    assert.equal(grants.filter((g) => g.granted).length, 10);
    assert.equal(await usedInWindow(db(), peer.id, now), 10);
  });

  test('a count of the former per-day format for today still counts; pruning keeps only the window', async () => {
    const peer = { id: 'peer-upgraded', budget_per_day: 10 };
    const now = Date.parse('2026-11-22T15:00:00Z');
    await db().insertInto('network_budget').values({ peer_id: peer.id, day: '2026-11-22', used: 9 }).execute();
    assert.equal((await consumeBudget(db(), peer, 2, now)).granted, false);
    assert.equal((await consumeBudget(db(), peer, 1, now)).granted, true);
    await pruneBudgets(db(), now + 48 * HOUR);
    assert.equal(
      (await db().selectFrom('network_budget').select('day').where('peer_id', '=', peer.id).execute()).length,
      0,
    );
  });
});
