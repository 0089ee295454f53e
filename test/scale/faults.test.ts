// Faults, each against real processes and throwaway servers (never the machine's shared
// PostgreSQL or Redis): Redis killed or hung → scoring still answers correctly from the store,
// /readyz says degraded, rate limits hold locally, and all of it recovers when Redis is back;
// PostgreSQL restarted → 503 `unavailable` meanwhile (never a 500 or a wrong 200) and recovery
// without a process restart; `kill -9` under ingestion load → every acknowledged event survives;
// SIGTERM → in-flight requests finish, new connections are refused, exit code 0.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/db.ts';
import { isStoreUnavailable } from '../../src/http/errors.ts';
import { ChangeFeed } from '../../src/store/change-feed.ts';
import { deactivateKey } from '../../src/keys/repository.ts';
import { hash, event, tradeHistory } from '../helpers/trust.ts';
import {
  TEST_TIMEOUT_MS,
  adminToken,
  call,
  connectionRefused,
  createKey,
  expectProblem,
  halfSentRequest,
  hasBinary,
  patientCall,
  postgresUnavailable,
  redisCommand,
  sleep,
  startPostgres,
  startRedis,
  startServer,
  waitFor,
  type PostgresCluster,
  type RedisProcess,
  type Reply,
  type ServerProcess,
} from '../helpers/processes.ts';

const apiKey = (key: string) => ({ 'x-api-key': key });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** How many keys match a pattern in a Redis (KEYS: fine on a throwaway server). */
async function redisKeyCount(port: number, pattern: string): Promise<number> {
  const reply = await redisCommand(port, 'KEYS', pattern);
  return Number(/^\*(\d+)/.exec(reply)?.[1] ?? -1);
}

// ---------------------------------------------------------------------------------------------

