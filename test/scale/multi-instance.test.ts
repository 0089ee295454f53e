// Several instances as one service: two real `vouch serve` processes on different ports over the
// same PostgreSQL schema and the same (throwaway) Redis behave as one — a key made on A works on
// B, a key deactivated on A is refused on B, an event ingested on A makes B's cached score stale,
// and the rate limit is counted once for both. Then `serve --workers 2` on one SQLite file: the
// workers serve together, a deactivation reaches every worker, and SIGTERM stops them all cleanly.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { hash, event, tradeHistory } from '../helpers/trust.ts';
import {
  TEST_TIMEOUT_MS,
  adminToken,
  call,
  createKey,
  patientCall,
  expectProblem,
  halfSentRequest,
  hasBinary,
  runCli,
  sleep,
  startRedis,
  startServer,
  connectionRefused,
  waitFor,
  type RedisProcess,
  type ServerProcess,
} from '../helpers/processes.ts';

const PG_URL = process.env.VOUCH_TEST_POSTGRES_URL;
const apiKey = (key: string) => ({ 'x-api-key': key });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe(
  'two instances over one PostgreSQL and one Redis',
  {
    skip: !PG_URL
      ? 'VOUCH_TEST_POSTGRES_URL is not set'
      : !hasBinary('redis-server')
        ? 'redis-server not found'
        : false,
  },
  () => {
    const schema = `scale_${randomBytes(6).toString('hex')}`;
    let redis: RedisProcess | undefined;
    let a: ServerProcess | undefined;
    let b: ServerProcess | undefined;
    let token: string;
    let databaseUrl: string;

    before(async () => {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      await admin.end();
      redis = await startRedis();
      const sep = PG_URL!.includes('?') ? '&' : '?';
      databaseUrl = `${PG_URL}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const env = {
        VOUCH_DATABASE_URL: databaseUrl,
        VOUCH_REDIS_URL: redis.url,
        VOUCH_RATE_LIMIT_PER_SECOND: '5',
        VOUCH_RATE_LIMIT_BURST: '10',
        // Instances behind one URL share it, and so the tokens' issuer (docs/deployment.md, Scaling).
        VOUCH_PUBLIC_URL: 'http://vouch.test',
      };
      // Started together, as a deployment starts its instances: migrations and the bootstrap admin
      // must cope with the race.
      [a, b] = await Promise.all([startServer({ env }), startServer({ env })]);
      token = await adminToken(a.url);
    });

    after(async () => {
      await Promise.all([a?.kill(), b?.kill()]);
      await redis?.close();
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });

    test(
      'both instances use the given schema (not public), share one bootstrap admin and one signing key, and are ready with Redis',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        for (const server of [a!, b!]) {
          const ready = await call(server.url, 'GET', '/readyz');
          assert.equal(ready.status, 200);
          assert.deepEqual(ready.body, { status: 'ready', degraded: [] });
        }
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        try {
          const { rows } = await c.query(`select count(*)::int as n from ${schema}.clients where id = $1`, [
            'scale-admin',
          ]);
          assert.equal(rows[0].n, 1, 'one bootstrap admin, in the test schema');
          // Started together, they still share one signing key (one each would make a token issued by
          // one unverifiable on the other until it reloads its keys).
          const keys = await c.query(`select count(*)::int as n from ${schema}.signing_keys where retired_at is null`);
          assert.equal(keys.rows[0].n, 1, 'instances started together made a signing key each');
        } finally {
          await c.end();
        }
      },
    );

    test("an access token issued by A is accepted by B, and B's by A", { timeout: TEST_TIMEOUT_MS }, async () => {
      const fromB = await adminToken(b!.url);
      assert.equal((await patientCall(b!.url, 'GET', '/api/v1/keys?limit=1', { headers: bearer(token) })).status, 200);
      assert.equal((await patientCall(a!.url, 'GET', '/api/v1/keys?limit=1', { headers: bearer(fromB) })).status, 200);
    });

    test(
      'a key created on A authenticates on B; deactivated on A, it is refused on B on the very next request',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        // Several rounds, to measure how reliably "the very next request" holds across instances.
        const rounds = Number(process.env.VOUCH_TEST_REVOCATION_ROUNDS ?? 10);
        const delays: number[] = [];
        let refusedAtOnce = 0;
        for (let i = 0; i < rounds; i++) {
          const { id, key } = await createKey(a!.url, token, ['keys:read'], `cross-instance ${i}`);
          const onB = await call(b!.url, 'GET', '/api/v1/keys?limit=1', { headers: apiKey(key) });
          assert.equal(onB.status, 200, onB.text);
          // B now holds the key in its in-process cache: only the revocation can remove it.
          assert.equal((await call(b!.url, 'GET', '/api/v1/keys?limit=1', { headers: apiKey(key) })).status, 200);

          const deleted = await patientCall(a!.url, 'DELETE', `/api/v1/keys/${id}`, { headers: bearer(token) });
          assert.equal(deleted.status, 200, deleted.text);
          const started = performance.now();
          let res = await call(b!.url, 'GET', '/api/v1/keys?limit=1', { headers: apiKey(key) });
          if (res.status === 401) {
            refusedAtOnce += 1;
            delays.push(0);
          } else {
            // Not what the contract wants: measure how late B learns of it, then fail below.
            while (res.status !== 401 && performance.now() - started < 10_000) {
              res = await call(b!.url, 'GET', '/api/v1/keys?limit=1', { headers: apiKey(key) });
            }
            delays.push(performance.now() - started);
          }
          expectProblem(res, 401, 'unauthenticated');
        }
        // Reported in the test output (node --test prints diagnostics).
        console.log(
          `# revocation A→B: refused on the very next request in ${refusedAtOnce}/${rounds} rounds; delays (ms): ${delays.map((d) => d.toFixed(1)).join(', ')}`,
        );
        assert.equal(
          refusedAtOnce,
          rounds,
          `B served a deactivated key after A's 200 (delays ms: ${delays.join(', ')})`,
        );
      },
    );

    test(
      'a client deactivated with the CLI: its token is refused on A and on B on the very next request',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const created = await runCli(
          ['clients', 'create', '--name', 'partner', '--role', 'service', '--scopes', 'keys:read'],
          { VOUCH_DATABASE_URL: databaseUrl },
        );
        assert.equal(created.code, 0, created.stderr);
        const id = /^client_id=(\S+)$/m.exec(created.stdout)?.[1];
        const secret = /^client_secret=(\S+)$/m.exec(created.stdout)?.[1];
        assert.ok(id && secret, created.stdout);
        const issued = await call(a!.url, 'POST', '/api/v1/auth/token', {
          body: { client_id: id, client_secret: secret },
        });
        assert.equal(issued.status, 200, issued.text);
        const clientToken = issued.body.access_token as string;
        for (const server of [a!, b!])
          assert.equal(
            (await call(server.url, 'GET', '/api/v1/keys?limit=1', { headers: bearer(clientToken) })).status,
            200,
          );

        const deactivated = await runCli(['clients', 'deactivate', id], { VOUCH_DATABASE_URL: databaseUrl });
        assert.equal(deactivated.code, 0, deactivated.stderr);
        for (const server of [a!, b!]) {
          expectProblem(
            await call(server.url, 'GET', '/api/v1/keys?limit=1', { headers: bearer(clientToken) }),
            401,
            'unauthenticated',
          );
          expectProblem(
            await call(server.url, 'POST', '/api/v1/auth/token', { body: { client_id: id, client_secret: secret } }),
            401,
            'invalid_client',
          );
        }
      },
    );

    test(
      'a key rotated on A with no grace period is refused on B at once; its replacement works on B',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const created = await createKey(a!.url, token, ['keys:read'], 'rotated');
        assert.equal((await call(b!.url, 'GET', '/api/v1/keys?limit=1', { headers: apiKey(created.key) })).status, 200);
        const rotated = await patientCall(a!.url, 'POST', `/api/v1/keys/${created.id}/rotate`, {
          headers: bearer(token),
          body: { grace_period_seconds: 0 },
        });
        assert.equal(rotated.status, 201, rotated.text);
        expectProblem(
          await call(b!.url, 'GET', '/api/v1/keys?limit=1', { headers: apiKey(created.key) }),
          401,
          'unauthenticated',
        );
        assert.equal(
          (await call(b!.url, 'GET', '/api/v1/keys?limit=1', { headers: apiKey(rotated.body.key as string) })).status,
          200,
        );
      },
    );

    test(
      "an event ingested on A makes B's cached score stale: B answers cached: false with the new score",
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const { key } = await createKey(a!.url, token, ['trust:read', 'trust:write'], 'scores');
        const entity = hash(`multi-instance-${randomBytes(4).toString('hex')}`);
        const history = await call(a!.url, 'POST', '/api/v1/trust/events', {
          headers: apiKey(key),
          body: { events: tradeHistory(entity, 30, 60) },
        });
        assert.equal(history.status, 200, history.text);
        const request = {
          entity_id: entity,
          amount: 120,
          currency: 'USD',
          context: { payment_method: 'bank_transfer' },
        };
        const first = await call(b!.url, 'POST', '/api/v1/trust/score', { headers: apiKey(key), body: request });
        const second = await call(b!.url, 'POST', '/api/v1/trust/score', { headers: apiKey(key), body: request });
        assert.equal(first.status, 200, first.text);
        assert.equal(first.body.cached, false);
        assert.equal(second.body.cached, true);
        // A serves the same request from the shared cache (Redis) too.
        const onA = await call(a!.url, 'POST', '/api/v1/trust/score', { headers: apiKey(key), body: request });
        assert.equal(onA.body.cached, true);
        assert.equal(onA.body.decision_id, first.body.decision_id);

        const chargeback = await call(a!.url, 'POST', '/api/v1/trust/events', {
          headers: apiKey(key),
          body: { events: [event('chargeback', entity, {}, 60_000), event('fraud.reported', entity, {}, 30_000)] },
        });
        assert.equal(chargeback.status, 200, chargeback.text);
        const third = await call(b!.url, 'POST', '/api/v1/trust/score', { headers: apiKey(key), body: request });
        assert.equal(third.status, 200);
        assert.equal(third.body.cached, false, 'B served a score computed before the chargeback');
        assert.ok(
          (third.body.score as number) > (first.body.score as number),
          `score ${String(third.body.score)} should exceed ${String(first.body.score)}`,
        );
        const names = (third.body.signals as { name: string }[]).map((s) => s.name);
        assert.ok(
          names.some((n) => /chargeback/.test(n)),
          `signals: ${names.join(', ')}`,
        );
        // ...and A agrees.
        const onA2 = await call(a!.url, 'POST', '/api/v1/trust/score', { headers: apiKey(key), body: request });
        assert.equal(onA2.body.score, third.body.score);
      },
    );

    test(
      'the rate limit is shared: 10 requests split across A and B pass, the 11th on either is 429 with Retry-After',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const { key } = await createKey(a!.url, token, ['keys:read'], 'limited');
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++) {
          const res = await call(i % 2 === 0 ? a!.url : b!.url, 'GET', '/api/v1/keys?limit=1', {
            headers: apiKey(key),
          });
          statuses.push(res.status);
        }
        assert.deepEqual(statuses, Array(10).fill(200));
        for (const server of [a!, b!]) {
          const res = await call(server.url, 'GET', '/api/v1/keys?limit=1', { headers: apiKey(key) });
          expectProblem(res, 429, 'rate_limited');
          const retryAfter = Number(res.headers.get('retry-after'));
          assert.ok(
            Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2,
            `Retry-After: ${res.headers.get('retry-after')}`,
          );
        }
      },
    );
  },
);

