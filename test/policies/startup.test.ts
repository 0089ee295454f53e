// docs/api.md, "Policies" at start: the built-in policy is stored once; VOUCH_POLICY_FILE's policy is stored
// when its version is new and then activated; a restart with the same file does not undo an
// activation made since, and a file with a new version does.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { activatePolicy, ensurePolicies, getPolicy } from '../../src/policies/repository.ts';

const file = (version: string): Policy => ({
  ...(JSON.parse(JSON.stringify(DEFAULT_POLICY)) as Policy),
  version,
  bias: -2,
});

for (const backend of backends()) {
  describe(`policies at start [${backend}]`, () => {
    let fresh: TestStore;
    before(async () => {
      fresh = await freshStore(backend);
    });
    after(async () => fresh?.drop());
    const status = async (v: string, environment: 'live' | 'test' = 'live') =>
      (await getPolicy(fresh.store.db, environment, v))?.status;

    test('first start without a file: the built-in policy stored and active; again: unchanged', async () => {
      await ensurePolicies(fresh.store);
      await ensurePolicies(fresh.store, DEFAULT_POLICY);
      assert.equal(await status(DEFAULT_POLICY.version), 'active');
      assert.equal((await getPolicy(fresh.store.db, 'live', DEFAULT_POLICY.version))?.source, 'builtin');
    });

    test('a file with a new version is stored (source file) and activated; the same file again does not undo a later activation', async () => {
      await ensurePolicies(fresh.store, file('file-1'));
      assert.equal(await status('file-1'), 'active');
      assert.equal(await status(DEFAULT_POLICY.version), 'retired');
      assert.equal((await getPolicy(fresh.store.db, 'live', 'file-1'))?.source, 'file');
      await activatePolicy(fresh.store, 'live', DEFAULT_POLICY.version);
      await ensurePolicies(fresh.store, file('file-1'));
      assert.equal(await status(DEFAULT_POLICY.version), 'active', 'a restart keeps the operator’s activation');
      await ensurePolicies(fresh.store, file('file-2'));
      assert.equal(await status('file-2'), 'active');
      const feed = await fresh.store.db
        .selectFrom('revocations')
        .select('subject')
        .where('kind', '=', 'policy')
        .execute();
      assert.ok(
        feed.some((r) => r.subject === 'live:file-2'),
        'other instances learn of it through the feed',
      );
    });

    test('test mode starts from what live starts from, and then goes its own way', async () => {
      // The previous test left file-2 active in both environments (each start seeds both).
      assert.equal(await status('file-2', 'test'), 'active');
      await activatePolicy(fresh.store, 'test', DEFAULT_POLICY.version);
      assert.equal(await status(DEFAULT_POLICY.version, 'test'), 'active');
      assert.equal(await status('file-2', 'live'), 'active', 'an activation in test leaves live alone');
      await ensurePolicies(fresh.store, file('file-2'));
      assert.equal(await status(DEFAULT_POLICY.version, 'test'), 'active', 'a restart keeps the test activation too');
    });
  });
}
