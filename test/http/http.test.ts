// Cross-cutting HTTP behaviour: problem documents for every error, request ids, body limits and
// media types, health, metrics, OpenAPI and the reference page.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import {
  backends,
  describeEachBackend,
  bearer,
  freshStore,
  problem,
  testConfig,
  ADMIN_ID,
  ADMIN_SECRET,
} from '../helpers/app.ts';
import { buildApp } from '../../src/app.ts';
import errorHandling, { frameworkErrorHandler } from '../../src/http/errors.ts';
import { toFieldErrors } from '../../src/http/field-errors.ts';
import { requestId } from '../../src/http/observability.ts';
import { header, secondStore } from '../auth/support.ts';

const KEYS = '/api/v1/keys';
const TOKEN = '/api/v1/auth/token';

/** Every /api/v1 operation of docs/api.md, "Authentication"–§6 (method, OpenAPI path). */
const CONTRACT_OPERATIONS: [string, string][] = [
  ['post', '/api/v1/auth/token'],
  ['get', '/api/v1/keys'],
  ['post', '/api/v1/keys'],
  ['delete', '/api/v1/keys/{key_id}'],
  ['post', '/api/v1/keys/{key_id}/rotate'],
  ['post', '/api/v1/trust/score'],
  ['post', '/api/v1/trust/events'],
  ['get', '/api/v1/trust/entities/{entity_id}'],
  ['get', '/api/v1/decisions/{id}'],
  ['post', '/api/v1/dispute/analyze'],
];

