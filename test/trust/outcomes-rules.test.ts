// Outcomes with the environment's real rules (the RuleRegistry the app wires in): an active rule's
// action and cap reach the score, a shadow rule only the decision, and a rule change is never
// answered from the cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { hash, score } from '../helpers/trust.ts';
import { AT_LEVEL } from './outcomes-support.ts';

describeEachBackend('outcomes from stored rules', (ctx) => {
  test('an active hold rule with a cap, a shadow decline, and a change that moves the cache', async () => {
    const token = await ctx().token();
    const rule = async (body: Record<string, unknown>) => {
      const res = await ctx().inject({ method: 'POST', url: '/api/v1/rules', headers: bearer(token), payload: body });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string; version: number };
    };
    const request = {
      entity_id: hash('stored-rules'),
      currency: 'USD',
      amount: 120,
      context: { ...AT_LEVEL.low.context, promo: 'spring' },
    };
    const before = (await score(ctx(), token, request)).json();
    assert.equal(before.outcome, 'approve');
    assert.equal((await score(ctx(), token, request)).json().cached, true);

    const hold = await rule({
      name: 'promo-hold',
      condition: "has(context.promo) && context.promo == 'spring' && amount_ref > 0.1",
      action: 'hold',
      cap: 25,
      status: 'active',
    });
    await rule({
      name: 'promo-watch',
      condition: "context.payment_method == 'bank_transfer'",
      action: 'decline',
      status: 'shadow',
    });
    const after = (await score(ctx(), token, request)).json();
    assert.equal(after.cached, false, 'a rule change is never answered from the cache');
    assert.equal(after.outcome, 'hold');
    assert.equal(after.score, before.score);
    assert.equal(after.risk_level, before.risk_level);
    assert.equal(after.safe_amount, 25);
    assert.equal(after.rules.length, 1);
    assert.equal(after.rules[0].id, hold.id);
    assert.equal(after.rules[0].version, 1);
    assert.equal(after.rules[0].action, 'hold');
    assert.equal(after.rules[0].reads['context.promo'], 'spring');
    const view = (
      await ctx().inject({ method: 'GET', url: `/api/v1/decisions/${after.decision_id}`, headers: bearer(token) })
    ).json();
    assert.equal(view.outcome, 'hold');
    assert.deepEqual(
      view.shadow_rules.map((r: { name: string; would_be_outcome: string }) => [r.name, r.would_be_outcome]),
      [['promo-watch', 'decline']],
    );
    const review = await ctx()
      .store.db.selectFrom('reviews')
      .select(['outcome', 'reason'])
      .where('decision_id', '=', after.decision_id)
      .executeTakeFirst();
    assert.deepEqual(review, { outcome: 'hold', reason: 'outcome' });

    const other = (await score(ctx(), token, { ...request, context: { ...request.context, promo: 'autumn' } })).json();
    assert.equal(other.outcome, 'approve', 'another value of the member the rule reads: its own entry, no match');
  });
});
