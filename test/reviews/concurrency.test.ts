// docs/api.md, "Reviews": claims are atomic. Twenty reviewers pressing "Next" at once get twenty
// different reviews, none twice; twenty claiming one review at once: exactly one gets it.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, problem } from '../helpers/app.ts';
import { REVIEWS, asKey, desk, reviewerKeys, seedReviews } from './support.ts';

describeEachBackend('review claims under concurrency', (ctx) => {
  let keys: string[] = [];
  let owner = '';
  let token = '';

  before(async () => {
    const d = await desk(ctx());
    owner = d.id;
    token = d.token;
    keys = await reviewerKeys(ctx(), token, 20);
  });

  test('20 parallel POST /reviews/next by 20 reviewers over 20 open reviews: 20 distinct reviews, none twice', async () => {
    const rows = await seedReviews(
      ctx().store.db,
      Array.from({ length: 20 }, (_, i) => ({ owner, dueIn: (i + 1) * 60_000 })),
    );
    const answers = await Promise.all(
      keys.map((key) => ctx().inject({ method: 'POST', url: `${REVIEWS}/next`, headers: asKey(key) })),
    );
    for (const a of answers) assert.equal(a.statusCode, 200, a.body);
    const claimed = answers.map((a) => a.json() as { id: string; assignee: string });
    assert.equal(new Set(claimed.map((c) => c.id)).size, 20, 'no review handed out twice');
    assert.deepEqual(claimed.map((c) => c.id).sort(), rows.map((r) => r.review!.id).sort());
    assert.equal(new Set(claimed.map((c) => c.assignee)).size, 20, 'each held by the reviewer it was handed to');
    // In the store too: each review held by exactly the reviewer that was told so.
    const stored = await ctx()
      .store.db.selectFrom('reviews')
      .select(['id', 'assignee', 'status'])
      .where('owner_client_id', '=', owner)
      .execute();
    for (const c of claimed)
      assert.deepEqual(stored.find((s) => s.id === c.id) && { ...stored.find((s) => s.id === c.id) }, {
        id: c.id,
        assignee: c.assignee,
        status: 'claimed',
      });
    // Nothing is left for a 21st press.
    assert.equal(
      (await ctx().inject({ method: 'POST', url: `${REVIEWS}/next`, headers: asKey(keys[0]!) })).statusCode,
      204,
    );
  });

  test('20 parallel claims of one review: exactly one 200, nineteen 409', async () => {
    const [row] = await seedReviews(ctx().store.db, [{ owner }]);
    const answers = await Promise.all(
      keys.map((key) =>
        ctx().inject({ method: 'POST', url: `${REVIEWS}/${row!.review!.id}/claim`, headers: asKey(key) }),
      ),
    );
    const won = answers.filter((a) => a.statusCode === 200);
    assert.equal(won.length, 1, answers.map((a) => a.statusCode).join(' '));
    for (const a of answers.filter((x) => x.statusCode !== 200)) problem(a, 409, 'conflict');
    const stored = await ctx()
      .store.db.selectFrom('reviews')
      .select(['assignee'])
      .where('id', '=', row!.review!.id)
      .executeTakeFirstOrThrow();
    assert.equal(stored.assignee, won[0]!.json().assignee);
  });

  test('20 parallel resolutions of one review: exactly one 200, and one label', async () => {
    const [row] = await seedReviews(ctx().store.db, [{ owner }]);
    const answers = await Promise.all(
      keys.map((key, i) =>
        ctx().inject({
          method: 'POST',
          url: `${REVIEWS}/${row!.review!.id}/resolve`,
          headers: asKey(key),
          payload: { resolution: i % 2 ? 'approve' : 'decline', label: i % 2 ? 'legit' : 'fraud' },
        }),
      ),
    );
    const won = answers.filter((a) => a.statusCode === 200);
    assert.equal(won.length, 1, answers.map((a) => a.statusCode).join(' '));
    for (const a of answers.filter((x) => x.statusCode !== 200)) problem(a, 409, 'conflict');
    const decision = await ctx()
      .store.db.selectFrom('decisions')
      .select(['label', 'labelled_by'])
      .where('id', '=', row!.id)
      .executeTakeFirstOrThrow();
    assert.equal(decision.label, won[0]!.json().label, "the label is the winner's");
    assert.equal(decision.labelled_by, won[0]!.json().resolved_by);
  });
});
