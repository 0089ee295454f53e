// The HTTP layer under hostile or sloppy clients and behind proxies: proxy headers, stalled and
// oversized requests, connection caps, encodings, aborts, long path ids, the metrics token, the
// reference page's policy, and what a rate-limited request leaves in metrics and logs.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import {
  describeEachBackend,
  bearer,
  freshStore,
  problem,
  startApp,
  testConfig,
  ADMIN_ID,
  ADMIN_SECRET,
  type TestStore,
} from '../helpers/app.ts';
import { buildApp, loggerOptions } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import type { Config } from '../../src/config/env.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';

const TOKEN = '/api/v1/auth/token';
const KEYS = '/api/v1/keys';

/** A real server on a free port, with its log lines kept. */
async function listening(
  overrides: Partial<Config>,
  requestTimeoutMs?: number,
): Promise<{ app: FastifyInstance; port: number; lines: string[]; close(): Promise<void> }> {
  const fresh: TestStore = await freshStore('sqlite');
  const config = testConfig(overrides);
  await ensureBootstrapAdmin(fresh.store, config);
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const app = await buildApp({
    config,
    store: fresh.store,
    logger: { ...(loggerOptions('debug') as object), level: 'debug', stream },
    ...(requestTimeoutMs ? { requestTimeoutMs } : {}),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    app,
    port,
    lines,
    async close() {
      await app.close();
      await fresh.drop();
    },
  };
}

/**
 * Writes `text` on a new connection and collects what comes back until the server closes the
 * connection or `waitMs` passes. `end: false` leaves the request unfinished.
 */
function rawExchange(
  port: number,
  text: string | Buffer,
  waitMs: number,
  onConnected?: (destroy: () => void) => void,
): Promise<{ response: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let response = '';
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ response, closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => (response += chunk.toString()));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', () => {
      socket.write(text);
      onConnected?.(() => socket.destroy());
    });
  });
}

function parseRaw(response: string): {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
} {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: body ? (JSON.parse(body) as Record<string, unknown>) : {},
  };
}

function expectRawProblem(response: string, status: number, code: string): void {
  const { status: got, headers, body } = parseRaw(response);
  assert.equal(got, status, response);
  assert.match(headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(body.request_id, headers['x-request-id']);
}

describe('real sockets: timeouts, caps and client errors', () => {
  let server: Awaited<ReturnType<typeof listening>>;
  before(async () => {
    server = await listening({ maxConnections: 4 }, 400);
  });
  after(async () => {
    await server.close();
  });

  test('a request body that stalls is cut off with 408 request_timeout problem+json and the connection closed', async () => {
    const head = `POST ${TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"client_id":`;
    const started = Date.now();
    const { response, closed } = await rawExchange(server.port, head, 4000);
    assert.ok(closed, `the connection stayed open: ${response}`);
    expectRawProblem(response, 408, 'request_timeout');
    assert.ok(Date.now() - started < 3000, 'the timeout fired late');
  });

  test("headers over Node's limit: 431 headers_too_large problem+json", async () => {
    const { response } = await rawExchange(
      server.port,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
      3000,
    );
    expectRawProblem(response, 431, 'headers_too_large');
  });

  test('an invalid or doubled Content-Length: 400 invalid_request problem+json', async () => {
    for (const lengths of ['Content-Length: abc', 'Content-Length: 2\r\nContent-Length: 3']) {
      const { response } = await rawExchange(
        server.port,
        `POST ${TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${lengths}\r\n\r\n{}`,
        3000,
      );
      expectRawProblem(response, 400, 'invalid_request');
    }
  });

  test('connections beyond VOUCH_MAX_CONNECTIONS are closed unanswered; the ones within are served', async () => {
    const held = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const s = connect({ port: server.port, host: '127.0.0.1' }, () => resolve(s));
            s.on('error', () => {});
          }),
      ),
    );
    try {
      // Let the server accept (and count) the four before the fifth arrives.
      await new Promise((r) => setTimeout(r, 100));
      const over = await rawExchange(server.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 2000);
      assert.ok(over.closed);
      assert.equal(over.response, '');
    } finally {
      for (const s of held) s.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    const ok = await rawExchange(server.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 2000);
    assert.equal(parseRaw(ok.response).status, 200);
  });

  test('a client that resets while its body is read is logged as a client abort, not as a store outage', async () => {
    const before = server.lines.length;
    const head = `POST ${TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"client_id":`;
    await rawExchange(server.port, head, 1000, (destroy) => setTimeout(destroy, 50));
    await new Promise((r) => setTimeout(r, 200));
    const logged = server.lines.slice(before).join('');
    assert.doesNotMatch(logged, /store unavailable/);
    assert.match(logged, /client aborted the request/);
  });
});

