// The list of public routes (src/http/public-routes.ts, docs/api.md "Public routes") is held here: it is exactly
// the routes that declare no scope, every entry is served, and the app does not start with a route that declares
// no scope and is not listed. What the listed routes answer without credentials is checked too.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, freshStore, startApp, testConfig } from '../helpers/app.ts';
import { buildApp } from '../../src/app.ts';
import { UNSCOPED_ROUTES, missingUnscopedRoutes, undeclaredAccess } from '../../src/http/public-routes.ts';

const named = (method: string, url: string) => `${method} ${url}`;

describeEachBackend('the public routes', (ctx) => {
  test('the table’s routes without a scope are exactly the listed ones (besides those plugins serve)', () => {
    const unscoped = ctx().app.routeTable.flatMap((definition) =>
      definition.config?.scope
        ? []
        : (Array.isArray(definition.method) ? definition.method : [definition.method]).map((m) =>
            named(m, definition.url),
          ),
    );
    assert.deepEqual(
      unscoped.sort(),
      UNSCOPED_ROUTES.filter((r) => !r.plugin)
        .map((r) => named(r.method, r.url))
        .sort(),
    );
    for (const entry of UNSCOPED_ROUTES) assert.ok(entry.reason.length > 5, `${named(entry.method, entry.url)}`);
  });

  test('every listed route is served, and a stale entry would be named', () => {
    const app = ctx().app;
    assert.deepEqual(
      missingUnscopedRoutes((method, url) => app.hasRoute({ method, url })),
      [],
    );
    assert.deepEqual(
      missingUnscopedRoutes((method, url) => url !== '/healthz' && app.hasRoute({ method, url })),
      ['GET /healthz'],
    );
  });

  test('each public route of the table answers without credentials', async () => {
    for (const entry of UNSCOPED_ROUTES.filter((r) => r.access === 'public' && !r.plugin)) {
      const url = entry.url.replace(':code', 'not_found');
      const res = await ctx().inject({
        method: entry.method,
        url,
        ...(entry.method === 'POST' ? { payload: {} } : {}),
      });
      // The token endpoint answers a request without client credentials as a bad request, not a missing one;
      // signing out without a session has nothing to end and clears the cookie anyway; single sign-on's
      // redirects answer 404 while it is not configured (test/people/sso.test.ts runs them).
      const expected =
        entry.url === '/api/v1/auth/logout' ? 204 : entry.navigation ? 404 : entry.method === 'POST' ? 400 : 200;
      assert.equal(res.statusCode, expected, `${named(entry.method, entry.url)}: ${res.body}`);
    }
  });

  test('peer routes: no signature is 401 with its challenge; an API credential does not open them', async () => {
    const admin = await ctx().token();
    const peerRoutes = UNSCOPED_ROUTES.filter((r) => r.access === 'peer');
    assert.equal(peerRoutes.length, 2);
    for (const entry of peerRoutes) {
      for (const headers of [{}, bearer(admin)]) {
        const res = await ctx().inject({
          method: entry.method,
          url: entry.url,
          headers,
          ...(entry.method === 'POST' ? { payload: {} } : {}),
        });
        assert.equal(res.statusCode, 401, `${named(entry.method, entry.url)}: ${res.body}`);
        assert.match(String(res.headers['www-authenticate']), /^Vouch-Signature /);
      }
    }
  });
});

describe('the app does not start with a route whose authorisation is undeclared', () => {
  test('an unlisted route without a scope, or peer route, stops buildApp; a scoped one registers', async () => {
    const fresh = await freshStore('sqlite');
    const app = await buildApp({ config: testConfig(), store: fresh.store, logger: false });
    try {
      const handler = async () => ({ ok: true });
      assert.throws(
        () => app.route({ method: 'GET', url: '/api/v1/forgotten', handler }),
        /GET \/api\/v1\/forgotten declares no scope and is not a public route/,
      );
      assert.throws(
        () => app.route({ method: 'POST', url: '/network/v1/other', config: { peer: true }, handler }),
        /POST \/network\/v1\/other declares no scope and is not a public route/,
      );
      app.route({ method: 'GET', url: '/api/v1/remembered', config: { scope: 'keys:read' }, handler });
      await app.ready();
      const res = await app.inject({ method: 'GET', url: '/api/v1/remembered' });
      assert.equal(res.statusCode, 401);
    } finally {
      await app.close();
      await fresh.drop();
    }
  });

  test('a listed route that declares a scope, or a peer route without its signature check, is refused', () => {
    const handler = () => undefined;
    assert.match(
      undeclaredAccess({ method: 'GET', url: '/healthz', config: { scope: 'keys:read' } }) ?? '',
      /GET \/healthz declares a scope but is listed as public/,
    );
    assert.match(
      undeclaredAccess({ method: 'GET', url: '/network/v1/flags', config: { peer: true } }) ?? '',
      /GET \/network\/v1\/flags is listed as peer-signed but does not declare config.peer with its signature check/,
    );
    assert.match(
      undeclaredAccess({ method: 'GET', url: '/network/v1/flags', onRequest: [handler] }) ?? '',
      /is listed as peer-signed/,
    );
    assert.match(
      undeclaredAccess({ method: 'GET', url: '/healthz', config: { peer: true } }) ?? '',
      /declares peer authentication but is listed as public/,
    );
    assert.match(
      undeclaredAccess({ method: ['HEAD', 'GET'], url: '/docs/unlisted' }) ?? '',
      /HEAD \/docs\/unlisted declares no scope/,
    );
    assert.equal(undeclaredAccess({ method: ['GET', 'HEAD'], url: '/healthz' }), undefined);
    assert.equal(undeclaredAccess({ method: 'POST', url: '/anything', config: { scope: 'keys:write' } }), undefined);
  });

  test('CORS preflight: the route @fastify/cors adds when origins are configured is listed, and answers', async () => {
    const app = await startApp('sqlite', { corsOrigins: ['https://app.example.com'] });
    try {
      assert.equal(app.app.hasRoute({ method: 'OPTIONS', url: '/*' }), true);
      const res = await app.inject({
        method: 'OPTIONS',
        url: '/api/v1/keys',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
      });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.headers['access-control-allow-origin'], 'https://app.example.com');
    } finally {
      await app.close();
    }
  });
});
