import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';

describeEachBackend('token endpoint smoke', (ctx) => {
  test('admin obtains a token and lists keys: 200', async () => {
    const token = await ctx().token();
    const res = await ctx().inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(token) });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [], next_cursor: null });
  });
  test('no credentials: 401 unauthenticated', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/api/v1/keys' });
    problem(res, 401, 'unauthenticated');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="vouch"');
  });
});