describe('VOUCH_TRUST_PROXY', () => {
  const limited = {
    rateLimit: { perSecond: 100_000, burst: 200_000, tokenPerMinute: 2, tokenFailuresPerMinute: 100_000 },
  };
  const tokenFrom = (ctx: Awaited<ReturnType<typeof startApp>>, forwardedFor: string) =>
    ctx.inject({
      method: 'POST',
      url: TOKEN,
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': forwardedFor },
      payload: { client_id: `c-${Math.random()}`, client_secret: 'wrong-secret-0123456789' },
    });

  test("by default X-Forwarded-For is ignored: the per-IP token limit counts the proxy's address", async () => {
    const ctx = await startApp('sqlite', limited);
    try {
      assert.equal((await tokenFrom(ctx, '203.0.113.1')).statusCode, 401);
      assert.equal((await tokenFrom(ctx, '203.0.113.2')).statusCode, 401);
      problem(await tokenFrom(ctx, '203.0.113.3'), 429, 'rate_limited');
    } finally {
      await ctx.close();
    }
  });

  for (const [name, trustProxy] of [
    ['an address list', ['127.0.0.1']],
    ['a hop count', 1],
  ] as const) {
    test(`trusted (${name}): X-Forwarded-For names the client, so each client has its own per-IP budget`, async () => {
      const ctx = await startApp('sqlite', { ...limited, trustProxy: trustProxy as Config['trustProxy'] });
      try {
        assert.equal((await tokenFrom(ctx, '203.0.113.1')).statusCode, 401);
        assert.equal((await tokenFrom(ctx, '203.0.113.1')).statusCode, 401);
        problem(await tokenFrom(ctx, '203.0.113.1'), 429, 'rate_limited');
        assert.equal((await tokenFrom(ctx, '203.0.113.2')).statusCode, 401);
      } finally {
        await ctx.close();
      }
    });
  }
});

describeEachBackend('HTTP edge cases', (ctx) => {
  let admin: string;
  before(async () => {
    admin = await ctx().token();
  });

  test('Content-Encoding other than identity: 415 unsupported_media_type (gzip included); identity is fine', async () => {
    const json = JSON.stringify({ client_id: ADMIN_ID, client_secret: ADMIN_SECRET });
    for (const encoding of ['gzip', 'br', 'deflate, gzip']) {
      const payload = encoding === 'gzip' ? gzipSync(json) : json;
      problem(
        await ctx().inject({
          method: 'POST',
          url: TOKEN,
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
          payload,
        }),
        415,
        'unsupported_media_type',
      );
    }
    const plain = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      payload: json,
    });
    assert.equal(plain.statusCode, 200);
  });

  test('a well-formed X-Request-Id with colons (a trace id) is reused as is', async () => {
    const id = 'svc:checkout:4bf92f3577b34da6';
    const res = await ctx().inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } });
    assert.equal(res.headers['x-request-id'], id);
  });

  test('entity ids of 200 and 256 characters (also percent-encoded) reach the route: 200, not 404', async () => {
    for (const id of ['e'.repeat(200), `${hash('long')}:${'x'.repeat(256 - 65)}`, `${'é'.repeat(100)}`]) {
      await postEvents(ctx(), admin, [event('trade.completed', id, { amount: 10, currency: 'USD' })]);
      const res = await ctx().inject({
        method: 'GET',
        url: `/api/v1/trust/entities/${encodeURIComponent(id)}`,
        headers: bearer(admin),
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().entity_id, id);
    }
  });

  test('DELETE (and a body-optional POST) with Content-Type: application/json and no body is accepted; a route that needs a body still says 400', async () => {
    const created = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: bearer(admin),
      payload: { name: 'empty-body', scopes: ['keys:read'] },
    });
    assert.equal(created.statusCode, 201);
    const id = created.json().id as string;
    const rotated = await ctx().inject({
      method: 'POST',
      url: `${KEYS}/${id}/rotate`,
      headers: { ...bearer(admin), 'content-type': 'application/json' },
    });
    assert.equal(rotated.statusCode, 201, rotated.body);
    const deleted = await ctx().inject({
      method: 'DELETE',
      url: `${KEYS}/${id}`,
      headers: { ...bearer(admin), 'content-type': 'application/json' },
    });
    assert.equal(deleted.statusCode, 200, deleted.body);
    problem(
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: { ...bearer(admin), 'content-type': 'application/json' },
      }),
      400,
      'invalid_request',
    );
  });

  test('GET /docs on a host other than localhost: no upgrade-insecure-requests, no third-party origin, assets from the same origin', async () => {
    const host = 'vouch.internal:8080';
    let res = await ctx().inject({ method: 'GET', url: '/docs', headers: { host } });
    for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops++) {
      res = await ctx().inject({
        method: 'GET',
        url: new URL(String(res.headers.location), `http://${host}/docs`).pathname,
        headers: { host },
      });
    }
    assert.equal(res.statusCode, 200);
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.doesNotMatch(csp, /upgrade-insecure-requests/);
    assert.doesNotMatch(csp, /https?:|\*|\.(io|com|org|net)\b/, `third-party origins in ${csp}`);
    const assets = [...res.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.length >= 3);
    for (const asset of assets) {
      assert.doesNotMatch(asset, /^(https?:)?\/\//, `${asset} is not same-origin`);
      const url = new URL(asset, `http://${host}/docs/`);
      assert.equal(url.host, host);
      assert.equal(
        (await ctx().inject({ method: 'GET', url: url.pathname, headers: { host } })).statusCode,
        200,
        url.pathname,
      );
    }
    const init = await ctx().inject({ method: 'GET', url: '/docs/static/swagger-initializer.js', headers: { host } });
    assert.match(init.body, /"validatorUrl":\s*null/);
  });

  test('/metrics: vouch_build_info and the store query histogram', async () => {
    await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(admin) });
    const body = (await ctx().inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(
      body,
      new RegExp(`vouch_build_info\\{version="[^"]+",node="${process.version.replace(/\./g, '\\.')}"\\} 1`),
    );
    assert.match(body, /# TYPE vouch_store_query_seconds histogram/);
    assert.match(body, /vouch_store_query_seconds_count\{operation="select",outcome="ok"\} [1-9]/);
  });
});

