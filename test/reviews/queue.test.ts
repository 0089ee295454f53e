// docs/api.md, "Reviews": the queue's listing (due first, filters, cursor), a review's page, claims
// (409 while held, lapsing after 15 minutes), "next", and ownership (BOLA: another client's review
// does not exist for a non-admin; an admin sees every client's).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { CLAIM_LAPSE_MS } from '../../src/reviews/schemas.ts';
import { HOUR, REVIEWS, asKey, desk, reviewerKeys, seedReviews } from './support.ts';

describeEachBackend('review queue', (ctx) => {
  let a: { id: string; token: string };
  let b: { id: string; token: string };
  let admin = '';
  let keys: string[] = [];

  before(async () => {
    a = await desk(ctx());
    b = await desk(ctx());
    admin = await ctx().token();
    keys = await reviewerKeys(ctx(), a.token, 2);
  });

  const get = (url: string, headers: Record<string, string>) => ctx().inject({ method: 'GET', url, headers });
  const post = (url: string, headers: Record<string, string>, payload?: Record<string, unknown>) =>
    ctx().inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });

  test('the listing shows unresolved reviews due first, then resolved ones; filters and the cursor cover every row once', async () => {
    const entity = hash('queue-order');
    const rows = await seedReviews(ctx().store.db, [
      { owner: a.id, entity, dueIn: 5 * HOUR, outcome: 'review' },
      { owner: a.id, dueIn: -HOUR, outcome: 'hold' },
      { owner: a.id, entity, dueIn: 2 * HOUR, outcome: 'hold' },
      { owner: a.id, dueIn: 30 * HOUR, outcome: 'approve' },
      { owner: a.id, dueIn: HOUR, review: false },
    ]);
    assert.equal(rows.filter((r) => r.review).length, 4);
    const res = await get(`${REVIEWS}?limit=100`, bearer(a.token));
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data as Array<{
      id: string;
      due_at: string;
      status: string;
      overdue: boolean;
      score: number;
      amount: number;
      currency: string;
      rules: unknown[];
      decision_id: string;
    }>;
    const mine = data.filter((d) => rows.some((r) => r.review?.id === d.id));
    assert.deepEqual(
      mine.map((d) => d.id),
      [rows[1], rows[2], rows[0], rows[3]].map((r) => r!.review!.id),
    );
    assert.deepEqual(
      mine.map((d) => d.overdue),
      [true, false, false, false],
    );
    assert.equal(mine[0]!.score, 72);
    assert.equal(mine[0]!.amount, 25_000);
    assert.equal(mine[0]!.currency, 'EUR');
    assert.equal(mine[0]!.rules.length, 1);
    assert.equal(mine[0]!.decision_id, rows[1]!.id);
    const sorted = [...data].filter((d) => d.status !== 'resolved').map((d) => Date.parse(d.due_at));
    assert.deepEqual(
      sorted,
      [...sorted].sort((x, y) => x - y),
    );

    const holds = (await get(`${REVIEWS}?outcome=hold`, bearer(a.token))).json().data as Array<{ outcome: string }>;
    assert.ok(holds.length >= 2 && holds.every((h) => h.outcome === 'hold'));
    const ofEntity = (await get(`${REVIEWS}?entity_id=${entity}`, bearer(a.token))).json().data as Array<{
      id: string;
    }>;
    assert.deepEqual(
      ofEntity.map((r) => r.id),
      [rows[2]!.review!.id, rows[0]!.review!.id],
    );

    // Resolve one: it moves behind the unresolved ones.
    assert.equal(
      (await post(`${REVIEWS}/${rows[3]!.review!.id}/resolve`, asKey(keys[0]!), { resolution: 'approve' })).statusCode,
      200,
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (
        await get(`${REVIEWS}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, bearer(a.token))
      ).json() as { data: Array<{ id: string; status: string }>; next_cursor: string | null };
      seen.push(...page.data.map((d) => d.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.equal(new Set(seen).size, seen.length, 'no row twice');
    assert.deepEqual(seen.slice().sort(), data.map((d) => d.id).sort());
    assert.equal(
      seen.indexOf(rows[3]!.review!.id),
      seen.length -
        1 -
        seen
          .slice()
          .reverse()
          .findIndex((id) => id === rows[3]!.review!.id),
    );
    const resolved = (await get(`${REVIEWS}?status=resolved`, bearer(a.token))).json().data as Array<{
      id: string;
      status: string;
      resolution: string;
    }>;
    assert.ok(
      resolved.some((r) => r.id === rows[3]!.review!.id && r.status === 'resolved' && r.resolution === 'approve'),
    );
    problem(await get(`${REVIEWS}?cursor=nonsense`, bearer(a.token)), 400, 'validation_failed');
  });

  test("a review's page has its decision (signals, matched rules with their reads), the entity's other open reviews and labels", async () => {
    const entity = hash('queue-detail');
    const [first, second] = await seedReviews(ctx().store.db, [
      { owner: a.id, entity },
      { owner: a.id, entity, outcome: 'hold' },
    ]);
    const res = await get(`${REVIEWS}/${first!.review!.id}`, bearer(a.token));
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.decision.id, first!.id);
    assert.equal(body.decision.result.signals[0].name, 'chargebacks');
    assert.deepEqual(body.decision.rules[0].reads, { amount: 25_000 });
    assert.deepEqual(
      body.other_open_reviews.map((r: { id: string }) => r.id),
      [second!.review!.id],
    );
    assert.deepEqual(body.entity_labels, { fraud: 0, legit: 0 });
    assert.equal(body.status, 'open');
    assert.equal(body.reason, 'outcome');
  });

  test('claims: the holder may renew, another principal gets 409 until the claim lapses after 15 minutes', async () => {
    const [row] = await seedReviews(ctx().store.db, [{ owner: a.id }]);
    const id = row!.review!.id;
    const first = await post(`${REVIEWS}/${id}/claim`, asKey(keys[0]!));
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().status, 'claimed');
    assert.ok(first.json().claim_expires_at);
    assert.equal((await post(`${REVIEWS}/${id}/claim`, asKey(keys[0]!))).statusCode, 200, 'renewed by its holder');
    problem(await post(`${REVIEWS}/${id}/claim`, asKey(keys[1]!)), 409, 'conflict');
    problem(await post(`${REVIEWS}/${id}/resolve`, asKey(keys[1]!), { resolution: 'decline' }), 409, 'conflict');
    // The claim was taken 15 minutes ago: it has lapsed, the review reads as open and anyone may take it.
    await ctx()
      .store.db.updateTable('reviews')
      .set({ claimed_at: Date.now() - CLAIM_LAPSE_MS - 1000 })
      .where('id', '=', id)
      .execute();
    const lapsed = (await get(`${REVIEWS}/${id}`, bearer(a.token))).json();
    assert.equal(lapsed.status, 'open');
    assert.equal(lapsed.assignee, null);
    const taken = await post(`${REVIEWS}/${id}/claim`, asKey(keys[1]!));
    assert.equal(taken.statusCode, 200, taken.body);
    const resolved = await post(`${REVIEWS}/${id}/resolve`, asKey(keys[1]!), { resolution: 'approve' });
    assert.equal(resolved.statusCode, 200, resolved.body);
    problem(await post(`${REVIEWS}/${id}/claim`, asKey(keys[0]!)), 409, 'conflict');
    problem(await post(`${REVIEWS}/${id}/resolve`, asKey(keys[1]!), { resolution: 'approve' }), 409, 'conflict');
  });

  test('next claims the claimable review due first, skipping held ones; 204 when none is left', async () => {
    const c = await desk(ctx());
    const [later, sooner, held] = await seedReviews(ctx().store.db, [
      { owner: c.id, dueIn: 3 * HOUR },
      { owner: c.id, dueIn: HOUR },
      { owner: c.id, dueIn: -HOUR },
    ]);
    const [k1, k2] = await reviewerKeys(ctx(), c.token, 2);
    assert.equal((await post(`${REVIEWS}/${held!.review!.id}/claim`, asKey(k1!))).statusCode, 200);
    const n1 = await post(`${REVIEWS}/next`, asKey(k2!));
    assert.equal(n1.statusCode, 200, n1.body);
    assert.equal(n1.json().id, sooner!.review!.id);
    assert.match(String(n1.json().assignee), /^key_/, 'held by the calling key');
    assert.equal(n1.json().status, 'claimed');
    assert.equal((await post(`${REVIEWS}/next`, asKey(k2!))).json().id, later!.review!.id);
    const none = await post(`${REVIEWS}/next`, asKey(k2!));
    assert.equal(none.statusCode, 204);
    assert.equal(none.body, '');
    const mine = (await get(`${REVIEWS}?assignee=me&status=claimed`, asKey(k2!))).json().data as Array<{ id: string }>;
    assert.deepEqual(mine.map((r) => r.id).sort(), [sooner!.review!.id, later!.review!.id].sort());
  });

  test('next takes the queue filters (outcome, entity_id); a claim is released by its holder, not by another reviewer', async () => {
    const c = await desk(ctx());
    const entity = hash('next-filter');
    const [review, hold, mineByEntity] = await seedReviews(ctx().store.db, [
      { owner: c.id, dueIn: -HOUR, outcome: 'review' },
      { owner: c.id, dueIn: HOUR, outcome: 'hold' },
      { owner: c.id, dueIn: 2 * HOUR, outcome: 'review', entity },
    ]);
    const [k1, k2] = await reviewerKeys(ctx(), c.token, 2);
    const holds = await post(`${REVIEWS}/next`, asKey(k1!), { outcome: 'hold' });
    assert.equal(holds.json().id, hold!.review!.id, 'the hold, though a review is due sooner');
    assert.equal(
      (await post(`${REVIEWS}/next`, asKey(k1!), { entity_id: entity })).json().id,
      mineByEntity!.review!.id,
    );
    assert.equal((await post(`${REVIEWS}/next`, asKey(k1!), { outcome: 'hold' })).statusCode, 204);
    problem(await post(`${REVIEWS}/next`, asKey(k1!), { outcome: 'nope' }), 400, 'validation_failed');
    // release: another reviewer cannot; the holder can, and the review is next for anyone again
    problem(await post(`${REVIEWS}/${hold!.review!.id}/release`, asKey(k2!)), 409, 'conflict');
    const released = await post(`${REVIEWS}/${hold!.review!.id}/release`, asKey(k1!));
    assert.equal(released.statusCode, 200, released.body);
    assert.deepEqual([released.json().status, released.json().assignee], ['open', null]);
    assert.equal((await post(`${REVIEWS}/next`, asKey(k2!), { outcome: 'hold' })).json().id, hold!.review!.id);
    assert.equal((await post(`${REVIEWS}/next`, asKey(k2!))).json().id, review!.review!.id);
    problem(await post(`${REVIEWS}/${review!.review!.id}/release`, bearer(b.token)), 404, 'not_found');
  });

  test('authorisation: reading needs reviews:read, working the queue reviews:write and role operator', async () => {
    const [row] = await seedReviews(ctx().store.db, [{ owner: a.id }]);
    const reader = await desk(ctx(), 'operator', ['reviews:read']);
    assert.equal((await get(REVIEWS, bearer(reader.token))).statusCode, 200);
    problem(await post(`${REVIEWS}/next`, bearer(reader.token)), 403, 'insufficient_scope');
    const service = await desk(ctx(), 'service', ['reviews:read', 'reviews:write']);
    problem(await post(`${REVIEWS}/next`, bearer(service.token)), 403, 'insufficient_scope');
    problem(await post(`${REVIEWS}/${row!.review!.id}/claim`, bearer(service.token)), 403, 'insufficient_scope');
    const none = await desk(ctx(), 'operator', ['audit:read']);
    problem(await get(REVIEWS, bearer(none.token)), 403, 'insufficient_scope');
  });

  test("BOLA: another client's review is not listed, and reading, claiming or resolving it is 404; an admin sees and works both", async () => {
    const [ofA] = await seedReviews(ctx().store.db, [{ owner: a.id, dueIn: -10 * HOUR }]);
    const [ofB] = await seedReviews(ctx().store.db, [{ owner: b.id, dueIn: -20 * HOUR }]);
    const idA = ofA!.review!.id;
    const listedByB = (await get(`${REVIEWS}?limit=100`, bearer(b.token))).json().data as Array<{
      id: string;
      owner_client_id: string;
    }>;
    assert.ok(listedByB.every((r) => r.owner_client_id === b.id));
    assert.ok(listedByB.some((r) => r.id === ofB!.review!.id));
    const hidden = problem(await get(`${REVIEWS}/${idA}`, bearer(b.token)), 404, 'not_found');
    const unknown = problem(await get(`${REVIEWS}/rev_01ARZ3NDEKTSV4RRFFQ69G5FAV`, bearer(b.token)), 404, 'not_found');
    assert.equal(hidden.detail, unknown.detail, 'the same answer as a review that does not exist');
    problem(await post(`${REVIEWS}/${idA}/claim`, bearer(b.token)), 404, 'not_found');
    problem(await post(`${REVIEWS}/${idA}/resolve`, bearer(b.token), { resolution: 'decline' }), 404, 'not_found');
    // B's "next" never reaches A's review, overdue as it is.
    for (;;) {
      const next = await post(`${REVIEWS}/next`, bearer(b.token));
      if (next.statusCode === 204) break;
      assert.equal(next.json().owner_client_id, b.id);
    }
    // Nor by paging from a cursor placed before A's review, nor by its entity.
    const paged = (await get(`${REVIEWS}?cursor=u.0.rev_0`, bearer(b.token))).json().data as Array<{
      owner_client_id: string;
    }>;
    assert.ok(paged.every((r) => r.owner_client_id === b.id));
    assert.deepEqual((await get(`${REVIEWS}?entity_id=${ofA!.subject_id}`, bearer(b.token))).json().data, []);
    // A's review is untouched.
    assert.equal((await get(`${REVIEWS}/${idA}`, bearer(a.token))).json().status, 'open');
    // The admin sees both and may claim and resolve either.
    const all = (await get(`${REVIEWS}?limit=100`, bearer(admin))).json().data as Array<{ id: string }>;
    assert.ok(all.some((r) => r.id === idA));
    assert.equal((await get(`${REVIEWS}/${ofB!.review!.id}`, bearer(admin))).statusCode, 200);
    assert.equal((await post(`${REVIEWS}/${idA}/claim`, bearer(admin))).statusCode, 200);
    const done = await post(`${REVIEWS}/${idA}/resolve`, bearer(admin), { resolution: 'approve' });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().owner_client_id, a.id);
  });

  test('test mode: a live credential, admin included, sees no test review', async () => {
    const [live] = await seedReviews(ctx().store.db, [{ owner: a.id }]);
    const [testReview] = await seedReviews(ctx().store.db, [{ owner: a.id, environment: 'test' }]);
    const liveIds = ((await get(`${REVIEWS}?limit=100`, bearer(a.token))).json().data as Array<{ id: string }>).map(
      (r) => r.id,
    );
    assert.ok(liveIds.includes(live!.review!.id) && !liveIds.includes(testReview!.review!.id));
    problem(await get(`${REVIEWS}/${testReview!.review!.id}`, bearer(admin)), 404, 'not_found');
  });
});
