// CORS (docs/api.md, "Integration"): off by default; with VOUCH_CORS_ORIGINS, preflights answered for the listed
// origins only, the origin echoed (never *), the contract's request headers allowed, Vary: Origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';

const ALLOWED = 'https://console.example';
const preflight = (origin: string, url = '/api/v1/trust/score') => ({
  method: 'OPTIONS' as const,
  url,
  headers: {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization, content-type, idempotency-key',
  },
});

describeEachBackend('CORS off by default', (ctx) => {
  test('no CORS headers and no preflight answer when VOUCH_CORS_ORIGINS is unset', async () => {
    const res = await ctx().inject(preflight(ALLOWED));
    assert.ok(res.statusCode === 404 || res.statusCode === 405, String(res.statusCode));
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const get = await ctx().inject({ method: 'GET', url: '/healthz', headers: { origin: ALLOWED } });
    assert.equal(get.headers['access-control-allow-origin'], undefined);
  });
});

describeEachBackend(
  'CORS with VOUCH_CORS_ORIGINS',
  (ctx) => {
    test('preflight from a listed origin: 204, origin echoed, contract headers allowed, Vary: Origin', async () => {
      const res = await ctx().inject(preflight(ALLOWED));
      assert.equal(res.statusCode, 204);
      assert.equal(res.headers['access-control-allow-origin'], ALLOWED);
      const allowedHeaders = String(res.headers['access-control-allow-headers']).toLowerCase();
      for (const h of ['authorization', 'content-type', 'idempotency-key', 'x-api-key'])
        assert.ok(allowedHeaders.includes(h), h);
      assert.match(String(res.headers['access-control-allow-methods']), /POST/);
      assert.match(String(res.headers.vary), /Origin/i);
    });

    test('preflight from another origin: not answered (no CORS headers, no 204)', async () => {
      const res = await ctx().inject(preflight('https://evil.example'));
      assert.notEqual(res.statusCode, 204);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      assert.match(String(res.headers.vary), /Origin/i);
    });

    test('actual requests: listed origin echoed even on a 401 problem; never *; Vary: Origin on every response', async () => {
      const unauth = await ctx().inject({ method: 'GET', url: '/api/v1/keys', headers: { origin: ALLOWED } });
      problem(unauth, 401, 'unauthenticated');
      assert.equal(unauth.headers['access-control-allow-origin'], ALLOWED);
      assert.match(String(unauth.headers['access-control-expose-headers']), /X-Request-Id/);
      const ok = await ctx().inject({
        method: 'GET',
        url: '/api/v1/keys',
        headers: { origin: 'http://localhost:3000', ...bearer(await ctx().token()) },
      });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.headers['access-control-allow-origin'], 'http://localhost:3000');
      const other = await ctx().inject({ method: 'GET', url: '/healthz', headers: { origin: 'https://evil.example' } });
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      const none = await ctx().inject({ method: 'GET', url: '/healthz' });
      assert.match(String(none.headers.vary), /Origin/i);
    });
  },
  { corsOrigins: [ALLOWED, 'http://localhost:3000'] },
);
