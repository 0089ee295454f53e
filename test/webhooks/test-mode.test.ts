// Webhooks in test mode (docs/api.md, "Integration"): a subscription belongs to the environment of the key that
// created it, is visible only to principals of that environment (admins included), and receives
// only that environment's events. Crossing is checked in both directions, with a real receiver.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { backends, bearer, problem } from '../helpers/app.ts';
import { SCOPES } from '../../src/lib/principal.ts';
import { newId } from '../../src/lib/ids.ts';
import { startReceiver, webhookWorld, type Receiver, type WebhookWorld } from './support.ts';

const HOOKS = '/api/v1/webhooks';
const ENVS = ['live', 'test'] as const;
type Env = (typeof ENVS)[number];
const other = (env: Env): Env => (env === 'live' ? 'test' : 'live');

/** A score request that the default policy rates critical with no history (young account, card, cross-border). */
const riskyScore = (entity: string) => ({
  entity_id: entity,
  amount: 5000,
  currency: 'USD',
  context: {
    payment_method: 'card',
    country: 'DE',
    counterparty_country: 'NG',
    counterparty_id: `cp-${entity}`,
    account_created_at: new Date(Date.now() - 86_400_000).toISOString(),
  },
});

for (const backend of backends()) {
  test(`webhooks in test mode [${backend}]`, async (t) => {
    let world: WebhookWorld & { app: FastifyInstance };
    const key: Record<Env, string> = { live: '', test: '' };
    const rx = {} as Record<Env, Receiver>;
    const call = (env: Env, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
      world.app.inject({ method, url, headers: { 'x-api-key': key[env] }, ...(payload ? { payload } : {}) });
    const subscribe = async (env: Env, events: string[]) => {
      const res = await call(env, 'POST', HOOKS, { url: rx[env].url, events });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string; environment: string };
    };
    const bodies = (env: Env) =>
      rx[env].received.map(
        (r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> } & Record<string, unknown>,
      );
    const settle = () => new Promise((r) => setTimeout(r, 300));

    before(async () => {
      world = await webhookWorld(backend);
      const admin = await world.token(world.app);
      for (const env of ENVS) {
        // Admin keys: the role that sees every client's webhooks still sees one environment only.
        const res = await world.app.inject({
          method: 'POST',
          url: '/api/v1/keys',
          headers: bearer(admin),
          payload: { name: `wh-${env}`, scopes: [...SCOPES], role: 'admin', environment: env },
        });
        assert.equal(res.statusCode, 201, res.body);
        key[env] = res.json().key as string;
      }
    });
    after(async () => {
      await world.close();
    });
    t.beforeEach(async () => {
      for (const env of ENVS) rx[env] = await startReceiver();
    });
    t.afterEach(async () => {
      for (const env of ENVS) {
        for (const w of (await call(env, 'GET', HOOKS)).json().data as Array<{ id: string }>)
          await call(env, 'DELETE', `${HOOKS}/${w.id}`);
        await rx[env].close();
      }
    });

    await t.test(
      "a subscription takes its creator's environment; list and get show only the caller's environment",
      async () => {
        const hooks = {
          live: await subscribe('live', ['key.deactivated']),
          test: await subscribe('test', ['key.deactivated']),
        };
        for (const env of ENVS) {
          assert.equal(hooks[env].environment, env);
          const list = await call(env, 'GET', HOOKS);
          assert.equal(list.statusCode, 200);
          assert.deepEqual(
            (list.json().data as Array<{ id: string }>).map((w) => w.id),
            [hooks[env].id],
          );
          const own = await call(env, 'GET', `${HOOKS}/${hooks[env].id}`);
          assert.equal(own.statusCode, 200);
          assert.equal(own.json().environment, env);
        }
      },
    );

    for (const env of ENVS) {
      await t.test(
        `a ${other(env)} webhook is 404 to a ${env} admin key: get, deliveries, retry, delete; it survives`,
        async () => {
          const foreign = await subscribe(other(env), ['decision.high_risk']);
          assert.equal(
            (await call(other(env), 'POST', '/api/v1/trust/score', riskyScore(`wh-404-${env}-${backend}`))).statusCode,
            200,
          );
          await rx[other(env)].waitFor((r) => r.length >= 1);
          const delivery = (
            (await call(other(env), 'GET', `${HOOKS}/${foreign.id}/deliveries`)).json().data as Array<{ id: string }>
          )[0]!;
          problem(await call(env, 'GET', `${HOOKS}/${foreign.id}`), 404, 'not_found');
          problem(await call(env, 'GET', `${HOOKS}/${foreign.id}/deliveries`), 404, 'not_found');
          problem(await call(env, 'POST', `${HOOKS}/${foreign.id}/deliveries/${delivery.id}/retry`), 404, 'not_found');
          problem(await call(env, 'DELETE', `${HOOKS}/${foreign.id}`), 404, 'not_found');
          assert.equal((await call(env, 'GET', HOOKS)).json().data.length, 0);
          await settle();
          assert.equal(rx[other(env)].received.length, 1, 'the refused retry sent nothing');
          assert.equal((await call(other(env), 'GET', `${HOOKS}/${foreign.id}`)).statusCode, 200);
        },
      );
    }

    for (const env of ENVS) {
      await t.test(`a ${env} score at high risk is delivered to the ${env} webhook only`, async () => {
        const hooks = {
          live: await subscribe('live', ['decision.high_risk']),
          test: await subscribe('test', ['decision.high_risk']),
        };
        const entity = `wh-risky-${env}-${backend}`;
        const score = await call(env, 'POST', '/api/v1/trust/score', riskyScore(entity));
        assert.equal(score.statusCode, 200, score.body);
        assert.ok(['high', 'critical'].includes(score.json().risk_level), score.body);
        await rx[env].waitFor((r) => r.length >= 1);
        await settle();
        assert.equal(rx[env].received.length, 1);
        assert.equal(rx[other(env)].received.length, 0, `the ${other(env)} endpoint got a ${env} event`);
        const [body] = bodies(env);
        assert.equal(body!.type, 'decision.high_risk');
        assert.equal(body!.data.decision_id, score.json().decision_id);
        assert.equal(body!.data.entity_id, entity);
        // The Standard Webhooks shape, unchanged in test mode: the endpoint tells the environment.
        assert.deepEqual(Object.keys(body!).sort(), ['data', 'timestamp', 'type']);
        assert.equal((await call(env, 'GET', `${HOOKS}/${hooks[env].id}/deliveries`)).json().data.length, 1);
        assert.equal(
          (await call(other(env), 'GET', `${HOOKS}/${hooks[other(env)].id}/deliveries`)).json().data.length,
          0,
        );
        // Not even queued (the worker would refuse it, but the outbox must not hold it either).
        const queued = await world.fresh.store.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('webhook_id', '=', hooks[other(env)].id)
          .execute();
        assert.equal(queued.length, 0);
      });
    }

    for (const env of ENVS) {
      await t.test(`deactivating a ${env} key announces key.deactivated to the ${env} webhook only`, async () => {
        await subscribe('live', ['key.deactivated']);
        await subscribe('test', ['key.deactivated']);
        const made = await call('live', 'POST', '/api/v1/keys', {
          name: `wh-doomed-${env}`,
          scopes: ['trust:read'],
          environment: env,
        });
        assert.equal(made.statusCode, 201, made.body);
        // A live admin may deactivate a test key; the event follows the key's environment, not the caller's.
        assert.equal((await call('live', 'DELETE', `/api/v1/keys/${made.json().id}`)).statusCode, 200);
        await rx[env].waitFor((r) => r.length >= 1);
        await settle();
        assert.equal(bodies(env)[0]!.data.key_id, made.json().id);
        assert.equal(rx[other(env)].received.length, 0);
      });
    }

    await t.test(
      'the worker refuses a delivery pairing a live webhook with a test event: nothing is sent, the delivery fails',
      async () => {
        const hook = await subscribe('live', ['policy.activated']);
        const { db } = world.fresh.store;
        const now = Date.now();
        const eventId = newId('msg');
        const deliveryId = newId('whd');
        await db
          .insertInto('webhook_events')
          .values({
            id: eventId,
            environment: 'test',
            type: 'policy.activated',
            owner_client_id: null,
            data: '{"version":"sandbox"}',
            created_at: now,
          })
          .execute();
        await db
          .insertInto('webhook_deliveries')
          .values({
            id: deliveryId,
            webhook_id: hook.id,
            event_id: eventId,
            status: 'pending',
            attempts: 0,
            next_attempt_at: now,
            lease_until: 0,
            last_attempt_at: null,
            last_status_code: null,
            last_error: null,
            delivered_at: null,
            created_at: now,
          })
          .execute();
        const deadline = Date.now() + 5000;
        let row = await db
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('id', '=', deliveryId)
          .executeTakeFirstOrThrow();
        while (row.status === 'pending' && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 25));
          row = await db
            .selectFrom('webhook_deliveries')
            .selectAll()
            .where('id', '=', deliveryId)
            .executeTakeFirstOrThrow();
        }
        assert.equal(row.status, 'failed');
        assert.equal(row.last_error, 'invalid_delivery');
        assert.equal(rx.live.received.length, 0);
        // Nor does the live webhook's log list the test event.
        assert.equal((await call('live', 'GET', `${HOOKS}/${hook.id}/deliveries`)).json().data.length, 0);
      },
    );
  });
}
