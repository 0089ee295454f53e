// The score cache (issue 8, items 2, 6 and 9): keyed by a fixed-size digest of what the decision
// depends on and of the caller, bounded in bytes, swept of expired entries; a hit is only ever the
// caller's own audited decision, and the shared cache (Redis) cannot be used to forge one.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { describeEachBackend, backends, startApp, bearer, type TestContext } from '../helpers/app.ts';
import { event, hash, postEvents, score, tradeHistory } from '../helpers/trust.ts';
import { hasBinary, startRedis, type RedisProcess } from '../helpers/processes.ts';
import { ScoreCache, cacheKey } from '../../src/trust/cache.ts';
import { buildApp } from '../../src/app.ts';

describe('score cache: keys and bounds', () => {
  test('the key is a fixed-size digest of what the decision depends on (unknown context members included) and names the caller', () => {
    const base = {
      principalId: 'client-a',
      environment: 'live',
      policyVersion: 'v1',
      rulesRevision: '0',
      entityId: hash('k'),
      amount: 10,
      currency: 'USD',
      context: {},
    };
    const small = cacheKey(base);
    const big = cacheKey({ ...base, context: { note: 'x'.repeat(60_000), other: { deep: 'y'.repeat(1000) } } });
    assert.match(small, /^[A-Za-z0-9_-]{43}$/);
    assert.match(big, /^[A-Za-z0-9_-]{43}$/);
    // A rule may read any context member (docs/rules.md), so unknown members split entries too, in any order.
    assert.notEqual(big, small, 'unknown members are read by rules');
    assert.equal(
      cacheKey({ ...base, context: { b: 1, a: { y: 2, x: 1 } } }),
      cacheKey({ ...base, context: { a: { x: 1, y: 2 }, b: 1 } }),
    );
    assert.notEqual(
      cacheKey({ ...base, context: { device_os: 'ios' } }),
      cacheKey({ ...base, context: { device_os: 'android' } }),
    );
    assert.notEqual(cacheKey({ ...base, principalId: 'client-b' }), small, 'another caller, another entry');
    assert.notEqual(cacheKey({ ...base, environment: 'test' }), small, 'another environment, another entry');
    assert.notEqual(cacheKey({ ...base, context: { payment_method: 'card' } }), small);
    assert.notEqual(cacheKey({ ...base, context: { trade_id: 't-1' } }), small);
    assert.notEqual(cacheKey({ ...base, amount: 11 }), small);
    assert.notEqual(cacheKey({ ...base, policyVersion: 'v2' }), small);
    assert.notEqual(cacheKey({ ...base, rulesRevision: '1' }), small, 'a rule or list change, another entry');
    const l1 = { type: 'device' as const, hash: hash('d1') };
    const l2 = { type: 'phone' as const, hash: hash('p1') };
    assert.equal(
      cacheKey({ ...base, context: { linked_identifiers: [l1, l2] } }),
      cacheKey({ ...base, context: { linked_identifiers: [l2, l1, l2] } }),
    );
  });

  test('the cache is bounded by bytes as well as by entries', () => {
    const cache = new ScoreCache(30, { maxEntries: 10_000, maxBytes: 200_000 });
    for (let i = 0; i < 500; i++)
      cache.set(`k${i}`, {
        json: JSON.stringify({ pad: 'z'.repeat(2000) }),
        entityId: 'e',
        riskLevel: 'low',
        principalId: 'p',
        state: '1.0',
        generation: 0,
      });
    assert.ok(cache.bytes <= 200_000, `${cache.bytes} bytes held`);
    assert.ok(cache.size < 100, `${cache.size} entries of ~4 KB in 200 KB`);
    assert.ok(cache.get('k499'), 'the newest entry is kept');
  });

  test('expired entries are purged without being read again', (t) => {
    // A fake clock rather than a real wait: the sweep is a setInterval and lru-cache ages entries
    // by performance.now(), so both are driven by hand.
    let clock = performance.now();
    t.mock.method(performance, 'now', () => clock);
    t.mock.timers.enable({ apis: ['setInterval', 'setTimeout'] });
    const advance = (ms: number) => {
      clock += ms;
      t.mock.timers.tick(ms);
    };
    const cache = new ScoreCache(1);
    for (let i = 0; i < 50; i++)
      cache.set(`k${i}`, {
        json: JSON.stringify({ n: i }),
        entityId: 'e',
        riskLevel: 'low',
        principalId: 'p',
        state: '1.0',
        generation: 0,
      });
    assert.equal(cache.size, 50);
    advance(900);
    assert.equal(cache.size, 50, 'entries within their TTL were dropped');
    advance(1200);
    assert.equal(cache.size, 0, 'stale entries still held');
  });
});

