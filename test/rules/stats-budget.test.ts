// GET /api/v1/rules/stats reads up to 200,000 decisions a call (docs/api.md, "Rules and lists"):
// a caller that loops is refused with 429 and Retry-After once it has asked 30 times in a minute,
// and another caller keeps its own budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';

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
