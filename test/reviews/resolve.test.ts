// docs/api.md, "Reviews": a resolution labels the decision (source review, the reviewer as
// labelled_by) unless an API or event label is there; decline without a label is fraud, approve
// without one stores none; review.resolved is written with the resolution; and the stats.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { labelFromEvents } from '../../src/audit/labels.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { HOUR, REVIEWS, asKey, desk, reviewerKey, reviewerKeys, seedReviews } from './support.ts';

describeEachBackend('review resolution', (ctx) => {
  let a: { id: string; token: string };
  let key = '';
  let keyId = '';
  /** a reviewer key that may also write lists (rules:write) */
  let listWriter = '';

  before(async () => {
    a = await desk(ctx(), 'operator', [
      'reviews:read',
      'reviews:write',
      'keys:write',
      'audit:read',
      'labels:write',
      'rules:write',
    ]);
    ({ key, id: keyId } = await reviewerKey(ctx(), a.token));
    const made = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(a.token),
      payload: { name: 'list writer', scopes: ['reviews:read', 'reviews:write', 'rules:write'], role: 'operator' },
    });
    assert.equal(made.statusCode, 201, made.body);
    listWriter = made.json().key as string;
  });

  const resolve = (id: string, payload: Record<string, unknown>, headers: Record<string, string> = asKey(key)) =>
    ctx().inject({ method: 'POST', url: `${REVIEWS}/${id}/resolve`, headers, payload });
  const decision = async (id: string) =>
    ctx()
      .store.db.selectFrom('decisions')
      .select(['label', 'label_source', 'labelled_by', 'label_note'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  test('decline labels the decision fraud (source review, by the reviewer); the label shows on the decision', async () => {
    const [row] = await seedReviews(ctx().store.db, [{ owner: a.id }]);
    const res = await resolve(row!.review!.id, { resolution: 'decline', note: 'stolen card pattern' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'resolved');
    assert.equal(body.resolution, 'decline');
    assert.equal(body.label, 'fraud');
    assert.equal(body.note, 'stolen card pattern');
    assert.equal(body.resolved_by, keyId);
    assert.deepEqual(
      { ...(await decision(row!.id)) },
      { label: 'fraud', label_source: 'review', labelled_by: keyId, label_note: 'stolen card pattern' },
    );
    const viewed = (
      await ctx().inject({ method: 'GET', url: `/api/v1/decisions/${row!.id}`, headers: bearer(a.token) })
    ).json();
    assert.equal(viewed.label.source, 'review');
    assert.equal(viewed.label.labelled_by, keyId);
  });

  test('approve without a label stores none; with label legit it stores legit; an explicit label wins over the resolution', async () => {
    const [plain, legit, odd] = await seedReviews(ctx().store.db, [{ owner: a.id }, { owner: a.id }, { owner: a.id }]);
    assert.equal((await resolve(plain!.review!.id, { resolution: 'approve' })).json().label, null);
    assert.equal((await decision(plain!.id)).label, null);
    assert.equal((await resolve(legit!.review!.id, { resolution: 'approve', label: 'legit' })).json().label, 'legit');
    assert.equal((await decision(legit!.id)).label_source, 'review');
    assert.equal((await resolve(odd!.review!.id, { resolution: 'decline', label: 'legit' })).json().label, 'legit');
    assert.equal((await decision(odd!.id)).label, 'legit');
  });

  test("a resolution that labels spends the reviewer's label budget (VOUCH_LABELS_PER_MINUTE): 429 once bulk labels spent it; one without a label does not", async () => {
    const made = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(a.token),
      payload: { name: 'labeller', scopes: ['reviews:read', 'reviews:write', 'labels:write'], role: 'operator' },
    });
    assert.equal(made.statusCode, 201, made.body);
    const labeller = asKey(made.json().key as string);
    const batch = Array.from({ length: 1000 }, (_, i) => ({ decision_id: `dec_none_${i}`, label: 'fraud' }));
    for (let spent = 0; spent < ctx().config.labelsPerMinute; spent += 1000) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/labels',
        headers: labeller,
        payload: { labels: batch },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const [labelled, plain] = await seedReviews(ctx().store.db, [{ owner: a.id }, { owner: a.id }]);
    const refused = problem(
      await resolve(labelled!.review!.id, { resolution: 'decline' }, labeller),
      429,
      'rate_limited',
    );
    assert.match(String(refused.detail), /labels a minute/);
    assert.equal((await decision(labelled!.id)).label, null, 'nothing resolved, nothing labelled');
    assert.equal((await resolve(plain!.review!.id, { resolution: 'approve' }, labeller)).statusCode, 200);
  });

  test('an API label is never overwritten by a review; an event label is not either, and an event replaces a review label', async () => {
    const [apiLabelled, eventLabelled, reviewed] = await seedReviews(ctx().store.db, [
      { owner: a.id },
      { owner: a.id },
      { owner: a.id },
    ]);
    const labelled = await ctx().inject({
      method: 'POST',
      url: `/api/v1/decisions/${apiLabelled!.id}/label`,
      headers: bearer(a.token),
      payload: { label: 'legit' },
    });
    assert.equal(labelled.statusCode, 200, labelled.body);
    assert.equal(
      (await resolve(apiLabelled!.review!.id, { resolution: 'decline' })).statusCode,
      200,
      'the review resolves all the same',
    );
    assert.deepEqual(
      { ...(await decision(apiLabelled!.id)) },
      { label: 'legit', label_source: 'api', labelled_by: a.id, label_note: null },
    );

    await ctx()
      .store.db.updateTable('decisions')
      .set({ trade_id: 'trade-ev' })
      .where('id', 'in', [eventLabelled!.id, reviewed!.id])
      .execute();
    assert.equal(
      await labelFromEvents(
        ctx().store.db,
        'live',
        [{ type: 'chargeback', entity_id: eventLabelled!.subject_id, trade_id: 'trade-ev' }],
        a.id,
        Date.now(),
      ),
      1,
    );
    await resolve(eventLabelled!.review!.id, { resolution: 'approve', label: 'legit' });
    assert.equal((await decision(eventLabelled!.id)).label_source, 'event');

    await resolve(reviewed!.review!.id, { resolution: 'approve', label: 'legit' });
    assert.equal((await decision(reviewed!.id)).label_source, 'review');
    assert.equal(
      await labelFromEvents(
        ctx().store.db,
        'live',
        [{ type: 'chargeback', entity_id: reviewed!.subject_id, trade_id: 'trade-ev' }],
        a.id,
        Date.now(),
      ),
      1,
    );
    assert.deepEqual(
      { label: (await decision(reviewed!.id)).label, source: (await decision(reviewed!.id)).label_source },
      { label: 'fraud', source: 'event' },
    );
  });

  test('a resolved review cannot be resolved again (409), and a bad body is 400 naming the field', async () => {
    const [row] = await seedReviews(ctx().store.db, [{ owner: a.id }]);
    problem(await resolve(row!.review!.id, { resolution: 'maybe' }), 400, 'validation_failed');
    problem(await resolve(row!.review!.id, { resolution: 'approve', note: 'x'.repeat(501) }), 400, 'validation_failed');
    const raw = problem(
      await resolve(row!.review!.id, { resolution: 'approve', note: 'call him at +44 7700 900123' }),
      400,
      'raw_identifier_rejected',
    );
    assert.equal((raw.errors as Array<{ field: string }>)[0]!.field, 'note');
    const missing = problem(
      await resolve(row!.review!.id, { resolution: 'decline', add_to_list: 'no-such-list' }, asKey(listWriter)),
      400,
      'validation_failed',
    );
    assert.equal((missing.errors as Array<{ field: string }>)[0]!.field, 'add_to_list');
    // Refused bodies changed nothing.
    assert.equal((await decision(row!.id)).label, null);
    assert.equal((await resolve(row!.review!.id, { resolution: 'approve' })).statusCode, 200);
    problem(await resolve(row!.review!.id, { resolution: 'decline' }), 409, 'conflict');
    assert.equal((await decision(row!.id)).label, null, 'the second resolution labelled nothing');
  });

  test("review.resolved is written to the outbox with the resolution, for the review's client only", async () => {
    const now = Date.now();
    await ctx()
      .store.db.insertInto('webhooks')
      .values({
        environment: 'live',
        id: 'whk_reviews_a',
        owner_client_id: a.id,
        url: 'http://127.0.0.1:9/hook',
        events: 'review.resolved',
        description: null,
        secret: 's',
        created_at: now,
      })
      .execute();
    const [row] = await seedReviews(ctx().store.db, [{ owner: a.id }]);
    assert.equal((await resolve(row!.review!.id, { resolution: 'decline' })).statusCode, 200);
    const events = await ctx()
      .store.db.selectFrom('webhook_events')
      .selectAll()
      .where('type', '=', 'review.resolved')
      .execute();
    const ours = events.filter((e) => (JSON.parse(e.data) as { id: string }).id === row!.review!.id);
    assert.equal(ours.length, 1);
    assert.equal(ours[0]!.owner_client_id, a.id);
    const data = JSON.parse(ours[0]!.data) as Record<string, unknown>;
    assert.equal(data.status, 'resolved');
    assert.equal(data.resolution, 'decline');
    assert.equal(data.label, 'fraud');
    assert.equal(data.decision_id, row!.id);
  });

  test('stats: open, overdue, resolved in 24 hours, median time to resolve, by outcome, verdicts, review labels since the last fit', async () => {
    const c = await desk(ctx());
    const [k] = await reviewerKeys(ctx(), c.token, 1);
    const rows = await seedReviews(ctx().store.db, [
      { owner: c.id, outcome: 'review', dueIn: -HOUR },
      { owner: c.id, outcome: 'hold' },
      { owner: c.id, outcome: 'approve' },
      { owner: c.id, outcome: 'review' },
      { owner: c.id, outcome: 'hold' },
    ]);
    // Two resolved, opened 10 and 30 minutes before their resolution.
    await ctx()
      .store.db.updateTable('reviews')
      .set({ opened_at: Date.now() - 10 * 60_000 })
      .where('id', '=', rows[3]!.review!.id)
      .execute();
    await ctx()
      .store.db.updateTable('reviews')
      .set({ opened_at: Date.now() - 30 * 60_000 })
      .where('id', '=', rows[4]!.review!.id)
      .execute();
    assert.equal((await resolve(rows[3]!.review!.id, { resolution: 'approve' }, asKey(k!))).statusCode, 200);
    assert.equal((await resolve(rows[4]!.review!.id, { resolution: 'decline' }, asKey(k!))).statusCode, 200);
    const stats = (await ctx().inject({ method: 'GET', url: `${REVIEWS}/stats`, headers: bearer(c.token) })).json();
    assert.equal(stats.open, 3);
    assert.equal(stats.overdue, 1);
    assert.equal(stats.resolved_24h, 2);
    assert.ok(Math.abs(stats.median_minutes_to_resolve - 20) < 1, `median ${stats.median_minutes_to_resolve}`);
    assert.deepEqual(stats.by_outcome, {
      review: { open: 1, resolved: 1 },
      hold: { open: 1, resolved: 1 },
      approve: { open: 1, resolved: 0 },
    });
    assert.deepEqual(stats.agreement, { approve: 1, decline: 1 });
    assert.equal(stats.review_labels_since_last_fit, 1, 'the decline labelled its decision');
    // A fit made after that label: none since.
    await ctx()
      .store.db.insertInto('policies')
      .values({
        environment: 'live',
        version: `fit-${Date.now()}`,
        status: 'candidate',
        source: 'fit',
        parent_version: null,
        document: '{}',
        report: null,
        created_at: Date.now() + 1000,
        created_by: 'test',
      })
      .execute();
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `${REVIEWS}/stats`, headers: bearer(c.token) })).json()
        .review_labels_since_last_fit,
      0,
    );
  });
  test("add_to_list adds the entity to an entity list of the environment, in the resolution's commit; another kind or an unknown list: 400, nothing resolved", async () => {
    const admin = await ctx().token();
    for (const payload of [
      { name: 'review-blocked', kind: 'entity' },
      { name: 'review-countries', kind: 'country' },
    ]) {
      const made = await ctx().inject({ method: 'POST', url: '/api/v1/lists', headers: bearer(admin), payload });
      assert.equal(made.statusCode, 201, made.body);
    }
    const [row] = await seedReviews(ctx().store.db, [{ owner: a.id }]);
    const wrongKind = problem(
      await resolve(row!.review!.id, { resolution: 'decline', add_to_list: 'review-countries' }, asKey(listWriter)),
      400,
      'validation_failed',
    );
    assert.equal((wrongKind.errors as Array<{ field: string }>)[0]!.field, 'add_to_list');
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `${REVIEWS}/${row!.review!.id}`, headers: bearer(a.token) })).json()
        .status,
      'open',
      'the refused resolution changed nothing',
    );
    const done = await resolve(
      row!.review!.id,
      { resolution: 'decline', add_to_list: 'review-blocked' },
      asKey(listWriter),
    );
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().added_to_list, 'review-blocked');
    const entries = (
      await ctx().inject({ method: 'GET', url: '/api/v1/lists/review-blocked/entries', headers: bearer(admin) })
    ).json().data as Array<{ value: string }>;
    assert.deepEqual(
      entries.map((e) => e.value),
      [row!.subject_id],
    );
  });
  test('add_to_list without rules:write: 403 whether or not the list exists, unless the active policy opens it (reviewLists)', async () => {
    const admin = await ctx().token();
    for (const name of ['reviewer-open', 'reviewer-closed']) {
      const made = await ctx().inject({
        method: 'POST',
        url: '/api/v1/lists',
        headers: bearer(admin),
        payload: { name, kind: 'entity' },
      });
      assert.equal(made.statusCode, 201, made.body);
    }
    const [row] = await seedReviews(ctx().store.db, [{ owner: a.id }]);
    const closed = problem(
      await resolve(row!.review!.id, { resolution: 'decline', add_to_list: 'reviewer-closed' }),
      403,
      'insufficient_scope',
    );
    const unknown = problem(
      await resolve(row!.review!.id, { resolution: 'decline', add_to_list: 'no-such-list' }),
      403,
      'insufficient_scope',
    );
    assert.equal(closed.detail, unknown.detail, 'the refusal does not tell whether the list exists');
    const version = `review-lists-${Date.now()}`;
    const posted = await ctx().inject({
      method: 'POST',
      url: '/api/v1/policies',
      headers: bearer(admin),
      payload: { ...DEFAULT_POLICY, version, reviewLists: ['reviewer-open'] },
    });
    assert.equal(posted.statusCode, 201, posted.body);
    const activated = await ctx().inject({
      method: 'POST',
      url: `/api/v1/policies/${version}/activate`,
      headers: bearer(admin),
    });
    assert.equal(activated.statusCode, 200, activated.body);
    problem(
      await resolve(row!.review!.id, { resolution: 'decline', add_to_list: 'reviewer-closed' }),
      403,
      'insufficient_scope',
    );
    const done = await resolve(row!.review!.id, { resolution: 'decline', add_to_list: 'reviewer-open' });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().added_to_list, 'reviewer-open');
  });
});