describe(
  'Redis faults: scoring keeps answering from the store and recovers by itself',
  { skip: hasBinary('redis-server') ? false : 'redis-server not found' },
  () => {
    let redis: RedisProcess | undefined;
    let server: ServerProcess | undefined;
    let dir: string;
    let token: string;
    let scorer: { id: string; key: string };
    const entity = hash(`redis-fault-${randomBytes(4).toString('hex')}`);
    const request = { entity_id: entity, amount: 250, currency: 'USD', context: { payment_method: 'card' } };
    let expectedScore: number;

    const score = (body: Record<string, unknown> = request) =>
      call(server!.url, 'POST', '/api/v1/trust/score', { headers: apiKey(scorer.key), body });
    const ready = () => call(server!.url, 'GET', '/readyz');

    before(async () => {
      dir = tempDir('vouch-redis-fault-');
      redis = await startRedis();
      server = await startServer({
        env: {
          VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`,
          VOUCH_REDIS_URL: redis.url,
          VOUCH_RATE_LIMIT_PER_SECOND: '5',
          VOUCH_RATE_LIMIT_BURST: '10',
        },
      });
      token = await adminToken(server.url);
      scorer = await createKey(server.url, token, ['trust:read', 'trust:write'], 'scorer');
      const history = await patientCall(server.url, 'POST', '/api/v1/trust/events', {
        headers: apiKey(scorer.key),
        body: { events: tradeHistory(entity, 20, 40) },
      });
      assert.equal(history.status, 200, history.text);
    });

    after(async () => {
      await server?.kill();
      await redis?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test(
      'with Redis up: ready, the second identical request is cached, the entry is in Redis',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        assert.deepEqual((await ready()).body, { status: 'ready', degraded: [] });
        const first = await score();
        const second = await score();
        assert.equal(first.status, 200, first.text);
        assert.equal(first.body.cached, false);
        assert.equal(second.body.cached, true);
        expectedScore = first.body.score as number;
        assert.ok((await redisKeyCount(redis!.port, 'vouch:score:*')) >= 1, 'no score entry in Redis');
        assert.ok((await redisKeyCount(redis!.port, 'vouch-rl:*')) >= 1, 'no rate-limit counter in Redis');
        assert.equal(await redisKeyCount(redis!.port, '*undefined*'), 0, 'a key named after an undefined value');
      },
    );

    test(
      'Redis killed: /readyz is 200 degraded [redis]; scoring answers 200, cached: false, the same score; new events count; rate limits hold locally (429)',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const limited = await createKey(server!.url, token, ['trust:read'], 'limited while down');
        await redis!.kill();
        const degraded = await waitFor(
          'readyz to report redis',
          async () => {
            const res = await ready();
            return res.body.status === 'degraded' ? res : undefined;
          },
          5000,
        );
        assert.equal(degraded.status, 200);
        assert.deepEqual(degraded.body, { status: 'degraded', degraded: ['redis'] });

        for (let i = 0; i < 3; i++) {
          const res = await score();
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.cached, false, 'a cached score while Redis is down');
          assert.equal(res.body.score, expectedScore);
        }
        // History still comes in, and the next score reflects it.
        const cb = await call(server!.url, 'POST', '/api/v1/trust/events', {
          headers: apiKey(scorer.key),
          body: { events: [event('chargeback', entity, {}, 60_000)] },
        });
        assert.equal(cb.status, 200, cb.text);
        const after = await score();
        assert.equal(after.status, 200);
        assert.equal(after.body.cached, false);
        assert.ok((after.body.score as number) > expectedScore, 'the chargeback is not reflected');
        expectedScore = after.body.score as number;

        // Local limits: burst 10, then 429 with Retry-After.
        const statuses: number[] = [];
        let last: Reply | undefined;
        for (let i = 0; i < 12; i++) {
          last = await call(server!.url, 'POST', '/api/v1/trust/score', {
            headers: apiKey(limited.key),
            body: { ...request, amount: 10 + i },
          });
          statuses.push(last.status);
        }
        assert.deepEqual(statuses, [...Array(10).fill(200), 429, 429]);
        expectProblem(last!, 429, 'rate_limited');
        assert.ok(Number(last!.headers.get('retry-after')) >= 1);
      },
    );

    test(
      'Redis back: /readyz is ready again, scores are cached again and counters are in Redis, with no restart',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const pid = server!.pid;
        await redis!.start();
        await waitFor('readyz to be ready again', async () => (await ready()).body.status === 'ready', 15_000, 100);
        assert.deepEqual((await ready()).body, { status: 'ready', degraded: [] });
        const fresh = { ...request, amount: 999 };
        const first = await score(fresh);
        const second = await score(fresh);
        assert.equal(first.status, 200);
        assert.equal(second.status, 200);
        assert.equal(second.body.cached, true, 'no cache hit after Redis returned');
        assert.equal(second.body.score, first.body.score);
        assert.ok((await redisKeyCount(redis!.port, 'vouch:score:*')) >= 1, 'scores are not written to Redis again');
        assert.ok((await redisKeyCount(redis!.port, 'vouch-rl:*')) >= 1, 'rate-limit counters are not in Redis again');
        assert.equal(server!.pid, pid);
        assert.ok(server!.isRunning());
      },
    );

    test(
      'Redis hangs (SIGSTOP): requests are still answered within about a second, /readyz turns degraded; SIGCONT: ready and cached again',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        // Another principal: the scorer has used much of its burst by now.
        const k = await createKey(server!.url, token, ['trust:read'], 'hang');
        const hung = { ...request, amount: 4321 };
        redis!.pause();
        try {
          const started = performance.now();
          const res = await call(server!.url, 'POST', '/api/v1/trust/score', {
            headers: apiKey(k.key),
            body: hung,
            timeoutMs: 10_000,
          });
          const elapsed = performance.now() - started;
          assert.equal(res.status, 200, res.text);
          assert.ok(elapsed < 3000, `a request took ${elapsed.toFixed(0)} ms while Redis hung`);
          const degraded = await waitFor(
            'readyz to report the hung redis',
            async () => {
              const r = await ready();
              return r.body.status === 'degraded' ? r : undefined;
            },
            8000,
            100,
          );
          assert.deepEqual(degraded.body, { status: 'degraded', degraded: ['redis'] });
          // Once noticed, requests no longer wait for Redis at all.
          const quick = performance.now();
          const again = await call(server!.url, 'POST', '/api/v1/trust/score', { headers: apiKey(k.key), body: hung });
          assert.equal(again.status, 200);
          assert.equal(again.body.cached, false);
          assert.ok(performance.now() - quick < 1000, 'requests still wait for the hung Redis');
        } finally {
          redis!.resume();
        }
        await waitFor(
          'readyz to be ready after SIGCONT',
          async () => (await ready()).body.status === 'ready',
          15_000,
          100,
        );
        const one = await call(server!.url, 'POST', '/api/v1/trust/score', {
          headers: apiKey(k.key),
          body: { ...hung, amount: 4322 },
        });
        const two = await call(server!.url, 'POST', '/api/v1/trust/score', {
          headers: apiKey(k.key),
          body: { ...hung, amount: 4322 },
        });
        assert.equal(one.body.cached, false);
        assert.equal(two.body.cached, true);
      },
    );
  },
);

// ---------------------------------------------------------------------------------------------

/** Posts batches of unique events from `clients` concurrent loops until told to stop; returns what each batch got. */
function ingestionLoad(base: string, token: string, tag: string, clients: number, batchSize: number) {
  let stopping = false;
  const batches: { ids: string[]; entities: string[]; acknowledged: boolean }[] = [];
  const loops = Array.from({ length: clients }, async (_, c) => {
    for (let n = 0; !stopping; n++) {
      const events = Array.from({ length: batchSize }, (_, i) => ({
        event_id: `${tag}-${c}-${n}-${i}`,
        type: 'trade.completed',
        entity_id: hash(`${tag}-entity-${c}-${i % 4}`),
        occurred_at: new Date(Date.now() - 3_600_000 - i * 1000).toISOString(),
        amount: 10 + i,
        currency: 'USD',
        counterparty_id: hash(`${tag}-cp-${i % 7}`),
      }));
      const batch = {
        ids: events.map((e) => e.event_id),
        entities: [...new Set(events.map((e) => e.entity_id))],
        acknowledged: false,
      };
      batches.push(batch);
      try {
        const res = await call(base, 'POST', '/api/v1/trust/events', {
          headers: bearer(token),
          body: { events },
          timeoutMs: 20_000,
        });
        if (res.status === 200 && res.body.accepted === batchSize) batch.acknowledged = true;
        else if (res.status !== 200) throw new Error(`unexpected ${res.status}: ${res.text}`);
      } catch {
        // The server was killed under this batch (or refuses connections now): its fate is unknown.
        return;
      }
    }
  });
  return {
    batches,
    acknowledged: () => batches.filter((b) => b.acknowledged).length,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** kill -9 mid-ingestion, restart on the same store, and check that nothing acknowledged is lost. */
async function killDuringIngestion(databaseUrl: string, tag: string): Promise<void> {
  let server: ServerProcess | undefined = await startServer({ env: { VOUCH_DATABASE_URL: databaseUrl } });
  let store: Store | undefined;
  try {
    const token = await adminToken(server.url);
    const load = ingestionLoad(server.url, token, tag, 4, 50);
    // Let a good number of batches through, then kill it while others are in flight.
    await waitFor('acknowledged batches', () => load.acknowledged() >= 8, 30_000, 10);
    await sleep(Math.random() * 50);
    const exit = await server.kill();
    assert.equal(exit.signal, 'SIGKILL');
    await load.stop();
    const acknowledged = load.batches.filter((b) => b.acknowledged);
    const unknown = load.batches.filter((b) => !b.acknowledged);
    assert.ok(acknowledged.length >= 8);

    server = await startServer({ env: { VOUCH_DATABASE_URL: databaseUrl } });
    store = openStore(databaseUrl);
    const present = new Set<string>();
    const ids = load.batches.flatMap((b) => b.ids);
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await store.db
        .selectFrom('events')
        .select('event_id')
        .where('event_id', 'in', ids.slice(i, i + 500))
        .execute();
      for (const r of rows) present.add(r.event_id);
    }
    const lost = acknowledged.flatMap((b) => b.ids.filter((id) => !present.has(id)));
    assert.deepEqual(lost, [], `${lost.length} acknowledged events lost`);
    // A batch is all or nothing, acknowledged or not.
    for (const b of unknown) {
      const stored = b.ids.filter((id) => present.has(id)).length;
      assert.ok(
        stored === 0 || stored === b.ids.length,
        `a batch cut in the middle was half stored (${stored}/${b.ids.length})`,
      );
    }
    // The aggregates agree with the raw events: no batch applied to one and not the other.
    const entities = [...new Set(load.batches.flatMap((b) => b.entities))];
    const counts = await store.db
      .selectFrom('events')
      .select(['entity_id', store.db.fn.countAll<number>().as('n')])
      .where('entity_id', 'in', entities)
      .groupBy('entity_id')
      .execute();
    const token2 = await adminToken(server.url);
    for (const { entity_id: id, n } of counts) {
      const res = await call(server.url, 'GET', `/api/v1/trust/entities/${id}`, { headers: bearer(token2) });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.trades_completed, Number(n), `entity aggregates disagree with its stored events`);
    }
    console.log(
      `# kill -9 [${tag}]: ${acknowledged.length} acknowledged batches (${acknowledged.length * 50} events) all present; ${unknown.length} in flight at the kill, ${unknown.filter((b) => b.ids.every((id) => present.has(id))).length} of them committed`,
    );
  } finally {
    await store?.close();
    await server?.kill();
  }
}

describe('kill -9 under event-ingestion load [sqlite]', () => {
  let dir: string;
  before(() => {
    dir = tempDir('vouch-kill9-');
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  test(
    'every event of every acknowledged batch is in the store after a restart [sqlite]',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await killDuringIngestion(`sqlite:${join(dir, 'vouch.db')}`, `k9s${randomBytes(3).toString('hex')}`);
    },
  );
});

// ---------------------------------------------------------------------------------------------

describe('PostgreSQL faults (a throwaway cluster)', { skip: postgresUnavailable() ?? false }, () => {
  let cluster: PostgresCluster | undefined;

  before(async () => {
    cluster = await startPostgres();
  });
  after(async () => {
    await cluster?.destroy();
  });

  test(
    'every event of every acknowledged batch is in the store after kill -9 and a restart [postgres]',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const admin = new pg.Client({ connectionString: cluster!.url });
      await admin.connect();
      await admin.query('create database kill9');
      await admin.end();
      await killDuringIngestion(cluster!.url.replace(/\/postgres$/, '/kill9'), `k9p${randomBytes(3).toString('hex')}`);
    },
  );

  test(
    'PostgreSQL restarted: requests meanwhile get 503 unavailable (never a 500 or a wrong 200) and succeed again with no process restart',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const admin = new pg.Client({ connectionString: cluster!.url });
      await admin.connect();
      await admin.query('create database restart');
      await admin.end();
      const databaseUrl = cluster!.url.replace(/\/postgres$/, '/restart');
      const server = await startServer({ env: { VOUCH_DATABASE_URL: databaseUrl } });
      const other = openStore(databaseUrl);
      try {
        const base = server.url;
        const token = await adminToken(base);
        const used = await createKey(base, token, ['trust:read', 'trust:write', 'keys:read']);
        const unused = await createKey(base, token, ['trust:read']);
        const entity = hash(`pg-restart-${randomBytes(4).toString('hex')}`);
        assert.equal(
          (
            await call(base, 'POST', '/api/v1/trust/events', {
              headers: apiKey(used.key),
              body: { events: tradeHistory(entity, 15, 30) },
            })
          ).status,
          200,
        );
        const request = { entity_id: entity, amount: 75, currency: 'USD' };
        const first = await call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(used.key), body: request });
        assert.equal(first.status, 200);
        const expected = first.body.score as number;
        assert.equal(
          (await call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(used.key), body: request })).body.cached,
          true,
        );

        // Clients keep scoring all through the outage; every answer must be right or a 503.
        let hammering = true;
        const seen = new Map<number, number>();
        const wrong: string[] = [];
        const hammer = (async () => {
          while (hammering) {
            try {
              const res = await call(base, 'POST', '/api/v1/trust/score', {
                headers: apiKey(used.key),
                body: request,
                timeoutMs: 15_000,
              });
              seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
              if (res.status === 200 && res.body.score !== expected)
                wrong.push(`200 with score ${String(res.body.score)} (expected ${expected})`);
              else if (res.status === 503) expectProblem(res, 503, 'unavailable');
              else if (res.status !== 200) wrong.push(`${res.status}: ${res.text}`);
            } catch (err) {
              wrong.push(`network error: ${(err as Error).message}`);
            }
            await sleep(20);
          }
        })();

        try {
          await cluster!.stop();
          try {
            const outage: [string, Promise<Reply>][] = [
              [
                'score (cached before)',
                call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(used.key), body: request }),
              ],
              [
                'score (new entity)',
                call(base, 'POST', '/api/v1/trust/score', {
                  headers: apiKey(used.key),
                  body: { ...request, entity_id: hash('never-seen') },
                }),
              ],
              [
                'events',
                call(base, 'POST', '/api/v1/trust/events', {
                  headers: apiKey(used.key),
                  body: { events: [event('chargeback', entity)] },
                }),
              ],
              ['entity', call(base, 'GET', `/api/v1/trust/entities/${entity}`, { headers: apiKey(used.key) })],
              ['keys list', call(base, 'GET', '/api/v1/keys', { headers: apiKey(used.key) })],
              // A key this process has not seen yet cannot be checked: 503, not a 401.
              ['unseen key', call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(unused.key), body: request })],
              [
                'token',
                call(base, 'POST', '/api/v1/auth/token', {
                  body: { client_id: 'scale-admin', client_secret: 'scale-admin-secret-0123456789' },
                }),
              ],
              ['readyz', call(base, 'GET', '/readyz')],
            ];
            for (const [what, pending] of outage) {
              const res = await pending;
              assert.equal(res.status, 503, `${what}: ${res.status} ${res.text}`);
              expectProblem(res, 503, 'unavailable');
              if (what !== 'readyz') assert.equal(res.headers.get('retry-after'), '1', what);
            }
            assert.equal((await call(base, 'GET', '/healthz')).status, 200, 'the process itself is alive');
          } finally {
            await cluster!.start();
          }

          await waitFor(
            'scoring to succeed again',
            async () =>
              (await call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(used.key), body: request })).status ===
              200,
            30_000,
            100,
          );
        } finally {
          hammering = false;
          await hammer;
        }
        assert.deepEqual(wrong, []);
        assert.ok((seen.get(503) ?? 0) > 0, `the hammer never saw the outage: ${JSON.stringify([...seen])}`);
        assert.equal((await call(base, 'GET', '/readyz')).status, 200);
        assert.ok(server.isRunning());

        // Everything works again, on the same process: writes, fresh scores, the unseen key...
        assert.equal(
          (
            await call(base, 'POST', '/api/v1/trust/events', {
              headers: apiKey(used.key),
              body: { events: [event('chargeback', entity, {}, 60_000)] },
            })
          ).status,
          200,
        );
        const after = await call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(used.key), body: request });
        assert.equal(after.status, 200);
        assert.equal(after.body.cached, false);
        assert.ok((after.body.score as number) > expected);
        assert.equal(
          (await call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(unused.key), body: request })).status,
          200,
        );

        // ...and revocations by another process still arrive: the LISTEN connection came back.
        const probe = new pg.Client({ connectionString: databaseUrl });
        await probe.connect();
        try {
          await waitFor(
            'the server to LISTEN again',
            async () => {
              const { rows } = await probe.query<{ n: number }>(
                "select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'LISTEN%' and pid <> pg_backend_pid()",
              );
              return rows[0]!.n >= 1;
            },
            15_000,
            100,
          );
        } finally {
          await probe.end();
        }
        const feed = new ChangeFeed(other);
        await deactivateKey(other.db, feed, unused.id, undefined);
        const started = performance.now();
        let res = await call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(unused.key), body: request });
        const atOnce = res.status === 401;
        while (res.status !== 401 && performance.now() - started < 5000) {
          await sleep(10);
          res = await call(base, 'POST', '/api/v1/trust/score', { headers: apiKey(unused.key), body: request });
        }
        console.log(
          `# revocation from another process after the PostgreSQL restart: ${atOnce ? 'refused on the very next request' : `refused after ${(performance.now() - started).toFixed(0)} ms`}`,
        );
        expectProblem(res, 401, 'unauthenticated');
        assert.ok(atOnce, 'the revocation did not apply to the very next request');
      } finally {
        await other.close();
        await server.kill();
      }
    },
  );
});

