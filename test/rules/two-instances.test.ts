// docs/api.md, "Rules and lists": a rule or list change made on one instance applies from the very
// next score on every other instance over the same store, its cached scores included. Two apps,
// each with its own store connection (one SQLite file, or one PostgreSQL schema).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { backends } from '../helpers/app.ts';
import { twoInstances, type TwoInstances } from '../helpers/instances.ts';
import { hash } from '../helpers/trust.ts';

for (const backend of backends()) {
  describe(`rules across instances [${backend}]`, () => {
    let world: TwoInstances;
    let a: FastifyInstance;
    let b: FastifyInstance;
    let token = '';

    before(async () => {
      world = await twoInstances(backend);
      ({ a, b, token } = world);
    });

    after(() => world?.close());

    const auth = () => ({ authorization: `Bearer ${token}` });
    const scoreOn = async (app: FastifyInstance, entity: string, amount = 30) => {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        headers: auth(),
        payload: { entity_id: hash(entity), amount, currency: 'USD' },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { outcome: string; cached: boolean; rules: Array<{ id: string }> };
    };

    test('a rule created on A applies to the very next score on B, whose cached score is not served', async () => {
      const before = await scoreOn(b, 'two-1', 31.5);
      assert.notEqual(before.outcome, 'decline');
      assert.equal((await scoreOn(b, 'two-1', 31.5)).cached, true);
      const created = await a.inject({
        method: 'POST',
        url: '/api/v1/rules',
        headers: auth(),
        payload: { name: 'across', condition: 'amount == 31.5', action: 'decline', status: 'active' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const after = await scoreOn(b, 'two-1', 31.5);
      assert.equal(after.outcome, 'decline');
      assert.equal(after.cached, false);
      assert.equal(after.rules[0]!.id, created.json().id);
      // and back: retired on B, A stops applying it at once
      assert.equal((await scoreOn(a, 'two-2', 31.5)).outcome, 'decline');
      assert.equal(
        (await b.inject({ method: 'DELETE', url: `/api/v1/rules/${created.json().id}`, headers: auth() })).statusCode,
        200,
      );
      assert.equal((await scoreOn(a, 'two-2', 31.5)).outcome, before.outcome);
    });

    test('a list entry added on A applies on B from its next score, cached scores included', async () => {
      const made = await a.inject({
        method: 'POST',
        url: '/api/v1/lists',
        headers: auth(),
        payload: { name: 'mules', kind: 'entity' },
      });
      assert.equal(made.statusCode, 201, made.body);
      const rule = await a.inject({
        method: 'POST',
        url: '/api/v1/rules',
        headers: auth(),
        payload: { name: 'mule list', condition: 'in_list("mules", entity_id)', action: 'hold', status: 'active' },
      });
      assert.equal(rule.statusCode, 201, rule.body);
      const first = await scoreOn(b, 'two-mule');
      assert.equal(first.outcome, 'approve');
      assert.equal((await scoreOn(b, 'two-mule')).cached, true);
      const added = await a.inject({
        method: 'POST',
        url: '/api/v1/lists/mules/entries',
        headers: auth(),
        payload: { values: [hash('two-mule')] },
      });
      assert.equal(added.statusCode, 200, added.body);
      const held = await scoreOn(b, 'two-mule');
      assert.equal(held.outcome, 'hold');
      assert.equal(held.cached, false);
      assert.equal(
        (await a.inject({ method: 'DELETE', url: `/api/v1/lists/mules/entries/${hash('two-mule')}`, headers: auth() }))
          .statusCode,
        204,
      );
      assert.equal((await scoreOn(b, 'two-mule')).outcome, 'approve');
    });
  });
}