describeEachBackend('HTTP behaviour', (ctx) => {
  let admin: string;
  before(async () => {
    admin = await ctx().token();
  });

  test('unknown route: 404 not_found problem+json with X-Request-Id equal to request_id', async () => {
    for (const url of ['/nope', '/api/v1/nope', '/api/v2/keys', '/api/v1/keys/abc/rotate/again']) {
      const body = problem(await ctx().inject({ method: 'GET', url }), 404, 'not_found');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'detail', 'request_id', 'status', 'title', 'type']);
    }
  });

  test('trailing slash on a route that has the method: 404 not_found, not 405', async () => {
    problem(await ctx().inject({ method: 'GET', url: `${KEYS}/`, headers: bearer(admin) }), 404, 'not_found');
  });

  test("wrong method: 405 method_not_allowed with Allow listing the route's methods", async () => {
    const put = await ctx().inject({ method: 'PUT', url: KEYS, headers: bearer(admin), payload: {} });
    problem(put, 405, 'method_not_allowed');
    assert.deepEqual(header(put, 'allow').split(', ').sort(), ['GET', 'HEAD', 'POST']);
    // GET /api/v1/keys/{id} exists since docs/api.md, "Integration"; PUT on it is still refused.
    const get = await ctx().inject({
      method: 'PUT',
      url: `${KEYS}/key_01ARZ3NDEKTSV4RRFFQ69G5FAV`,
      headers: bearer(admin),
      payload: {},
    });
    problem(get, 405, 'method_not_allowed');
    assert.deepEqual(header(get, 'allow').split(', ').sort(), ['DELETE', 'GET', 'HEAD']);
    const token = await ctx().inject({ method: 'GET', url: TOKEN });
    problem(token, 405, 'method_not_allowed');
    assert.equal(header(token, 'allow'), 'POST');
    const health = await ctx().inject({ method: 'DELETE', url: '/healthz' });
    problem(health, 405, 'method_not_allowed');
    assert.deepEqual(header(health, 'allow').split(', ').sort(), ['GET', 'HEAD']);
  });

  test('body over 64 KiB: 413 payload_too_large, on the token endpoint and on an authenticated one', async () => {
    const big = JSON.stringify({ client_id: ADMIN_ID, client_secret: 'x'.repeat(70 * 1024) });
    problem(
      await ctx().inject({ method: 'POST', url: TOKEN, headers: { 'content-type': 'application/json' }, payload: big }),
      413,
      'payload_too_large',
    );
    const bigKey = JSON.stringify({ name: 'x', scopes: ['keys:read'], pad: 'y'.repeat(65 * 1024) });
    problem(
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: { ...bearer(admin), 'content-type': 'application/json' },
        payload: bigKey,
      }),
      413,
      'payload_too_large',
    );
    const form = `grant_type=client_credentials&client_id=${'a'.repeat(70 * 1024)}`;
    problem(
      await ctx().inject({
        method: 'POST',
        url: TOKEN,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form,
      }),
      413,
      'payload_too_large',
    );
  });

  test('a body just under 64 KiB is parsed (and then validated): 400 validation_failed, not 413', async () => {
    const body = JSON.stringify({ name: 'x', scopes: ['keys:read'], pad: 'y'.repeat(60 * 1024) });
    problem(
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: { ...bearer(admin), 'content-type': 'application/json' },
        payload: body,
      }),
      400,
      'validation_failed',
    );
  });

  test('text/plain, XML or no content type with a body: 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
      problem(
        await ctx().inject({
          method: 'POST',
          url: KEYS,
          headers: { ...bearer(admin), 'content-type': type },
          payload: '{"name":"x","scopes":["keys:read"]}',
        }),
        415,
        'unsupported_media_type',
      );
    }
    problem(
      await ctx().inject({
        method: 'POST',
        url: TOKEN,
        headers: { 'content-type': 'text/plain' },
        payload: 'client_id=a',
      }),
      415,
      'unsupported_media_type',
    );
  });

  test('malformed JSON: 400 invalid_request; an empty JSON body: 400 invalid_request', async () => {
    for (const payload of ['{"name": "x",', '{name: 1}', "{'a': 1}", '[1,2', 'nul']) {
      problem(
        await ctx().inject({
          method: 'POST',
          url: KEYS,
          headers: { ...bearer(admin), 'content-type': 'application/json' },
          payload,
        }),
        400,
        'invalid_request',
      );
    }
    problem(
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: { ...bearer(admin), 'content-type': 'application/json' },
        payload: '',
      }),
      400,
      'invalid_request',
    );
    const token = problem(
      await ctx().inject({
        method: 'POST',
        url: TOKEN,
        headers: { 'content-type': 'application/json' },
        payload: '{"client_id":',
      }),
      400,
      'invalid_request',
    );
    assert.equal(token.error, 'invalid_request');
  });

  test('prototype-pollution keys in a body: 400, and nothing leaks into other objects', async () => {
    const payload = '{"name":"x","scopes":["keys:read"],"__proto__":{"polluted":true,"role":"admin"}}';
    const res = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: { ...bearer(admin), 'content-type': 'application/json' },
      payload,
    });
    assert.equal(res.statusCode, 400);
    const ctor = '{"name":"x","scopes":["keys:read"],"constructor":{"prototype":{"polluted":true}}}';
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: KEYS,
          headers: { ...bearer(admin), 'content-type': 'application/json' },
          payload: ctor,
        })
      ).statusCode,
      400,
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('a JSON body that is not an object (null, array, number): 400 validation_failed', async () => {
    for (const payload of ['null', '[]', '42', '"x"']) {
      problem(
        await ctx().inject({
          method: 'POST',
          url: KEYS,
          headers: { ...bearer(admin), 'content-type': 'application/json' },
          payload,
        }),
        400,
        'validation_failed',
      );
      problem(
        await ctx().inject({ method: 'POST', url: TOKEN, headers: { 'content-type': 'application/json' }, payload }),
        400,
        'validation_failed',
      );
    }
  });

  test('GET /healthz: 200 {status: ok}, no credentials needed', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/healthz' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
    assert.ok(res.headers['x-request-id']);
  });

  test('GET /readyz: 200 ready while the store is reachable', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().status, 'ready');
  });

  test('GET /metrics: 200 Prometheus text with vouch_http_request_duration_seconds by route and status', async () => {
    await ctx().inject({ method: 'GET', url: '/healthz' });
    const res = await ctx().inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(header(res, 'content-type'), /^text\/plain/);
    assert.match(res.body, /# TYPE vouch_http_request_duration_seconds histogram/);
    assert.match(
      res.body,
      /vouch_http_request_duration_seconds_count\{method="GET",route="\/healthz",status_code="200"\} \d+/,
    );
    // Route patterns, never raw URLs: ids in paths do not become label values.
    await ctx().inject({ method: 'DELETE', url: `${KEYS}/key_01ARZ3NDEKTSV4RRFFQ69G5FAV`, headers: bearer(admin) });
    const after = (await ctx().inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(after, /route="\/api\/v1\/keys\/:key_id"/);
    assert.doesNotMatch(after, /key_01ARZ3NDEKTSV4RRFFQ69G5FAV/);
  });

  test('GET /api/v1/openapi.json: 200 OpenAPI 3.1 with every /api/v1 operation the app serves, each with security and problem responses', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    const spec = res.json() as {
      openapi: string;
      paths: Record<string, Record<string, { security?: unknown[]; responses?: Record<string, unknown> }>>;
    };
    assert.match(spec.openapi, /^3\.1\./);
    const served = CONTRACT_OPERATIONS.filter(([method, path]) =>
      ctx().app.hasRoute({ method: method.toUpperCase() as 'GET', url: path.replace(/\{(\w+)\}/g, ':$1') }),
    );
    // The foundation's own operations must all be there; the others whenever the app serves them.
    assert.ok(served.length >= 5);
    for (const [method, path] of served) {
      const op = spec.paths[path]?.[method];
      assert.ok(op, `${method.toUpperCase()} ${path} missing from the OpenAPI document`);
      assert.ok(
        op.responses && Object.keys(op.responses).some((s) => s.startsWith('4')),
        `${method} ${path} documents no error response`,
      );
      if (path !== TOKEN)
        assert.ok(
          Array.isArray(op.security) && op.security.length > 0,
          `${method} ${path} has no security requirement`,
        );
    }
    // Nothing outside the contract's prefix is documented as an API operation.
    assert.ok(
      Object.keys(spec.paths).every((p) => !p.includes(':')),
      'paths use {param}, not :param',
    );
    assert.ok(!('/api/v1/openapi.json' in spec.paths));
  });

  test('GET /docs: the interactive reference, 200 text/html after the redirect', async () => {
    let res = await ctx().inject({ method: 'GET', url: '/docs' });
    for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops++) {
      res = await ctx().inject({
        method: 'GET',
        url: new URL(String(res.headers.location), 'http://localhost/docs').pathname,
      });
    }
    assert.equal(res.statusCode, 200);
    assert.match(header(res, 'content-type'), /^text\/html/);
    assert.match(res.body, /<html/i);
    // The page is served from the package (no CDN) and points at our OpenAPI document.
    assert.match(res.body, /src="\/docs\/static\/swagger-ui-bundle\.js"/);
    const init = await ctx().inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.equal(init.statusCode, 200);
    assert.match(init.body, /\/api\/v1\/openapi\.json/);
  });

  test('a safe incoming X-Request-Id is echoed in the header and in problem bodies', async () => {
    const id = 'trace-abc_123.XYZ';
    const ok = await ctx().inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
    assert.equal(ok.headers['x-request-id'], id);
    const err = problem(
      await ctx().inject({ method: 'GET', url: KEYS, headers: { 'x-request-id': id } }),
      401,
      'unauthenticated',
    );
    assert.equal(err.request_id, id);
  });

  test('an unsafe incoming X-Request-Id (spaces, quotes, too long, non-ASCII) is replaced by a fresh one', async () => {
    for (const id of ['has space', 'a"b', 'x'.repeat(65), 'id;drop', 'ünï', '']) {
      const res = await ctx().inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
      const echoed = String(res.headers['x-request-id']);
      assert.notEqual(echoed, id);
      assert.match(echoed, /^[0-9a-f-]{36}$/);
    }
    // A raw newline cannot even be sent as a header value; an encoded one is just unsafe text.
    const res = await ctx().inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a%0Ab' } });
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  test('every error status seen here carries X-Request-Id equal to request_id and no stack trace', async () => {
    const responses = await Promise.all([
      ctx().inject({ method: 'GET', url: '/nope' }),
      ctx().inject({ method: 'PATCH', url: KEYS }),
      ctx().inject({ method: 'GET', url: KEYS }),
      ctx().inject({ method: 'GET', url: KEYS, headers: bearer(await ctx().token(['trust:read'])) }),
      ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: { ...bearer(admin), 'content-type': 'application/json' },
        payload: '{',
      }),
      ctx().inject({ method: 'POST', url: TOKEN, payload: { client_id: 'x', client_secret: ADMIN_SECRET } }),
    ]);
    for (const res of responses) {
      assert.ok(res.statusCode >= 400);
      assert.match(header(res, 'content-type'), /^application\/problem\+json/);
      assert.equal(res.json().request_id, res.headers['x-request-id']);
      assert.doesNotMatch(res.body, /at .*\.ts:\d+|node_modules|stack/i);
    }
  });
});

