// GET /api/v1/rules/stats reads up to 200,000 decisions a call (docs/api.md, "Rules and lists"):
// a caller that loops is refused with 429 and Retry-After once it has asked 30 times in a minute,
// and another caller keeps its own budget. The reading runs in a worker thread, with the same answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { storeSource } from '../../src/store/readers.ts';
import { ruleStats } from '../../src/rules/stats.ts';
import { ruleStatsOff } from '../../src/rules/stats-thread.ts';

describeEachBackend('rule statistics budget', (ctx) => {
  test('the 31st ask of a minute is 429 with Retry-After; another principal is still answered', async () => {
    const looping = await ctx().token(['rules:read']);
    const other = await ctx().token(['rules:read']);
    const ask = (token: string) =>
      ctx().inject({ method: 'GET', url: '/api/v1/rules/stats?days=7', headers: bearer(token) });
    const answers = await Promise.all(Array.from({ length: 30 }, () => ask(looping)));
    assert.deepEqual([...new Set(answers.map((r) => r.statusCode))], [200]);
    const refused = await ask(looping);
    assert.equal(refused.statusCode, 429, refused.body);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(refused.json().code, 'rate_limited');
    assert.equal((await ask(other)).statusCode, 200);
  });
});

describeEachBackend('rule statistics off the event loop', (ctx) => {
  test('the worker thread reads what the serving thread would: the same days, matches and scored counts', async () => {
    const now = Date.now();
    const rules = JSON.stringify([{ id: 'rul_s', name: 'seen', version: 1, action: 'review' }]);
    await ctx()
      .store.db.insertInto('decisions')
      .values(
        [0, 1, 1, 3].map((daysAgo, i) => ({
          id: `dec_stats_${i}`,
          kind: 'score',
          environment: 'live',
          principal_id: 'p',
          owner_client_id: 'c',
          subject_id: 'e',
          request_digest: 'd',
          result: '{}',
          policy_version: 'v1',
          created_at: now - daysAgo * 86_400_000,
          rules: i === 3 ? null : rules,
          shadow_rules: i === 3 ? rules : null,
        })),
      )
      .execute();
    const store = ctx().store;
    assert.ok(storeSource(store), 'a store the worker can open');
    const off = await ruleStatsOff(store, 'live', 7, now, undefined);
    assert.deepEqual(off, await ruleStats(store.db, 'live', 7, now, undefined));
    assert.equal(off.decisions_read, 4);
    assert.deepEqual(
      off.data.map((r) => r.days.reduce((n, d) => n + d.matched + d.shadow_matched, 0)),
      [4],
    );
  });
});
