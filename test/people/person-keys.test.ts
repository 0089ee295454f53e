// An admin person manages API keys as an admin client does (docs/api.md, "People"): the key they
// create works, its decisions belong to them, and the key outlives their account's deactivation,
// as an environment's keys do in Stripe and Marble (docs/decisions.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { asPerson, person } from '../helpers/people.ts';

describeEachBackend('a key created by a person', (ctx) => {
  test('201 with the key; it scores; the decision is the person’s; deactivating them leaves the key working', async () => {
    const admin = await person(ctx(), 'admin');
    const created = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: asPerson(admin),
      payload: { name: 'backend', scopes: ['trust:read'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const key = created.json().key as string;
    assert.equal(created.json().owner_client_id, admin.id);
    const score = (k: string) =>
      ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        headers: { 'x-api-key': k },
        payload: { entity_id: 'acct_person_key_1', amount: 10, currency: 'USD' },
      });
    const scored = await score(key);
    assert.equal(scored.statusCode, 200, scored.body);
    const decision = await ctx()
      .store.db.selectFrom('decisions')
      .select('owner_client_id')
      .where('id', '=', scored.json().decision_id as string)
      .executeTakeFirstOrThrow();
    assert.equal(decision.owner_client_id, admin.id);

    const gone = await ctx().inject({
      method: 'DELETE',
      url: `/api/v1/users/${admin.id}`,
      headers: bearer(await ctx().token()),
    });
    assert.equal(gone.statusCode, 200, gone.body);
    assert.equal((await score(key)).statusCode, 200);
  });
});
