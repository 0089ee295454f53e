// application/x-www-form-urlencoded (docs/api.md, "Authentication"): taken by the token endpoint
// only; every other route answers it 415 like any body that is not JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { parseForm } from '../../src/http/form-body.ts';

test('repeated fields become arrays (the schema refuses them) and __proto__ stays a plain field', () => {
  const parsed = parseForm('client_id=a&client_id=b&grant_type=client_credentials&__proto__=x&n=%2B1+2');
  assert.deepEqual(parsed.client_id, ['a', 'b']);
  assert.equal(parsed.grant_type, 'client_credentials');
  assert.equal(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value, 'x');
  assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
  assert.equal(parsed.n, '+1 2');
});

describeEachBackend('form bodies', (ctx) => {
  test('a form body on a JSON route is 415 unsupported_media_type, even with valid credentials', async () => {
    const token = await ctx().token();
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/score',
      headers: { ...bearer(token), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'entity_id=abc&amount=1&currency=USD',
    });
    problem(res, 415, 'unsupported_media_type');
  });

  test('the token endpoint takes a form; a repeated credential field is a 400, not one value silently winning', async () => {
    const ok = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=client_credentials&client_id=admin-test&client_secret=' + encodeURIComponent('x'),
    });
    assert.equal(ok.statusCode, 401, ok.body);
    const repeated = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=client_credentials&client_id=a&client_id=b&client_secret=s',
    });
    assert.equal(repeated.statusCode, 400, repeated.body);
  });
});