describeEachBackend(
  'rate-limited requests in metrics and logs',
  (ctx) => {
    test('a request over the principal\'s limit counts in vouch_rate_limited_total{scope="principal"}', async () => {
      const token = await ctx().token(['keys:read']);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(token) })).statusCode);
      assert.deepEqual(statuses, [200, 200, 429, 429]);
      const body = (await ctx().inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(body, /vouch_rate_limited_total\{scope="principal"\} 2/);
    });
  },
  { rateLimit: { perSecond: 1, burst: 2, tokenPerMinute: 100_000, tokenFailuresPerMinute: 100_000 } },
);

describe('VOUCH_METRICS_TOKEN', () => {
  const secret = 'metrics-token-0123456789abcdef';
  test('when set, /metrics needs it as a bearer token: 401 problem+json without it or with another', async () => {
    const ctx = await startApp('sqlite', { metricsToken: secret });
    try {
      for (const headers of [
        {},
        { authorization: 'Bearer wrong-token-0123456789abcdef' },
        { authorization: `Basic ${secret}` },
        { authorization: `Bearer ${secret}x` },
      ]) {
        const res = problem(await ctx.inject({ method: 'GET', url: '/metrics', headers }), 401, 'unauthenticated');
        assert.doesNotMatch(JSON.stringify(res), new RegExp(secret));
      }
      const ok = await ctx.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${secret}` } });
      assert.equal(ok.statusCode, 200);
      assert.match(ok.body, /vouch_http_request_duration_seconds/);
    } finally {
      await ctx.close();
    }
  });
});

describe('rate-limit log line', () => {
  test('info line naming the principal (never its token) when a request is rate limited; the token endpoint names the IP', async () => {
    const server = await listening({
      rateLimit: { perSecond: 1, burst: 1, tokenPerMinute: 1, tokenFailuresPerMinute: 100_000 },
    });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const tokenRes = await fetch(`${base}${TOKEN}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: ADMIN_ID, client_secret: ADMIN_SECRET }),
      });
      const token = ((await tokenRes.json()) as { access_token: string }).access_token;
      for (let i = 0; i < 2; i++) await (await fetch(`${base}${KEYS}`, { headers: bearer(token) })).arrayBuffer();
      await (
        await fetch(`${base}${TOKEN}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      ).arrayBuffer();
      const limited = server.lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'rate limited');
      assert.equal(limited.length, 2, JSON.stringify(limited));
      assert.deepEqual([limited[0]!.scope, limited[0]!.principal, limited[0]!.level], ['principal', ADMIN_ID, 30]);
      assert.deepEqual([limited[1]!.scope, limited[1]!.ip], ['token_ip', '127.0.0.1']);
      assert.ok(!server.lines.join('').includes(token), 'the access token was logged');
    } finally {
      await server.close();
    }
  });
});

describe(
  'Redis command latency',
  { skip: process.env.VOUCH_TEST_REDIS_URL ? false : 'VOUCH_TEST_REDIS_URL is not set' },
  () => {
    test('/metrics has vouch_redis_command_seconds by command once requests have used Redis', async () => {
      const ctx = await startApp('sqlite', { redisUrl: process.env.VOUCH_TEST_REDIS_URL });
      try {
        const token = await ctx.token(['keys:read']);
        for (let i = 0; i < 100 && (await ctx.inject({ method: 'GET', url: '/readyz' })).json().status !== 'ready'; i++)
          await new Promise((r) => setTimeout(r, 20));
        // The per-principal rate limit counts in Redis.
        for (let i = 0; i < 3; i++)
          assert.equal((await ctx.inject({ method: 'GET', url: KEYS, headers: bearer(token) })).statusCode, 200);
        const body = (await ctx.inject({ method: 'GET', url: '/metrics' })).body;
        assert.match(body, /# TYPE vouch_redis_command_seconds histogram/);
        assert.match(body, /vouch_redis_command_seconds_count\{command="[a-z]+",outcome="ok"\} [1-9]/);
      } finally {
        await ctx.close();
      }
    });
  },
);