describeEachBackend('score cache over HTTP', (ctx) => {
  test('large unknown context members: equal ones (in any order) share one entry, different ones do not (a rule may read them)', async () => {
    const token = await ctx().token();
    const id = hash('unknown-members');
    const first = (
      await score(ctx(), token, {
        entity_id: id,
        amount: 10,
        currency: 'USD',
        context: { note: 'a'.repeat(1_000), device: { os: 'ios', v: 17 } },
      })
    ).json();
    const second = (
      await score(ctx(), token, {
        entity_id: id,
        amount: 10,
        currency: 'USD',
        context: { device: { v: 17, os: 'ios' }, note: 'a'.repeat(1_000) },
      })
    ).json();
    const third = (
      await score(ctx(), token, {
        entity_id: id,
        amount: 10,
        currency: 'USD',
        context: { note: 'b'.repeat(1_000), device: { os: 'ios', v: 17 } },
      })
    ).json();
    assert.equal(first.cached, false);
    assert.equal(second.cached, true);
    assert.equal(second.decision_id, first.decision_id);
    assert.equal(third.cached, false);
    assert.notEqual(third.decision_id, first.decision_id);
  });

  test('a hit answers the stored decision as JSON text: every member of the miss, cached: true, under the JSON content type', async () => {
    const token = await ctx().token();
    const request = {
      entity_id: hash('raw-hit'),
      amount: 25,
      currency: 'EUR',
      context: { payment_method: 'card', side: 'buy' },
    };
    const miss = await score(ctx(), token, request);
    const hit = await score(ctx(), token, request);
    assert.equal(hit.statusCode, 200);
    assert.match(String(hit.headers['content-type']), /^application\/json; charset=utf-8$/);
    assert.deepEqual(hit.json(), { ...miss.json(), cached: true });
  });

  test("clients never share entries: B's identical request is its own decision (cached: false), audited with B as principal", async () => {
    const a = await ctx().client(['trust:read', 'audit:read']);
    const b = await ctx().client(['trust:read', 'audit:read']);
    const tokenFor = async (c: { id: string; secret: string }) =>
      (
        await ctx().inject({
          method: 'POST',
          url: '/api/v1/auth/token',
          payload: { client_id: c.id, client_secret: c.secret },
        })
      ).json().access_token as string;
    const [ta, tb] = [await tokenFor(a), await tokenFor(b)];
    const req = { entity_id: hash('shared-request'), amount: 77, currency: 'EUR', context: { payment_method: 'card' } };
    const fromA = (await score(ctx(), ta, req)).json();
    const fromB = (await score(ctx(), tb, req)).json();
    assert.equal(fromB.cached, false, "B was served A's decision");
    assert.notEqual(fromB.decision_id, fromA.decision_id);
    const audited = await ctx().inject({
      method: 'GET',
      url: `/api/v1/decisions/${fromB.decision_id}`,
      headers: bearer(tb),
    });
    assert.equal(audited.statusCode, 200, audited.body);
    assert.equal(audited.json().principal_id, b.id);
    // each client still hits its own entry
    const againB = (await score(ctx(), tb, req)).json();
    assert.equal(againB.cached, true);
    assert.equal(againB.decision_id, fromB.decision_id);
    assert.equal((await score(ctx(), ta, req)).json().decision_id, fromA.decision_id);
  });
});

