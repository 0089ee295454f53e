// Request log levels (issue 18 item 12; docs/operations.md, "Logs"): probes and routine successes
// at debug, a caller's mistakes (4xx) at info, failures (5xx) at error, so that the default level
// (info) is not one line per health check.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { bearer, freshStore, testConfig, type TestStore } from '../helpers/app.ts';
import { buildApp, loggerOptions } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { requestLogLevel } from '../../src/http/observability.ts';

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

interface Line {
  level: number;
  msg: string;
  req?: { route?: string };
  res?: { statusCode?: number };
}

async function logging(level: string): Promise<{ app: FastifyInstance; lines: Line[]; fresh: TestStore }> {
  const fresh = await freshStore('sqlite');
  const config = testConfig({ logLevel: level });
  await ensureBootstrapAdmin(fresh.store, config);
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  const app = await buildApp({
    config,
    store: fresh.store,
    logger: { ...(loggerOptions(level) as object), level, stream },
  });
  await app.ready();
  return { app, lines, fresh };
}

const completed = (lines: Line[], route: string) =>
  lines.filter((l) => l.msg === 'request completed' && l.req?.route === route);

describe('request log levels', () => {
  let debug: Awaited<ReturnType<typeof logging>>;
  let info: Awaited<ReturnType<typeof logging>>;
  before(async () => {
    debug = await logging('debug');
    info = await logging('info');
  });
  after(async () => {
    for (const { app, fresh } of [debug, info]) {
      await app.close();
      await fresh.drop();
    }
  });

  test('at the default level (info) health, readiness and metrics checks log nothing; at debug they log at debug', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      assert.equal((await info.app.inject({ method: 'GET', url })).statusCode, 200);
      assert.equal((await debug.app.inject({ method: 'GET', url })).statusCode, 200);
      assert.deepEqual(completed(info.lines, url), [], `${url} logged at info`);
      assert.deepEqual(
        completed(debug.lines, url).map((l) => LEVELS[l.level]),
        ['debug'],
        url,
      );
    }
  });

  test('a success is logged at debug, a client error at info with its status', async () => {
    const token = await debug.app.inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: 'admin-test', client_secret: 'admin-test-secret-0123456789' },
    });
    const ok = await debug.app.inject({
      method: 'GET',
      url: '/api/v1/keys',
      headers: bearer(token.json().access_token as string),
    });
    assert.equal(ok.statusCode, 200);
    const refused = await debug.app.inject({ method: 'GET', url: '/api/v1/keys' });
    assert.equal(refused.statusCode, 401);
    const lines = completed(debug.lines, '/api/v1/keys');
    assert.deepEqual(
      lines.map((l) => [l.res?.statusCode, LEVELS[l.level]]),
      [
        [200, 'debug'],
        [401, 'info'],
      ],
    );
    // The incoming line is trace only: not at debug.
    assert.equal(debug.lines.filter((l) => l.msg === 'incoming request').length, 0);
  });

  test('the level rule: 5xx error, 4xx info, 2xx/3xx debug, probes debug unless failing (warn)', () => {
    assert.equal(requestLogLevel('/api/v1/trust/score', 500), 'error');
    assert.equal(requestLogLevel('/api/v1/trust/score', 503), 'error');
    assert.equal(requestLogLevel('/api/v1/trust/score', 429), 'info');
    assert.equal(requestLogLevel(undefined, 404), 'info');
    assert.equal(requestLogLevel('/api/v1/trust/score', 200), 'debug');
    assert.equal(requestLogLevel('/api/v1/keys/:key_id', 304), 'debug');
    assert.equal(requestLogLevel('/healthz', 200), 'debug');
    assert.equal(requestLogLevel('/readyz', 503), 'warn');
  });
});
