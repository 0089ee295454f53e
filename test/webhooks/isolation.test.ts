// Endpoint isolation (issue 18): a client's receivers that never answer do not hold up another
// client's delivery; an endpoint that keeps failing is paused (circuit breaker) without losing
// its deliveries; a client has at most 20 webhooks; a failed attempt records only a category.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { backends, bearer, problem } from '../helpers/app.ts';
import { createClient } from '../../src/auth/clients.ts';
import { enqueueWebhookEvent } from '../../src/webhooks/repository.ts';
import { startReceiver, webhookWorld, type WebhookWorld } from './support.ts';

const HOOKS = '/api/v1/webhooks';

/** A TCP server that takes every request and never answers; counts the connections it holds. */
async function blackHole(): Promise<{ url: string; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function operator(
  world: WebhookWorld & { app: import('fastify').FastifyInstance },
  name: string,
): Promise<{ id: string; token: string }> {
  const { client, secret } = await createClient(world.fresh.store.db, {
    name,
    role: 'operator',
    scopes: ['webhooks:read', 'webhooks:write'],
  });
  const res = await world.app.inject({
    method: 'POST',
    url: '/api/v1/auth/token',
    payload: { client_id: client.client_id, client_secret: secret },
  });
  return { id: client.client_id, token: res.json().access_token as string };
}

const until = async (what: string, predicate: () => Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

for (const backend of backends()) {
  test(`20 webhooks on a receiver that never answers do not hold up another client's delivery [${backend}]`, async (t) => {
    // The slow attempts outlive the test: none of them can finish before the fast one.
    const world = await webhookWorld(
      backend,
      {},
      { pollMs: 25, timeoutMs: 120_000, leaseMs: 300_000, retryDelaysMs: [60_000], breakerFailures: 1000 },
    );
    const hole = await blackHole();
    const receiver = await startReceiver();
    t.after(async () => {
      await hole.close();
      await receiver.close();
      await world.close();
    });
    const slow = await operator(world, 'slow tenant');
    const fast = await operator(world, 'fast tenant');
    for (let i = 0; i < 20; i++) {
      const res = await world.app.inject({
        method: 'POST',
        url: HOOKS,
        headers: bearer(slow.token),
        payload: { url: hole.url, events: ['key.deactivated'] },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    assert.equal(
      (
        await world.app.inject({
          method: 'POST',
          url: HOOKS,
          headers: bearer(fast.token),
          payload: { url: receiver.url, events: ['key.deactivated'] },
        })
      ).statusCode,
      201,
    );
    const { db } = world.fresh.store;
    const announce = (owner: string, n: number) =>
      db
        .transaction()
        .execute((trx) =>
          enqueueWebhookEvent(trx, 'live', 'key.deactivated', { key_id: `key-${owner}-${n}` }, { owner }),
        );
    for (let i = 0; i < 3; i++) await announce(slow.id, i);
    // The worker is busy with the slow client's 60 deliveries before the fast one exists.
    await until('the black hole holds requests', async () => hole.open() >= 10);
    await announce(fast.id, 0);
    await receiver.waitFor((r) => r.length >= 1, 10_000);
    const slowHooks = db.selectFrom('webhooks').select('id').where('owner_client_id', '=', slow.id);
    const settled = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', 'in', slowHooks)
      .where('attempts', '>', 0)
      .execute();
    assert.equal(settled.length, 0, 'the fast delivery arrived while every slow one was still unanswered');
    // One client holds at most its share of the worker (VOUCH_WEBHOOK_CLIENT_CONCURRENCY, 16).
    assert.ok(hole.open() <= 16, `the slow client holds ${hole.open()} connections`);
  });

  test(`an endpoint that keeps failing is paused for a cool-down; its deliveries wait, and a manual retry lets one through [${backend}]`, async (t) => {
    const world = await webhookWorld(
      backend,
      {},
      {
        pollMs: 25,
        timeoutMs: 2000,
        leaseMs: 5000,
        retryDelaysMs: [50, 50, 50, 50, 50],
        breakerFailures: 3,
        breakerCooldownMs: 600_000,
        endpointConcurrency: 1,
      },
    );
    const receiver = await startReceiver();
    t.after(async () => {
      await receiver.close();
      await world.close();
    });
    receiver.fallback = { status: 500 };
    const admin = await world.token(world.app);
    const hook = (
      await world.app.inject({
        method: 'POST',
        url: HOOKS,
        headers: bearer(admin),
        payload: { url: receiver.url, events: ['policy.activated'] },
      })
    ).json() as { id: string };
    const { db } = world.fresh.store;
    for (let i = 0; i < 4; i++)
      await db
        .transaction()
        .execute((trx) => enqueueWebhookEvent(trx, 'live', 'policy.activated', { version: `v${i}` }));
    const read = async () =>
      (await world.app.inject({ method: 'GET', url: `${HOOKS}/${hook.id}`, headers: bearer(admin) })).json() as {
        consecutive_failures: number;
        paused_until: string | null;
      };
    await until('the circuit opens', async () => (await read()).paused_until !== null);
    assert.equal(receiver.received.length, 3, 'three failures in a row, then nothing');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(receiver.received.length, 3, 'a paused endpoint is not called');
    const state = await read();
    assert.equal(state.consecutive_failures, 3);
    assert.ok(Date.parse(state.paused_until!) > Date.now());
    const log = (
      await world.app.inject({ method: 'GET', url: `${HOOKS}/${hook.id}/deliveries`, headers: bearer(admin) })
    ).json().data as Array<{ id: string; status: string; attempts: number; last_error: string | null }>;
    assert.equal(log.length, 4);
    assert.deepEqual(
      log.map((d) => d.status),
      ['pending', 'pending', 'pending', 'pending'],
      'nothing is given up while paused',
    );
    assert.equal(
      log.reduce((n, d) => n + d.attempts, 0),
      3,
    );
    assert.ok(log.filter((d) => d.attempts > 0).every((d) => d.last_error === 'http_500'));
    // The receiver is fixed; the operator retries one: it goes now, and its success closes the circuit.
    receiver.fallback = { status: 204 };
    const retry = await world.app.inject({
      method: 'POST',
      url: `${HOOKS}/${hook.id}/deliveries/${log[0]!.id}/retry`,
      headers: bearer(admin),
    });
    assert.equal(retry.statusCode, 202, retry.body);
    await until('every delivery succeeds', async () =>
      (await db.selectFrom('webhook_deliveries').select('status').where('webhook_id', '=', hook.id).execute()).every(
        (d) => d.status === 'succeeded',
      ),
    );
    assert.deepEqual(await read().then((s) => [s.consecutive_failures, s.paused_until]), [0, null]);
  });

  test(`a client has at most 20 webhooks: the 21st is 409 conflict until one is deleted [${backend}]`, async (t) => {
    const world = await webhookWorld(backend);
    t.after(() => world.close());
    const mine = await operator(world, 'busy');
    const other = await operator(world, 'other');
    const create = (token: string) =>
      world.app.inject({
        method: 'POST',
        url: HOOKS,
        headers: bearer(token),
        payload: { url: 'http://127.0.0.1:9/x', events: ['entity.flagged'] },
      });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await create(mine.token);
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id as string);
    }
    const refused = problem(await create(mine.token), 409, 'conflict');
    assert.match(String(refused.detail), /20 webhooks/);
    assert.equal((await create(other.token)).statusCode, 201, 'the cap is per client');
    assert.equal(
      (await world.app.inject({ method: 'DELETE', url: `${HOOKS}/${ids[0]}`, headers: bearer(mine.token) })).statusCode,
      200,
    );
    assert.equal((await create(mine.token)).statusCode, 201);
    const count = await world.fresh.store.db
      .selectFrom('webhooks')
      .select('id')
      .where('owner_client_id', '=', mine.id)
      .execute();
    assert.equal(count.length, 20);
  });

  test(`a failed attempt records a category, never the address or port; name resolution counts towards the timeout [${backend}]`, async (t) => {
    let resolving: 'answer' | 'hang' = 'answer';
    const resolve = async () => {
      if (resolving === 'hang') return new Promise<never>(() => undefined);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const world = await webhookWorld(
      backend,
      {},
      { pollMs: 25, timeoutMs: 300, leaseMs: 5000, retryDelaysMs: [], breakerFailures: 1000, urlPolicy: { resolve } },
    );
    t.after(() => world.close());
    const admin = await world.token(world.app);
    const closed = await blackHole();
    const port = new URL(closed.url).port;
    await closed.close();
    const refusedHook = (
      await world.app.inject({
        method: 'POST',
        url: HOOKS,
        headers: bearer(admin),
        payload: { url: `http://127.0.0.1:${port}/x`, events: ['policy.activated'] },
      })
    ).json() as { id: string };
    const slowDns = (
      await world.app.inject({
        method: 'POST',
        url: HOOKS,
        headers: bearer(admin),
        payload: { url: 'http://hooks.example/x', events: ['policy.activated'] },
      })
    ).json() as { id: string };
    resolving = 'hang';
    await world.fresh.store.db
      .transaction()
      .execute((trx) => enqueueWebhookEvent(trx, 'live', 'policy.activated', { version: 'v1' }));
    const deliveries = async (id: string) =>
      await world.app.inject({ method: 'GET', url: `${HOOKS}/${id}/deliveries`, headers: bearer(admin) });
    await until('both deliveries fail', async () => {
      const all = [
        ...(await deliveries(refusedHook.id)).json().data,
        ...(await deliveries(slowDns.id)).json().data,
      ] as Array<{ status: string }>;
      return all.length === 2 && all.every((d) => d.status === 'failed');
    });
    const refused = await deliveries(refusedHook.id);
    assert.equal(refused.json().data[0].last_error, 'refused');
    assert.ok(!refused.body.includes('127.0.0.1') && !refused.body.includes(`:${port}`), refused.body);
    assert.equal((await deliveries(slowDns.id)).json().data[0].last_error, 'timeout');
  });
}

test('the delivery limits come from VOUCH_WEBHOOK* variables, with defaults; a bad value stops the start', async () => {
  const { loadConfig } = await import('../../src/config/env.ts');
  const { ConfigError } = await import('../../src/config/env-values.ts');
  assert.deepEqual(loadConfig({}).webhooks, {
    maxPerClient: 20,
    concurrency: 64,
    endpointConcurrency: 2,
    clientConcurrency: 16,
    breakerFailures: 5,
    breakerCooldownMs: 60_000,
  });
  const set = loadConfig({
    VOUCH_WEBHOOKS_PER_CLIENT: '5',
    VOUCH_WEBHOOK_CONCURRENCY: '8',
    VOUCH_WEBHOOK_ENDPOINT_CONCURRENCY: '1',
    VOUCH_WEBHOOK_CLIENT_CONCURRENCY: '4',
    VOUCH_WEBHOOK_BREAKER_FAILURES: '3',
    VOUCH_WEBHOOK_BREAKER_COOLDOWN_SECONDS: '30',
  }).webhooks;
  assert.deepEqual(set, {
    maxPerClient: 5,
    concurrency: 8,
    endpointConcurrency: 1,
    clientConcurrency: 4,
    breakerFailures: 3,
    breakerCooldownMs: 30_000,
  });
  assert.throws(() => loadConfig({ VOUCH_WEBHOOK_ENDPOINT_CONCURRENCY: '0' }), ConfigError);
  assert.throws(() => loadConfig({ VOUCH_WEBHOOKS_PER_CLIENT: 'many' }), ConfigError);
});
