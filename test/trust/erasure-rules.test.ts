// Erasure and a desk's rules (docs/api.md, "Erasure"; docs/rules.md): an erased entity's id leaves
// the entity lists, its reviews and what its decisions stored for their rules, and the lists as
// every instance scores with them no longer hold it, so a re-created entity of the same id is not
// declined by the old entry.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { hash, score as post } from '../helpers/trust.ts';
import type { TestContext } from '../helpers/app.ts';

async function score(ctx: TestContext, token: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await post(ctx, token, body);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Record<string, unknown>;
}

describeEachBackend('Erasure of an entity named by lists, rules and reviews', (ctx) => {
  const tag = `${process.pid}-${Date.now()}`;
  const X = hash(`listed-${tag}`);
  const list = `erasure_mules_${Date.now() % 100000}`;
  let admin = '';
  let operator = '';
  let declined = '';

  before(async () => {
    admin = await ctx().token();
    operator = await ctx().token(['trust:read', 'trust:write', 'audit:read'], 'operator');
    const made = await ctx().inject({
      method: 'POST',
      url: '/api/v1/lists',
      headers: bearer(admin),
      payload: { name: list, kind: 'entity' },
    });
    assert.equal(made.statusCode, 201, made.body);
    const added = await ctx().inject({
      method: 'POST',
      url: `/api/v1/lists/${list}/entries`,
      headers: bearer(admin),
      payload: { values: [X], reason: `mule ${X}` },
    });
    assert.equal(added.statusCode, 200, added.body);
    const rule = await ctx().inject({
      method: 'POST',
      url: '/api/v1/rules',
      headers: bearer(admin),
      payload: {
        name: 'hold listed mules',
        condition: `in_list("${list}", entity_id)`,
        action: 'hold',
        status: 'active',
      },
    });
    assert.equal(rule.statusCode, 201, rule.body);
  });

  test('before the erasure the entry holds the entity: a hold, a review, and the rule read its id', async () => {
    const res = await score(ctx(), operator, { entity_id: X, amount: 40, currency: 'USD' });
    assert.equal(res.outcome, 'hold');
    declined = res.decision_id as string;
    const row = await ctx()
      .store.db.selectFrom('decisions')
      .select(['rules'])
      .where('id', '=', declined)
      .executeTakeFirstOrThrow();
    assert.ok(row.rules?.includes(X), 'the matched rule records the id it read');
    const review = await ctx()
      .store.db.selectFrom('reviews')
      .select('entity_id')
      .where('decision_id', '=', declined)
      .executeTakeFirstOrThrow();
    assert.equal(review.entity_id, X);
  });

  test('after the erasure no list entry, review or rule record names the id, and a re-created entity is not held', async () => {
    const erased = await ctx().inject({
      method: 'DELETE',
      url: `/api/v1/trust/entities/${encodeURIComponent(X)}`,
      headers: bearer(admin),
    });
    assert.equal(erased.statusCode, 200, erased.body);
    const db = ctx().store.db;
    const entries = await db.selectFrom('list_entries').select(['value']).execute();
    assert.ok(
      entries.every((e) => e.value !== X),
      'no list entry keeps the id',
    );
    assert.ok(
      entries.some((e) => e.value.startsWith('erased_')),
      'the entry stays, under the digest',
    );
    const reviews = await db
      .selectFrom('reviews')
      .select(['entity_id'])
      .where('decision_id', '=', declined)
      .executeTakeFirstOrThrow();
    assert.notEqual(reviews.entity_id, X);
    const decision = await db
      .selectFrom('decisions')
      .select(['rules', 'shadow_rules', 'rule_inputs'])
      .where('id', '=', declined)
      .executeTakeFirstOrThrow();
    for (const text of [decision.rules, decision.shadow_rules, decision.rule_inputs])
      assert.ok(!(text ?? '').includes(X), text ?? '');
    const again = await score(ctx(), operator, { entity_id: X, amount: 40, currency: 'USD' });
    assert.notEqual(again.outcome, 'hold', 'the erased entry no longer matches the id');
    assert.equal((again.rules as unknown[]).length, 0);
  });
});
