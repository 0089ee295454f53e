// A decision reads the same whichever form its row stores (issue 42): GET /api/v1/decisions/{id}
// and a review's decision answer the `features` object of names → values byte for byte, from the
// array stored now and from the object of names (and the long rule inputs) rows kept before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { hash, score } from '../helpers/trust.ts';
import { decodeFeatures } from '../../src/model/feature-vector.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';

describeEachBackend('decisions read the same from either stored form', (ctx) => {
  test('GET /decisions/{id} and GET /reviews/{id} are byte-identical over the old and the new form', async () => {
    const token = await ctx().token();
    const entity = hash('stored-forms');
    const res = await score(ctx(), token, {
      entity_id: entity,
      amount: 1000,
      currency: 'USD',
      context: { payment_method: 'bank_transfer', country: 'DE', counterparty_country: 'NG', note: 'x' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { decision_id: id, review_id: reviewId } = res.json();
    assert.ok(reviewId, `the score opened a review: ${res.body}`);
    const db = ctx().store.db;
    const row = await db
      .selectFrom('decisions')
      .select(['features', 'rule_inputs'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(row.features!.startsWith('['), row.features!);
    const get = async () => {
      const decision = await ctx().inject({ method: 'GET', url: `/api/v1/decisions/${id}`, headers: bearer(token) });
      assert.equal(decision.statusCode, 200, decision.body);
      const review = await ctx().inject({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, headers: bearer(token) });
      assert.equal(review.statusCode, 200, review.body);
      assert.ok(JSON.stringify(review.json()).includes('"features":{"'), 'the review shows the object of names');
      return { decision: decision.body, review: review.body };
    };
    const now = await get();
    const features = JSON.parse(now.decision).features as Record<string, number>;
    assert.deepEqual(Object.keys(features), SIGNAL_NAMES, 'every signal by name, in the order it was written');

    // The row as the code before the array wrote it: JSON.stringify of the values in SIGNAL_NAMES order.
    const object = JSON.stringify(Object.fromEntries(SIGNAL_NAMES.map((n) => [n, decodeFeatures(row.features!)[n]])));
    await db.updateTable('decisions').set({ features: object }).where('id', '=', id).execute();
    const before = await get();
    assert.equal(now.decision, before.decision);
    assert.equal(now.review, before.review);
    assert.ok(object.length > 4 * row.features!.length, `${object.length} bytes then, ${row.features!.length} now`);
  });
});
