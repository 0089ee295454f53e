// POST /api/v1/policies/fit on labels from reviews (docs/learning.md, "Labels from reviews"): the
// fit reads each decision's review and the deciding policy's review_sample_rate from the store,
// counts its labels by source and weights sampled approvals by the inverse of their rate.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { hash, score, postEvents, event, tradeHistory } from '../helpers/trust.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';

const DAY = 86_400_000;

describeEachBackend('fit: labels from reviews', (ctx) => {
  let token = '';
  before(async () => {
    token = await ctx().token();
    const sampling = { ...DEFAULT_POLICY, version: 'sampling-0.1', reviewSampleRate: 0.1 };
    const uploaded = await ctx().inject({
      method: 'POST',
      url: '/api/v1/policies',
      headers: bearer(token),
      payload: sampling,
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      events.push(...tradeHistory(hash(`rl-good-${i}`), 3 + (i % 5), 40));
      events.push(
        event('trade.completed', hash(`rl-good-${i}`), { trade_id: `rl-t-${i}`, amount: 80, currency: 'USD' }, 1000),
      );
    }
    for (let i = 0; i < 35; i++)
      events.push(event('chargeback', hash(`rl-bad-${i}`), { amount: 80, currency: 'USD' }, 3_600_000));
    await postEvents(ctx(), token, events);
    const db = ctx().store.db;
    for (let i = 0; i < 35; i++) {
      const bad = await score(ctx(), token, {
        entity_id: hash(`rl-bad-${i}`),
        amount: 80,
        currency: 'USD',
        context: { trade_id: `rl-b-${i}` },
      });
      const l = await ctx().inject({
        method: 'POST',
        url: `/api/v1/decisions/${bad.json().decision_id}/label`,
        headers: bearer(token),
        payload: { label: 'fraud' },
      });
      assert.equal(l.statusCode, 200, l.body);
    }
    for (let i = 0; i < 50; i++) {
      const good = await score(ctx(), token, {
        entity_id: hash(`rl-good-${i}`),
        amount: 80,
        currency: 'USD',
        context: { trade_id: `rl-t-${i}` },
      });
      assert.equal(good.statusCode, 200, good.body);
      const id = good.json().decision_id as string;
      // 0–34: approvals of a policy that sampled nothing (assumed legit); 35–49: approvals of the
      // sampling policy, of which 35–44 were drawn for review (40–44 labelled legit by the
      // reviewer, 35–39 approved without a label) and 45–49 were not (left out).
      const sampledPolicy = i >= 35;
      await db
        .updateTable('decisions')
        .set({ outcome: 'approve', ...(sampledPolicy ? { policy_version: sampling.version } : {}) })
        .where('id', '=', id)
        .execute();
      if (i >= 35 && i < 45) {
        const d = await db
          .selectFrom('decisions')
          .select(['owner_client_id', 'subject_id', 'created_at'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        await db
          .insertInto('reviews')
          .values({
            id: `rev_rl_${i}`,
            environment: 'live',
            owner_client_id: d.owner_client_id,
            decision_id: id,
            entity_id: d.subject_id,
            outcome: 'approve',
            reason: 'sample',
            sample_rate: 0.1,
            status: 'resolved',
            opened_at: Number(d.created_at),
            due_at: Number(d.created_at) + DAY,
            assignee: null,
            claimed_at: null,
            resolution: 'approve',
            resolution_label: i >= 40 ? 'legit' : null,
            note: null,
            added_to_list: null,
            resolved_at: Number(d.created_at) + 1000,
            resolved_by: 'reviewer',
          })
          .execute();
        if (i >= 40)
          await db
            .updateTable('decisions')
            .set({ label: 'legit', label_source: 'review', labelled_by: 'reviewer', labelled_at: Date.now() })
            .where('id', '=', id)
            .execute();
      }
    }
    await db
      .updateTable('decisions')
      .set({ created_at: Date.now() - 61 * DAY })
      .where('kind', '=', 'score')
      .execute();
  });

  test('labels by source in the report; sampled approvals weighted 1/rate, unsampled ones left out', async () => {
    const fit = await ctx().inject({
      method: 'POST',
      url: '/api/v1/policies/fit',
      headers: bearer(token),
      payload: { assume_legit_after_days: 60 },
    });
    assert.equal(fit.statusCode, 201, fit.body);
    const report = fit.json().report;
    assert.deepEqual(report.labels, { fraud: 35, legit: 45 });
    assert.deepEqual(report.label_sources, { api: 35, event: 0, review: 10, assumed: 35 });
    assert.deepEqual(report.sampling, { decisions: 10, weight: 100, left_out: 5 });
    // The stored report and its page say the same.
    const stored = await ctx().inject({
      method: 'GET',
      url: `/api/v1/policies/${fit.json().version}`,
      headers: bearer(token),
    });
    assert.deepEqual(stored.json().report.label_sources, report.label_sources);
    const html = await ctx().inject({
      method: 'GET',
      url: `/api/v1/policies/${fit.json().version}/report`,
      headers: { ...bearer(token), accept: 'text/html' },
    });
    assert.match(
      html.body,
      /By source: api 35, event 0, review 10, assumed 35\. Sampled approvals: 10 reviewed, weighted to stand for 100 approvals \(5 unsampled approvals left out for them\)/,
    );
  });
});