/** Waits for a cluster to exit after a stop signal; asserts exit code 0 and that no process of its group is left. */
async function expectCleanExit(server: ServerProcess): Promise<void> {
  const exit = await Promise.race([
    server.exited,
    new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000).unref()),
  ]);
  assert.notEqual(exit, 'timeout', `the primary did not exit after the signal:\n${server.output()}`);
  assert.deepEqual(exit, { code: 0, signal: null }, server.output());
  assert.ok(await connectionRefused(server.port));
  // Workers (and tsx's esbuild helper) go with the primary.
  await waitFor(
    'every process of the group to exit',
    () => {
      try {
        process.kill(-server.pid, 0);
        return false;
      } catch {
        return true;
      }
    },
    5000,
  );
}

describe('serve --workers 2 on one SQLite file', () => {
  let dir: string;
  let server: ServerProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-workers-'));
    server = await startServer({ env: { VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}` }, workers: 2 });
  });

  after(async () => {
    await server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    'the workers serve many concurrent requests; a deactivated key is refused on the next request by every worker',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const base = server!.url;
      const token = await adminToken(base);
      const { id, key } = await createKey(base, token, ['keys:read', 'trust:read', 'trust:write']);
      const entity = hash(`workers-${randomBytes(4).toString('hex')}`);
      assert.equal(
        (
          await call(base, 'POST', '/api/v1/trust/events', {
            headers: apiKey(key),
            body: { events: tradeHistory(entity, 10, 30) },
          })
        ).status,
        200,
      );

      // Many concurrent requests on fresh connections: the primary spreads them over both workers,
      // each of which must know the key and the entity.
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          call(base, 'POST', '/api/v1/trust/score', {
            headers: { ...apiKey(key), connection: 'close' },
            body: { entity_id: entity, amount: 50 + i, currency: 'USD' },
          }),
        ),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        Array(60).fill(200),
      );
      assert.ok(results.every((r) => r.body.entity_id === entity && typeof r.body.score === 'number'));

      // A scrape reaches one worker and reports the whole cluster: every one of the 60 scores, whichever
      // worker served it. (How long a scrape takes is the bench's business, not an assertion here.)
      const started = performance.now();
      const metrics = await call(base, 'GET', '/metrics');
      console.log(`# /metrics on two workers answered in ${(performance.now() - started).toFixed(0)} ms`);
      assert.equal(metrics.status, 200);
      const scored = [...metrics.text.matchAll(/^vouch_scores_total\{[^}]*\} (\d+)$/gm)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
      assert.ok(scored >= 60, `the scrape counted ${scored} of the cluster's 60 scores`);

      // Every worker has the key cached now; a deactivation through one must reach all of them.
      for (let round = 0; round < 3; round++) {
        const k = round === 0 ? { id, key } : await createKey(base, token, ['keys:read']);
        const warm = await Promise.all(
          Array.from({ length: 8 }, () =>
            call(base, 'GET', '/api/v1/keys?limit=1', { headers: { ...apiKey(k.key), connection: 'close' } }),
          ),
        );
        assert.ok(warm.every((r) => r.status === 200));
        assert.equal((await call(base, 'DELETE', `/api/v1/keys/${k.id}`, { headers: bearer(token) })).status, 200);
        const after = await Promise.all(
          Array.from({ length: 8 }, () =>
            call(base, 'GET', '/api/v1/keys?limit=1', { headers: { ...apiKey(k.key), connection: 'close' } }),
          ),
        );
        assert.deepEqual(
          after.map((r) => r.status),
          Array(8).fill(401),
          'a worker served a deactivated key',
        );
      }
    },
  );

  test(
    'SIGTERM to the primary: an in-flight request completes with 200, then every worker stops and the primary exits 0',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const token = await adminToken(server!.url);
      const slow = halfSentRequest(server!.port, '/api/v1/trust/events', bearer(token), {
        events: tradeHistory(hash('drain-primary'), 200, 10),
      });
      await sleep(300);
      server!.signal('SIGTERM');
      await waitFor('new connections to be refused', () => connectionRefused(server!.port, 1000), 10_000, 20);
      slow.finish();
      const done = await slow.response;
      assert.equal(done.status, 200, done.text);
      await expectCleanExit(server!);
    },
  );
});

