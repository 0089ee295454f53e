// docs/api.md, "Policies": an activation (or shadow change) made on one instance is used by every other
// instance over the same store from its very next request: two apps, each with its own store
// connection, over one SQLite file or one PostgreSQL schema.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { backends, testConfig, type TestStore } from '../helpers/app.ts';
import { twoInstances, type TwoInstances } from '../helpers/instances.ts';
import { buildApp } from '../../src/app.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { hash } from '../helpers/trust.ts';

for (const backend of backends()) {
  describe(`policy activation across instances [${backend}]`, () => {
    let world: TwoInstances;
    let fresh: TestStore;
    let a: FastifyInstance;
    let b: FastifyInstance;
    let token = '';

    before(async () => {
      world = await twoInstances(backend);
      ({ fresh, a, b, token } = world);
    });

    after(() => world?.close());

    const auth = () => ({ authorization: `Bearer ${token}` });
    const scoreOn = (app: FastifyInstance, entity: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        headers: auth(),
        payload: { entity_id: hash(entity), amount: 10, currency: 'USD' },
      });

    test('activate on A: B scores with the new version on its next request, never from its cache of the old one', async () => {
      const before = await scoreOn(b, 'instances-1');
      assert.equal(before.json().policy_version, DEFAULT_POLICY.version);
      assert.equal((await scoreOn(b, 'instances-1')).json().cached, true);
      const upload = await a.inject({
        method: 'POST',
        url: '/api/v1/policies',
        headers: auth(),
        payload: { ...JSON.parse(JSON.stringify(DEFAULT_POLICY)), version: 'instances-2', bias: -1.5 },
      });
      assert.equal(upload.statusCode, 201, upload.body);
      const activated = await a.inject({
        method: 'POST',
        url: '/api/v1/policies/instances-2/activate',
        headers: auth(),
      });
      assert.equal(activated.statusCode, 200, activated.body);
      const after = await scoreOn(b, 'instances-1');
      assert.equal(after.json().policy_version, 'instances-2');
      assert.equal(after.json().cached, false);
      assert.equal((await scoreOn(a, 'instances-3')).json().policy_version, 'instances-2');
    });

    test('shadow set on B is stored with scores made on A from its next request', async () => {
      await b.inject({
        method: 'POST',
        url: '/api/v1/policies',
        headers: auth(),
        payload: { ...JSON.parse(JSON.stringify(DEFAULT_POLICY)), version: 'instances-shadow' },
      });
      const set = await b.inject({ method: 'POST', url: '/api/v1/policies/instances-shadow/shadow', headers: auth() });
      assert.equal(set.statusCode, 200, set.body);
      const scored = await scoreOn(a, 'instances-4');
      const row = await fresh.store.db
        .selectFrom('decisions')
        .select('shadow_version')
        .where('id', '=', scored.json().decision_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.shadow_version, 'instances-shadow');
    });

    test('a new app on the store uses the stored active policy, not the built-in default', async () => {
      const c = await buildApp({ config: testConfig(), store: fresh.store, logger: false });
      try {
        assert.equal((await scoreOn(c, 'instances-5')).json().policy_version, 'instances-2');
      } finally {
        await c.close();
      }
    });
  });
}
