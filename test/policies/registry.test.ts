// The policy registry (src/policies/registry.ts): the one owner of the active and shadow policies
// per environment, reloaded from the store, read by scoring, batch, ingestion and disputes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore } from '../helpers/app.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { PolicyRegistry } from '../../src/policies/registry.ts';
import { LivePolicies } from '../../src/policies/live.ts';
import { activatePolicy, ensurePolicies, insertPolicy, shadowPolicy } from '../../src/policies/repository.ts';

for (const backend of backends()) {
  describe(`PolicyRegistry (${backend})`, () => {
    test('holds the initial policy until reloaded, then the stored active and shadow ones per environment', async () => {
      const { store, drop } = await freshStore(backend);
      try {
        const initial = { ...DEFAULT_POLICY, version: 'initial-1' };
        const registry = new PolicyRegistry(store, initial);
        assert.equal(registry.active('live'), initial);
        assert.equal(registry.shadow('test'), null);

        await ensurePolicies(store, { ...DEFAULT_POLICY, version: 'configured-1' });
        await insertPolicy(store.db, 'test', {
          policy: { ...DEFAULT_POLICY, version: 'shadow-1', bias: -2 },
          source: 'upload',
        });
        await shadowPolicy(store, 'test', 'shadow-1');
        await registry.reload();
        assert.equal(registry.active('live').version, 'configured-1');
        assert.equal(registry.active('test').version, 'configured-1');
        assert.equal(registry.shadow('live'), null);
        assert.equal(registry.shadow('test')?.version, 'shadow-1');

        // A request's pair, read once, is not changed under it by a later reload.
        const pair = registry.get('live');
        await insertPolicy(store.db, 'live', {
          policy: { ...DEFAULT_POLICY, version: 'active-2', bias: 1 },
          source: 'upload',
        });
        await activatePolicy(store, 'live', 'active-2');
        const live = new LivePolicies(registry);
        live.changed();
        await live.ready();
        assert.equal(pair.active.version, 'configured-1');
        assert.equal(registry.get('live').active.version, 'active-2');
        assert.equal(registry.active('test').version, 'configured-1');
      } finally {
        await drop();
      }
    });
  });
}