describe('serve --workers 2: a signal to the whole process group (Ctrl-C, systemd) still drains', () => {
  let dir: string;
  let server: ServerProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-workers-'));
    server = await startServer({ env: { VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}` }, workers: 2 });
  });

  after(async () => {
    await server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    "SIGINT to every process of the group: the worker's in-flight request completes with 200 and the primary exits 0",
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const token = await adminToken(server!.url);
      const slow = halfSentRequest(server!.port, '/api/v1/trust/events', bearer(token), {
        events: tradeHistory(hash('drain-group'), 200, 10),
      });
      await sleep(300);
      // Each worker gets the signal itself and then the primary's stop: one stop, not two (a second
      // SIGINT makes close-with-grace exit at once). The workers first, a moment before the primary,
      // so the two notices cannot merge into one pending signal.
      assert.ok(server!.signalMembers('SIGINT') >= 2, 'no workers found in the process group');
      await sleep(100);
      server!.signal('SIGINT');
      // The request stays in flight until well after the primary has passed its stop on.
      await sleep(300);
      await waitFor('new connections to be refused', () => connectionRefused(server!.port, 1000), 10_000, 20);
      slow.finish();
      const done = await slow.response;
      assert.equal(done.status, 200, done.text);
      await expectCleanExit(server!);
    },
  );
});