test(
  'store errors that mean "unreachable for now" are 503 unavailable; others stay 500',
  { timeout: TEST_TIMEOUT_MS },
  () => {
    const err = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
    for (const e of [
      err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      err('getaddrinfo EAI_AGAIN postgres', 'EAI_AGAIN'),
      err('connect EHOSTUNREACH 10.0.0.5:5432', 'EHOSTUNREACH'),
      err('sorry, too many clients already', '53300'),
      err('terminating connection due to administrator command', '57P01'),
      err('the database system is starting up', '57P03'),
      err('Connection terminated unexpectedly'),
      err('timeout exceeded when trying to connect'),
    ])
      assert.equal(isStoreUnavailable(e), true, e.message);
    for (const e of [
      err('syntax error at or near "selec"', '42601'),
      err('duplicate key value violates unique constraint', '23505'),
      new TypeError('x is undefined'),
    ]) {
      assert.equal(isStoreUnavailable(e), false, e.message);
    }
  },
);

// ---------------------------------------------------------------------------------------------

describe('SIGTERM drains in-flight requests', () => {
  let dir: string;
  let server: ServerProcess | undefined;
  before(async () => {
    dir = tempDir('vouch-sigterm-');
    server = await startServer({ env: { VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}` } });
  });
  after(async () => {
    await server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    'SIGTERM during three 1000-event ingests: they complete with 200, new connections are refused meanwhile, exit code 0',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const base = server!.url;
      const token = await adminToken(base);
      const tag = `drain${randomBytes(3).toString('hex')}`;
      const batch = (n: number) =>
        Array.from({ length: 1000 }, (_, i) => ({
          event_id: `${tag}-${n}-${i}`,
          type: 'trade.completed',
          entity_id: hash(`${tag}-${n}-${i % 50}`),
          occurred_at: new Date(Date.now() - 7_200_000 + i).toISOString(),
          amount: 5 + (i % 90),
          currency: 'EUR',
        }));

      // Three 1000-event batches whose bodies are still arriving when SIGTERM comes: certainly in
      // flight (headers read and authenticated, handler waiting for the body).
      const inFlight = [0, 1, 2].map((n) =>
        halfSentRequest(server!.port, '/api/v1/trust/events', bearer(token), { events: batch(n) }),
      );
      await sleep(300);
      const signalledAt = performance.now();
      server!.signal('SIGTERM');

      // The listening socket closes at once, while the requests are still open.
      await waitFor('new connections to be refused', () => connectionRefused(server!.port, 1000), 5000, 20);
      assert.ok(server!.isRunning(), 'the server exited before its in-flight requests finished');
      for (const request of inFlight) request.finish();

      for (const request of inFlight) {
        const done = await request.response;
        assert.equal(done.status, 200, done.text);
        assert.deepEqual(JSON.parse(done.text), { accepted: 1000, duplicates: 0 });
        assert.ok(done.at > signalledAt);
      }
      const exit = await server!.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, server!.output());
      assert.ok(await connectionRefused(server!.port));

      const store = openStore(`sqlite:${join(dir, 'vouch.db')}`);
      try {
        const row = await store.db
          .selectFrom('events')
          .select(store.db.fn.countAll<number>().as('n'))
          .where('event_id', 'like', `${tag}-%`)
          .executeTakeFirstOrThrow();
        assert.equal(Number(row.n), 3000);
      } finally {
        await store.close();
      }
    },
  );
});
