// The bootstrap admin (VOUCH_BOOTSTRAP_CLIENT_ID/SECRET) holds every scope: one created before an
// upgrade added scopes (labels, policies, webhooks) gets them at the next start.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore, testConfig, ADMIN_ID } from '../helpers/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { findClient } from '../../src/auth/clients.ts';
import { SCOPES } from '../../src/lib/principal.ts';

for (const backend of backends()) {
  describe(`bootstrap admin [${backend}]`, () => {
    test('an existing bootstrap admin missing newer scopes gets them at start; a deactivated one does not', async () => {
      const fresh = await freshStore(backend);
      try {
        const config = testConfig();
        assert.equal(await ensureBootstrapAdmin(fresh.store, config), true);
        await fresh.store.db
          .updateTable('clients')
          .set({ scopes: 'keys:read keys:write trust:read' })
          .where('id', '=', ADMIN_ID)
          .execute();
        assert.equal(await ensureBootstrapAdmin(fresh.store, config), false);
        assert.deepEqual([...(await findClient(fresh.store.db, ADMIN_ID))!.scopes].sort(), [...SCOPES].sort());

        await fresh.store.db
          .updateTable('clients')
          .set({ scopes: 'keys:read', deactivated_at: Date.now() })
          .where('id', '=', ADMIN_ID)
          .execute();
        await ensureBootstrapAdmin(fresh.store, config);
        assert.deepEqual((await findClient(fresh.store.db, ADMIN_ID))!.scopes, ['keys:read']);
      } finally {
        await fresh.drop();
      }
    });
  });
}
