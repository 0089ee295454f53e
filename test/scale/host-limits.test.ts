// `serve --workers 2` without Redis is one host: its rate limits hold for the host, not per worker
// (docs/api.md, "Limits"), and a port that is already taken stops it with one clear line instead of a
// restart loop.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  TEST_TIMEOUT_MS,
  adminToken,
  call,
  freePort,
  runCli,
  startServer,
  type ServerProcess,
} from '../helpers/processes.ts';

const BURST = 20;
const TOKENS_PER_MINUTE = 10;

describe('serve --workers 2 without Redis: rate limits hold for the whole host', () => {
  let dir: string;
  let server: ServerProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-host-limits-'));
    server = await startServer({
      env: {
        VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`,
        // One window of BURST requests lasting BURST seconds: the test runs well inside it.
        VOUCH_RATE_LIMIT_PER_SECOND: '1',
        VOUCH_RATE_LIMIT_BURST: String(BURST),
        VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE: String(TOKENS_PER_MINUTE),
        VOUCH_TOKEN_FAILURES_PER_MINUTE: '100000',
      },
      workers: 2,
    });
  });

  after(async () => {
    await server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    `a principal's burst of ${BURST} is shared by both workers: of 80 concurrent requests exactly ${BURST} pass, the rest are 429`,
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const base = server!.url;
      const token = await adminToken(base);
      // Fresh connections: the primary hands them to the workers in turn.
      const results = await Promise.all(
        Array.from({ length: 80 }, () =>
          call(base, 'GET', '/api/v1/keys?limit=1', {
            headers: { authorization: `Bearer ${token}`, connection: 'close' },
          }),
        ),
      );
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, BURST, `statuses: ${statuses.join(',')}`);
      assert.equal(statuses.filter((s) => s === 429).length, 80 - BURST);
      const metrics = await call(base, 'GET', '/metrics');
      assert.match(metrics.text, new RegExp(`vouch_rate_limited_total\\{scope="principal"\\} ${80 - BURST}\\b`));
      // One host, one build: not summed over the workers.
      assert.match(metrics.text, /^vouch_build_info\{version="[^"]+",node="v[\d.]+"\} 1$/m);
    },
  );

  test(
    `the token endpoint's per-IP limit (${TOKENS_PER_MINUTE}/min) holds across both workers`,
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const base = server!.url;
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          call(base, 'POST', '/api/v1/auth/token', {
            headers: { connection: 'close' },
            body: { client_id: `nobody-${i}`, client_secret: 'not-the-secret-0123456789' },
          }),
        ),
      );
      const statuses = results.map((r) => r.status);
      // adminToken above took one of the minute's budget (when that test ran).
      const passed = statuses.filter((s) => s !== 429).length;
      assert.ok(passed === TOKENS_PER_MINUTE - 1 || passed === TOKENS_PER_MINUTE, `statuses: ${statuses.join(',')}`);
      assert.ok(
        statuses.every((s) => s === 401 || s === 429),
        `statuses: ${statuses.join(',')}`,
      );
    },
  );
});

describe('serve --workers 2 with Redis unreachable: the limits still hold for the whole host', () => {
  let dir: string;
  let server: ServerProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-host-limits-'));
    server = await startServer({
      env: {
        VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`,
        // Nothing listens there: every worker runs on its fallback counters.
        VOUCH_REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        VOUCH_RATE_LIMIT_PER_SECOND: '1',
        VOUCH_RATE_LIMIT_BURST: String(BURST),
      },
      workers: 2,
    });
  });

  after(async () => {
    await server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test(`of 80 concurrent requests of one principal exactly ${BURST} pass`, { timeout: TEST_TIMEOUT_MS }, async () => {
    const base = server!.url;
    const token = await adminToken(base);
    const results = await Promise.all(
      Array.from({ length: 80 }, () =>
        call(base, 'GET', '/api/v1/keys?limit=1', {
          headers: { authorization: `Bearer ${token}`, connection: 'close' },
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, BURST, `statuses: ${statuses.join(',')}`);
  });
});

describe('serve --workers 2 on a port already in use', () => {
  let dir: string;
  let blocker: Server;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-busy-port-'));
    port = await freePort();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
  });

  after(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    'the primary exits non-zero with one clear line, instead of restarting its workers forever',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const started = Date.now();
      const result = await runCli(
        ['serve', '--workers', '2'],
        {
          VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`,
          VOUCH_LOG_LEVEL: 'warn',
          PORT: String(port),
          HOST: '127.0.0.1',
        },
        30_000,
      );
      assert.notEqual(result.code, 0);
      assert.ok(Date.now() - started < 25_000, 'it kept running');
      const expected = `vouch: port ${port} on 127.0.0.1 is already in use`;
      const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
      assert.deepEqual(
        lines.filter((l) => l === expected),
        [expected],
        `stderr:\n${result.stderr}`,
      );
      assert.ok(!/starting another/.test(result.stderr), `stderr:\n${result.stderr}`);
    },
  );

  test('one worker (no cluster) says the same', { timeout: TEST_TIMEOUT_MS }, async () => {
    const result = await runCli(
      ['serve', '--workers', '1'],
      {
        VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`,
        VOUCH_LOG_LEVEL: 'warn',
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      30_000,
    );
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, new RegExp(`^vouch: port ${port} on 127\\.0\\.0\\.1 is already in use$`, 'm'));
  });
});
