// docs/rules.md, "Cost" and "Limits": a rule that keeps exceeding the run-time budget is taken out
// of this process's scores at once and set to draft in the store (a new version, with the reason
// and rule.changed); one that recovers in between is not; and an environment holds at most
// RULE_LIMITS.maxLiveRules active and shadow rules (a conflict beyond, drafts unlimited).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { ChangeFeed } from '../../src/store/change-feed.ts';
import { RuleRegistry } from '../../src/rules/registry.ts';
import { RuleConflictError, createRule, getRule, updateRule } from '../../src/rules/repository.ts';
import { suspendRule } from '../../src/rules/suspension.ts';
import { RULE_LIMITS } from '../../src/rules/cel-env.ts';
import { checkOrThrow } from '../../src/rules/routes.ts';

for (const backend of backends()) {
  describe(`rule suspension and the live-rule bound [${backend}]`, () => {
    let fresh: TestStore;
    let feed: ChangeFeed;
    const change = (environment: 'live' | 'test' = 'live') => ({ environment, by: 'tester', now: Date.now() });

    before(async () => {
      fresh = await freshStore(backend);
      feed = new ChangeFeed(fresh.store);
    });
    after(async () => {
      await fresh?.drop();
    });

    test('three evaluations in a row over the budget suspend the rule once: out of scores now, draft in the store', async () => {
      const db = fresh.store.db;
      const stored = await createRule(
        db,
        feed,
        change(),
        { name: 'slow', condition: 'amount > 1.0', action: 'decline' },
        'active',
        checkOrThrow,
      );
      const registry = new RuleRegistry(fresh.store);
      const suspended: string[] = [];
      registry.suspendWith(async (environment, rule, ms) => {
        suspended.push(rule.id);
        await suspendRule(
          db,
          feed,
          { environment, by: 'vouch', now: Date.now(), reason: `over budget ${ms}` },
          rule.id,
          rule.version,
        );
      });
      await registry.reload();
      const [rule] = (
        registry as unknown as { loaded: { live: { rules: import('../../src/rules/compile.ts').CompiledRule[] } } }
      ).loaded.live.rules;
      assert.equal(rule?.id, stored.id);
      const guard = registry.guardOf('live');
      guard.exceeded(rule!, 9);
      guard.exceeded(rule!, 9);
      guard.within(rule!); // recovered: the count starts again
      guard.exceeded(rule!, 9);
      guard.exceeded(rule!, 9);
      assert.deepEqual(suspended, []);
      assert.equal(registry.summary('live').rules, 1);
      guard.exceeded(rule!, 9);
      guard.exceeded(rule!, 9);
      assert.deepEqual(suspended, [stored.id], 'suspended once');
      assert.equal(registry.summary('live').rules, 0, 'out of this process at once');
      await new Promise((r) => setTimeout(r, 50));
      for (let i = 0; i < 50 && (await getRule(db, 'live', stored.id))?.status !== 'draft'; i++)
        await new Promise((r) => setTimeout(r, 20));
      const after = await getRule(db, 'live', stored.id);
      assert.equal(after?.status, 'draft');
      assert.equal(after?.version, 2);
      const version = await db
        .selectFrom('rule_versions')
        .select(['reason', 'status'])
        .where('rule_id', '=', stored.id)
        .where('version', '=', 2)
        .executeTakeFirstOrThrow();
      assert.match(version.reason ?? '', /over budget/);
      await registry.reload();
      assert.equal(registry.summary('live').rules, 0);
    });

    test(`at most ${RULE_LIMITS.maxLiveRules} active and shadow rules per environment; drafts are not counted`, async () => {
      const db = fresh.store.db;
      const body = (i: number) => ({ name: `r${i}`, condition: `amount > ${i}.0`, action: 'review' as const });
      for (let i = 0; i < RULE_LIMITS.maxLiveRules; i++)
        await createRule(db, feed, change('test'), body(i), i % 2 ? 'active' : 'shadow', checkOrThrow);
      await assert.rejects(
        createRule(db, feed, change('test'), body(999), 'active', checkOrThrow),
        (err: unknown) => err instanceof RuleConflictError && /at most|most it may have/.test(err.message),
      );
      const draft = await createRule(db, feed, change('test'), body(1000), 'draft', checkOrThrow);
      await assert.rejects(
        updateRule(db, feed, change('test'), draft.id, { status: 'shadow' }, null),
        RuleConflictError,
      );
      // the other environment has its own room
      await createRule(db, feed, change('live'), body(1), 'active', checkOrThrow);
    });
  });
}
