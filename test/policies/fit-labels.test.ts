// POST /api/v1/policies/fit's training labels (docs/api.md, "Policies"): API and event labels, plus unlabelled
// decisions older than assume_legit_after_days whose trade later completed (a trade.completed of
// the same entity and trade_id), which count as legit.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { hash, score, postEvents, event, tradeHistory } from '../helpers/trust.ts';

const DAY = 86_400_000;

describeEachBackend('fit labels: assume_legit_after_days', (ctx) => {
  let token = '';
  before(async () => {
    token = await ctx().token();
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 35; i++) {
      events.push(...tradeHistory(hash(`al-good-${i}`), 3 + (i % 5), 40));
      events.push(
        event('trade.completed', hash(`al-good-${i}`), { trade_id: `al-t-${i}`, amount: 80, currency: 'USD' }, 1000),
      );
      events.push(event('chargeback', hash(`al-bad-${i}`), { amount: 80, currency: 'USD' }, 3_600_000));
    }
    await postEvents(ctx(), token, events);
    for (let i = 0; i < 35; i++) {
      const good = await score(ctx(), token, {
        entity_id: hash(`al-good-${i}`),
        amount: 80,
        currency: 'USD',
        context: { trade_id: `al-t-${i}` },
      });
      assert.equal(good.statusCode, 200, good.body);
      // No trade.completed for this one: never assumed legit.
      await score(ctx(), token, {
        entity_id: hash(`al-good-${i}`),
        amount: 81,
        currency: 'USD',
        context: { trade_id: `al-open-${i}` },
      });
      const bad = await score(ctx(), token, {
        entity_id: hash(`al-bad-${i}`),
        amount: 80,
        currency: 'USD',
        context: { trade_id: `al-b-${i}` },
      });
      const l = await ctx().inject({
        method: 'POST',
        url: `/api/v1/decisions/${bad.json().decision_id}/label`,
        headers: bearer(token),
        payload: { label: 'fraud' },
      });
      assert.equal(l.statusCode, 200, l.body);
    }
    // The decisions were made 61 days ago.
    await ctx()
      .store.db.updateTable('decisions')
      .set({ created_at: Date.now() - 61 * DAY })
      .where('kind', '=', 'score')
      .execute();
  });

  test('older than N days with a completed trade: legit; younger, or without a completion: left out (422 when too few)', async () => {
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/policies/fit',
        headers: bearer(token),
        payload: { assume_legit_after_days: 90 },
      }),
      422,
      'insufficient_labels',
    );
    const fit = await ctx().inject({
      method: 'POST',
      url: '/api/v1/policies/fit',
      headers: bearer(token),
      payload: { assume_legit_after_days: 60 },
    });
    assert.equal(fit.statusCode, 201, fit.body);
    assert.deepEqual(fit.json().report.labels, { fraud: 35, legit: 35 });
    // A window that leaves the decisions out has no labels at all.
    const since = new Date(Date.now() - 30 * DAY).toISOString();
    problem(
      await ctx().inject({ method: 'POST', url: '/api/v1/policies/fit', headers: bearer(token), payload: { since } }),
      422,
      'insufficient_labels',
    );
  });
});
