// What a score's outcome opens and announces (docs/rules.md, docs/api.md "Reviews"; issue 31
// items 1 and 4): a review or hold opens a review due after the policy's review time, an approval
// is sampled at the policy's review_sample_rate, and the decision's webhooks (review_required,
// declined, high_risk) are enqueued in its commit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_ID, describeEachBackend } from '../helpers/app.ts';
import { hash, score } from '../helpers/trust.ts';
import { activatePolicy, AT_LEVEL, TestDecider } from './outcomes-support.ts';

const HOUR = 3_600_000;

describeEachBackend(
  'outcomes open reviews and announce themselves',
  (ctx) => {
    const reviewOf = (decisionId: string) =>
      ctx().store.db.selectFrom('reviews').selectAll().where('decision_id', '=', decisionId).executeTakeFirst();
    const decisionTime = async (decisionId: string) =>
      Number(
        (
          await ctx()
            .store.db.selectFrom('decisions')
            .select('created_at')
            .where('id', '=', decisionId)
            .executeTakeFirstOrThrow()
        ).created_at,
      );

    test('review and hold open a review due after the default times; approve and decline open none', async () => {
      const token = await ctx().token();
      const held = (
        await score(ctx(), token, {
          entity_id: hash('rv-hold'),
          currency: 'USD',
          amount: 10,
          context: { ...AT_LEVEL.low.context, rule: 'hold' },
        })
      ).json();
      const reviewed = (
        await score(ctx(), token, { entity_id: hash('rv-high'), currency: 'USD', ...AT_LEVEL.high })
      ).json();
      const approved = (
        await score(ctx(), token, { entity_id: hash('rv-low'), currency: 'USD', ...AT_LEVEL.low })
      ).json();
      const declined = (
        await score(ctx(), token, { entity_id: hash('rv-critical'), currency: 'USD', ...AT_LEVEL.critical })
      ).json();
      assert.deepEqual(
        [held.outcome, reviewed.outcome, approved.outcome, declined.outcome],
        ['hold', 'review', 'approve', 'decline'],
      );

      const hold = await reviewOf(held.decision_id);
      assert.ok(hold, 'a hold opens a review');
      assert.match(hold.id, /^rev_/);
      assert.deepEqual(
        [hold.outcome, hold.reason, hold.sample_rate, hold.status, hold.entity_id, hold.owner_client_id],
        ['hold', 'outcome', null, 'open', hash('rv-hold'), ADMIN_ID],
      );
      const at = await decisionTime(held.decision_id);
      assert.equal(Number(hold.opened_at), at);
      assert.equal(Number(hold.due_at) - at, 4 * HOUR);

      const review = await reviewOf(reviewed.decision_id);
      assert.ok(review, 'a high score sent to review opens one');
      assert.deepEqual([review.outcome, review.reason], ['review', 'outcome']);
      assert.equal(Number(review.due_at) - (await decisionTime(reviewed.decision_id)), 24 * HOUR);

      assert.equal(await reviewOf(approved.decision_id), undefined, 'review_sample_rate 0: no approval is sampled');
      assert.equal(await reviewOf(declined.decision_id), undefined);
    });

    test("the policy's outcomes, review hours and sample rate: rate 1 samples every approval, rate 0 none", async () => {
      const token = await ctx().token();
      await activatePolicy(ctx(), token, 'outcomes-sampled', {
        outcomes: { medium: 'hold', high: 'hold' },
        reviewHours: { review: 2, hold: 1 },
        reviewSampleRate: 1,
      });
      const approved = (
        await score(ctx(), token, { entity_id: hash('smp-low'), currency: 'USD', ...AT_LEVEL.low })
      ).json();
      const held = (
        await score(ctx(), token, { entity_id: hash('smp-medium'), currency: 'USD', ...AT_LEVEL.medium })
      ).json();
      assert.equal(approved.outcome, 'approve');
      assert.equal(held.risk_level, 'medium');
      assert.equal(held.outcome, 'hold', 'outcomes.medium');
      const sampled = await reviewOf(approved.decision_id);
      assert.ok(sampled, 'sampled at rate 1');
      assert.deepEqual([sampled.outcome, sampled.reason, sampled.sample_rate], ['approve', 'sample', 1]);
      assert.equal(
        Number(sampled.due_at) - (await decisionTime(approved.decision_id)),
        2 * HOUR,
        'a sampled approval is due as a review',
      );
      const hold = await reviewOf(held.decision_id);
      assert.equal(Number(hold!.due_at) - (await decisionTime(held.decision_id)), 1 * HOUR);

      await activatePolicy(ctx(), token, 'outcomes-unsampled', { reviewSampleRate: 0 });
      for (let i = 0; i < 5; i++) {
        const again = (
          await score(ctx(), token, { entity_id: hash(`unsmp-${i}`), currency: 'USD', ...AT_LEVEL.low })
        ).json();
        assert.equal(again.outcome, 'approve');
        assert.equal(await reviewOf(again.decision_id), undefined);
      }
      await activatePolicy(ctx(), token, 'outcomes-default', {});
    });

    test('webhooks: review_required (with the rules and the review id), declined, and high_risk beside them', async () => {
      const token = await ctx().token();
      await ctx()
        .store.db.insertInto('webhooks')
        .values({
          environment: 'live',
          id: 'whk_outcomes',
          owner_client_id: ADMIN_ID,
          url: 'https://hooks.example.org/vouch',
          description: null,
          secret: 'whsec_test',
          events: 'decision.review_required decision.declined decision.high_risk',
          created_at: Date.now(),
        })
        .execute();
      const eventsOf = async (decisionId: string) => {
        const rows = await ctx()
          .store.db.selectFrom('webhook_events')
          .select(['type', 'data'])
          .where('environment', '=', 'live')
          .execute();
        return rows
          .map((r) => ({ type: r.type, data: JSON.parse(r.data) as Record<string, unknown> }))
          .filter((e) => e.data.decision_id === decisionId);
      };

      const held = (
        await score(ctx(), token, {
          entity_id: hash('wh-hold'),
          currency: 'USD',
          amount: 10,
          context: { ...AT_LEVEL.low.context, rule: 'hold' },
        })
      ).json();
      const heldEvents = await eventsOf(held.decision_id);
      assert.deepEqual(
        heldEvents.map((e) => e.type),
        ['decision.review_required'],
      );
      const review = await reviewOf(held.decision_id);
      assert.equal(heldEvents[0]!.data.review_id, review!.id);
      assert.equal(heldEvents[0]!.data.outcome, 'hold');
      assert.deepEqual(heldEvents[0]!.data.rules, held.rules);
      assert.equal('cached' in heldEvents[0]!.data, false);

      const high = (
        await score(ctx(), token, { entity_id: hash('wh-high'), currency: 'USD', ...AT_LEVEL.high })
      ).json();
      assert.deepEqual((await eventsOf(high.decision_id)).map((e) => e.type).sort(), [
        'decision.high_risk',
        'decision.review_required',
      ]);

      const critical = (
        await score(ctx(), token, { entity_id: hash('wh-critical'), currency: 'USD', ...AT_LEVEL.critical })
      ).json();
      const criticalEvents = await eventsOf(critical.decision_id);
      assert.deepEqual(criticalEvents.map((e) => e.type).sort(), ['decision.declined', 'decision.high_risk']);
      assert.equal(criticalEvents.find((e) => e.type === 'decision.declined')!.data.outcome, 'decline');

      const declinedLow = (
        await score(ctx(), token, {
          entity_id: hash('wh-decline'),
          currency: 'USD',
          amount: 10,
          context: { ...AT_LEVEL.low.context, rule: 'decline' },
        })
      ).json();
      assert.deepEqual(
        (await eventsOf(declinedLow.decision_id)).map((e) => e.type),
        ['decision.declined'],
      );

      const low = (await score(ctx(), token, { entity_id: hash('wh-low'), currency: 'USD', ...AT_LEVEL.low })).json();
      assert.deepEqual(await eventsOf(low.decision_id), []);
    });
  },
  {},
  { decider: new TestDecider(), webhookWorker: { enabled: false } },
);