test('framework errors (undecodable URL, over-long path parameter): problem+json with X-Request-Id via frameworkErrorHandler', async () => {
  const app = Fastify({
    logger: false,
    genReqId: requestId,
    frameworkErrors: frameworkErrorHandler,
    routerOptions: { maxParamLength: 100 },
  });
  await app.register(errorHandling);
  app.delete('/things/:id', async () => ({ ok: true }));
  await app.ready();
  try {
    const long = await app.inject({ method: 'DELETE', url: `/things/${'k'.repeat(200)}` });
    problem(long, 404, 'not_found');
    const bad = await app.inject({ method: 'DELETE', url: '/things/%E0%A4%A' });
    problem(bad, 400, 'invalid_request');
    assert.doesNotMatch(bad.body, /E0%A4/, 'the raw path is not echoed');
  } finally {
    await app.close();
  }
});

test('validation messages: a union of literals and an enum read "must be one of: …"', () => {
  const union = toFieldErrors('body', [
    {
      instancePath: '/role',
      keyword: 'const',
      params: { allowedValue: 'service' },
      message: 'must be equal to constant',
    },
    {
      instancePath: '/role',
      keyword: 'const',
      params: { allowedValue: 'admin' },
      message: 'must be equal to constant',
    },
    { instancePath: '/role', keyword: 'anyOf', params: {}, message: 'must match a schema in anyOf' },
  ]);
  assert.deepEqual(union, [{ field: 'role', message: 'must be one of: service, admin' }]);
  const single = toFieldErrors('body', [
    { instancePath: '/grant_type', keyword: 'const', params: { allowedValue: 'client_credentials' } },
  ]);
  assert.deepEqual(single, [{ field: 'grant_type', message: 'must be client_credentials' }]);
  const en = toFieldErrors('querystring', [
    { instancePath: '/status', keyword: 'enum', params: { allowedValues: ['a', 'b'] } },
  ]);
  assert.deepEqual(en, [{ field: 'querystring.status', message: 'must be one of: a, b' }]);
});