// Two instances over one store and one (throwaway) Redis.
for (const backend of backends()) {
  describe(
    `shared score cache (Redis) [${backend}]`,
    { skip: hasBinary('redis-server') ? false : 'redis-server not found' },
    () => {
      let redis: RedisProcess | undefined;
      let client: Redis | undefined;
      let one: (TestContext & { close(): Promise<void> }) | undefined;
      let two: FastifyInstance | undefined;

      before(async () => {
        redis = await startRedis();
        client = new Redis(redis.url);
        one = await startApp(backend, { redisUrl: redis.url });
        two = await buildApp({ config: one.config, store: one.store, logger: false });
        await two.ready();
      });

      after(async () => {
        await two?.close();
        await one?.close();
        client?.disconnect();
        await redis?.close();
      });

      const onTwo = (token: string, body: Record<string, unknown>) =>
        two!.inject({ method: 'POST', url: '/api/v1/trust/score', headers: bearer(token), payload: body });
      // The shared cache is best effort: an instance whose Redis connection is not ready yet (or was
      // just dropped by the health check on a stalled loop) scores afresh, and the pointer is written
      // after the response. What these tests check is what is served once the pointer is there, so
      // they wait for both, rather than racing the connection and the write.
      const until = async (what: string, check: () => Promise<boolean>) => {
        for (let i = 0; i < 200; i++) {
          if (await check()) return;
          await new Promise((r) => setTimeout(r, 25));
        }
        assert.fail(`${what} did not happen within 5 s`);
      };
      const redisReady = (app: { inject: TestContext['inject'] }) =>
        until(
          "the instance's Redis connection",
          async () => (await app.inject({ method: 'GET', url: '/readyz' })).json().status === 'ready',
        );
      const pointers = async () => (await client!.keys('vouch:score:*')).length;
      const overwriteAll = async (value: string) => {
        const keys = await client!.keys('vouch:score:*');
        assert.ok(keys.length > 0, 'no score entry in Redis');
        for (const k of keys) await client!.set(k, value, 'PX', 30_000);
      };

      test('a shared entry serves the same client on the other instance; never another client', async () => {
        const ta = await one!.token(['trust:read', 'trust:write']);
        const tb = await one!.token(['trust:read']);
        const id = hash(`redis-shared-${backend}`);
        await postEvents(one!, ta, tradeHistory(id, 10, 30));
        await redisReady(one!);
        await redisReady(two!);
        const req = { entity_id: id, amount: 50, currency: 'USD' };
        const before = await pointers();
        const fromA = (await score(one!, ta, req)).json();
        await until('the pointer write', async () => (await pointers()) > before);
        const onB = (await onTwo(ta, req)).json();
        assert.equal(onB.cached, true, 'the shared cache is used');
        assert.equal(onB.decision_id, fromA.decision_id);
        const otherClient = (await onTwo(tb, req)).json();
        assert.equal(otherClient.cached, false, "another client got A's decision from Redis");
        assert.notEqual(otherClient.decision_id, fromA.decision_id);
      });

      test("test mode: a Redis pointer from a test key's entry to a live decision is never served, even one carrying its principal and state", async () => {
        const admin = await one!.token();
        const created = await one!.inject({
          method: 'POST',
          url: '/api/v1/keys',
          headers: bearer(admin),
          payload: { name: 'redis-test-mode', environment: 'test', scopes: ['trust:read', 'trust:write'] },
        });
        const testKey = { 'x-api-key': created.json().key as string };
        const id = hash(`redis-env-${backend}`);
        const history = tradeHistory(id, 10, 30);
        await postEvents(one!, admin, history);
        assert.equal(
          (
            await one!.inject({
              method: 'POST',
              url: '/api/v1/trust/events',
              headers: testKey,
              payload: { events: history },
            })
          ).statusCode,
          200,
        );
        const req = { entity_id: id, amount: 55, currency: 'USD' };
        const testDecision = (
          await one!.inject({ method: 'POST', url: '/api/v1/trust/score', headers: testKey, payload: req })
        ).json();
        const liveDecision = (await score(one!, admin, req)).json();
        const db = one!.store.db;
        const own = await db
          .selectFrom('decisions')
          .select(['principal_id', 'cache_key', 'cache_state'])
          .where('id', '=', testDecision.decision_id)
          .executeTakeFirstOrThrow();
        // The live decision made to look like the test key's own: only its environment tells them apart.
        await db
          .updateTable('decisions')
          .set({ principal_id: own.principal_id, cache_key: own.cache_key, cache_state: own.cache_state })
          .where('id', '=', liveDecision.decision_id)
          .execute();
        await client!.set(`vouch:score:${own.cache_key}`, liveDecision.decision_id, 'PX', 30_000);
        const got = (
          await two!.inject({ method: 'POST', url: '/api/v1/trust/score', headers: testKey, payload: req })
        ).json();
        assert.notEqual(got.decision_id, liveDecision.decision_id, 'a live decision was served to a test key');
        assert.equal(got.cached, false);
      });

      test("forged or re-pointed Redis entries are never served: not a made-up body, not another client's or another request's decision", async () => {
        const ta = await one!.token(['trust:read', 'trust:write']);
        const tb = await one!.token(['trust:read']);
        const id = hash(`redis-forged-${backend}`);
        await postEvents(one!, ta, [...tradeHistory(id, 10, 30), event('chargeback', id)]);
        const version = Number(
          (
            await one!.store.db
              .selectFrom('entities')
              .select('version')
              .where('entity_id', '=', id)
              .executeTakeFirstOrThrow()
          ).version,
        );

        // 1. a made-up body in the old entry format, with the entity's current version
        const real = (await score(one!, ta, { entity_id: id, amount: 60, currency: 'USD' })).json();
        const forgedId = `dec_${'F'.repeat(26)}`;
        const forged = { ...real, score: 1, risk_level: 'low', signals: [], decision_id: forgedId };
        delete forged.cached;
        await overwriteAll(JSON.stringify({ body: forged, version, state: `${version}.0`, principalId: 'x' }));
        const got1 = (await onTwo(ta, { entity_id: id, amount: 60, currency: 'USD' })).json();
        assert.notEqual(got1.decision_id, forgedId, 'a forged Redis entry was served');
        assert.equal(got1.score, real.score);

        // 2. pointed at another client's decision for the same request
        const mine = (await score(one!, ta, { entity_id: id, amount: 70, currency: 'USD' })).json();
        const theirs = (await score(one!, tb, { entity_id: id, amount: 70, currency: 'USD' })).json();
        await overwriteAll(theirs.decision_id);
        await overwriteAll(JSON.stringify({ body: theirs, version }));
        const got2 = (await onTwo(ta, { entity_id: id, amount: 70, currency: 'USD' })).json();
        assert.notEqual(got2.decision_id, theirs.decision_id, "another client's decision was served");
        await overwriteAll(theirs.decision_id);
        const got2b = (await onTwo(ta, { entity_id: id, amount: 70, currency: 'USD' })).json();
        assert.notEqual(got2b.decision_id, theirs.decision_id, "another client's decision was served");
        assert.ok([mine.decision_id, got2.decision_id].includes(got2b.decision_id) || got2b.cached === false);

        // 3. pointed at the caller's own decision for another amount
        await overwriteAll(mine.decision_id);
        const got3 = (await onTwo(ta, { entity_id: id, amount: 80, currency: 'USD' })).json();
        assert.notEqual(got3.decision_id, mine.decision_id, 'a decision for another request was served');
        assert.equal(got3.cached, false);
      });

      test('a pointer that outlived the TTL (no expiry set by hand) never revives an old decision', async () => {
        const ta = await one!.token(['trust:read', 'trust:write']);
        const id = hash(`redis-old-${backend}`);
        await postEvents(one!, ta, tradeHistory(id, 10, 30));
        const req = { entity_id: id, amount: 90, currency: 'USD' };
        const first = (await score(one!, ta, req)).json();
        // The decision is an hour old as far as its record goes; its pointer is made permanent.
        const row = await one!.store.db
          .selectFrom('decisions')
          .select('result')
          .where('id', '=', first.decision_id)
          .executeTakeFirstOrThrow();
        const aged = { ...JSON.parse(row.result), scored_at: new Date(Date.now() - 3_600_000).toISOString() };
        await one!.store.db
          .updateTable('decisions')
          .set({ result: JSON.stringify(aged) })
          .where('id', '=', first.decision_id)
          .execute();
        const pointerTo = async (decisionId: string) => {
          for (const k of await client!.keys('vouch:score:*')) if ((await client!.get(k)) === decisionId) return k;
          return undefined;
        };
        await until('the pointer write', async () => (await pointerTo(first.decision_id)) !== undefined);
        await client!.persist((await pointerTo(first.decision_id))!);
        await redisReady(two!);
        const got = (await onTwo(ta, req)).json();
        assert.notEqual(got.decision_id, first.decision_id, 'an expired decision was served from a permanent pointer');
        assert.equal(got.cached, false);
      });

      test('a shared entry computed before a new event is not served by the other instance', async () => {
        const ta = await one!.token(['trust:read', 'trust:write']);
        const id = hash(`redis-stale-${backend}`);
        await postEvents(one!, ta, tradeHistory(id, 10, 30));
        const req = { entity_id: id, amount: 90, currency: 'USD' };
        const first = (await score(one!, ta, req)).json();
        await postEvents(one!, ta, [event('chargeback', id, {}, 1000)]);
        const later = (await onTwo(ta, req)).json();
        assert.equal(later.cached, false);
        assert.notEqual(later.decision_id, first.decision_id);
        assert.ok(later.score > first.score);
      });
    },
  );
}