describeEachBackend(
  'per-principal rate limit',
  (ctx) => {
    test("over the principal's burst: 429 rate_limited with Retry-After and RateLimit headers; other principals unaffected", async () => {
      const token = await ctx().token(['keys:read', 'keys:write']);
      const ok = await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(token) });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.headers['ratelimit-limit'], '3');
      assert.equal(ok.headers['ratelimit-remaining'], '2');
      const created = await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: bearer(token),
        payload: { name: 'k', scopes: ['keys:read'] },
      });
      assert.equal(created.statusCode, 201);
      assert.equal((await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(token) })).statusCode, 200);
      const limited = await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(token) });
      problem(limited, 429, 'rate_limited');
      const retry = Number(limited.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 3, String(limited.headers['retry-after']));
      assert.equal(limited.headers['ratelimit-remaining'], '0');
      assert.equal(limited.headers['ratelimit-limit'], '3');
      // Another client, and the API key made by the limited client, each have a budget of their own.
      assert.equal(
        (await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(await ctx().token(['keys:read'])) }))
          .statusCode,
        200,
      );
      assert.equal(
        (await ctx().inject({ method: 'GET', url: KEYS, headers: { 'x-api-key': created.json().key } })).statusCode,
        200,
      );
      // Unauthenticated requests are refused before they could count against anyone.
      problem(await ctx().inject({ method: 'GET', url: KEYS }), 401, 'unauthenticated');
    });
  },
  { rateLimit: { perSecond: 1, burst: 3, tokenPerMinute: 100_000, tokenFailuresPerMinute: 100_000 } },
);

for (const backend of backends()) {
  test(`GET /readyz with the store gone: 503 unavailable, while /healthz stays 200 [${backend}]`, async () => {
    const fresh = await freshStore(backend);
    // The app gets a connection of its own, so closing it leaves the suite's store to clean up.
    const own = secondStore(fresh.store);
    const app = await buildApp({ config: testConfig(), store: own, logger: false });
    await app.ready();
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      await own.close();
      problem(await app.inject({ method: 'GET', url: '/readyz' }), 503, 'unavailable');
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    } finally {
      await app.close();
      await fresh.drop();
    }
  });
}
