// Webhook delivery (docs/api.md, "Integration") to a real receiver on loopback: Standard Webhooks signatures
// verified by the `standardwebhooks` package, the facts that announce events, retries after 500s
// and timeouts with the same webhook-id, the delivery log and manual retry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import type { FastifyInstance } from 'fastify';
import { backends, bearer, problem } from '../helpers/app.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { startReceiver, webhookWorld, type Receiver, type WebhookWorld } from './support.ts';

const HOOKS = '/api/v1/webhooks';

for (const backend of backends()) {
  test(`webhook deliveries [${backend}]`, async (t) => {
    let world: WebhookWorld & { app: FastifyInstance };
    let receiver: Receiver;
    let admin: string;
    const subscribe = async (events: string[], url = receiver.url) => {
      const res = await world.app.inject({
        method: 'POST',
        url: HOOKS,
        headers: bearer(admin),
        payload: { url, events },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string; secret: string };
    };
    const deliveries = async (id: string) =>
      (await world.app.inject({ method: 'GET', url: `${HOOKS}/${id}/deliveries`, headers: bearer(admin) })).json()
        .data as Array<Record<string, unknown>>;
    const bodies = () =>
      receiver.received.map(
        (r) => JSON.parse(r.body) as { type: string; timestamp: string; data: Record<string, unknown> },
      );

    before(async () => {
      world = await webhookWorld(backend);
      admin = await world.token(world.app);
    });
    after(async () => {
      await world.close();
    });
    t.beforeEach(async () => {
      receiver = await startReceiver();
    });
    t.afterEach(async () => {
      // Later subtests must not see earlier subscriptions.
      for (const w of await world.fresh.store.db.selectFrom('webhooks').select('id').execute()) {
        await world.app.inject({ method: 'DELETE', url: `${HOOKS}/${w.id}`, headers: bearer(admin) });
      }
      await receiver.close();
    });

    await t.test(
      'key.deactivated: one signed POST {type, timestamp, data} verified by standardwebhooks; outbox row in the store',
      async () => {
        const hook = await subscribe(['key.deactivated']);
        const key = (
          await world.app.inject({
            method: 'POST',
            url: '/api/v1/keys',
            headers: bearer(admin),
            payload: { name: 'doomed', scopes: ['trust:read'] },
          })
        ).json();
        assert.equal(
          (await world.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.id}`, headers: bearer(admin) }))
            .statusCode,
          200,
        );
        await receiver.waitFor((r) => r.length >= 1);
        const [got] = receiver.received;
        const payload = new Webhook(hook.secret).verify(got!.body, got!.headers as Record<string, string>) as {
          type: string;
          timestamp: string;
          data: Record<string, unknown>;
        };
        assert.equal(payload.type, 'key.deactivated');
        assert.equal(payload.data.key_id, key.id);
        assert.equal(payload.data.name, 'doomed');
        assert.ok(!got!.body.includes(key.key), 'the key secret is never sent');
        assert.match(String(got!.headers['webhook-id']), /^msg_/);
        assert.match(String(got!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
        assert.match(String(got!.headers['content-type']), /^application\/json/);
        assert.ok(Number.isFinite(Date.parse(payload.timestamp)));
        // A wrong secret does not verify.
        assert.throws(() =>
          new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
            got!.body,
            got!.headers as Record<string, string>,
          ),
        );
        // Deleting again is no new fact: no second event.
        await world.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.id}`, headers: bearer(admin) });
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(receiver.received.length, 1);
        const log = await deliveries(hook.id);
        assert.equal(log.length, 1);
        assert.equal(log[0]!.status, 'succeeded');
        assert.equal(log[0]!.attempts, 1);
        assert.equal(log[0]!.event_type, 'key.deactivated');
        assert.equal(log[0]!.last_status_code, 200);
      },
    );

    await t.test(
      'policy.activated: activating an uploaded policy sends one signed event naming the new and the previous version',
      async () => {
        const hook = await subscribe(['policy.activated']);
        const { DEFAULT_POLICY } = await import('../../src/model/policy.ts');
        const version = `hook-${backend}-${Date.now()}`;
        const up = await world.app.inject({
          method: 'POST',
          url: '/api/v1/policies',
          headers: bearer(admin),
          payload: { ...DEFAULT_POLICY, version },
        });
        assert.equal(up.statusCode, 201, up.body);
        const before = (await world.app.inject({ method: 'GET', url: '/api/v1/policies', headers: bearer(admin) }))
          .json()
          .data.find((p: { status: string }) => p.status === 'active').version;
        const act = await world.app.inject({
          method: 'POST',
          url: `/api/v1/policies/${version}/activate`,
          headers: bearer(admin),
        });
        assert.equal(act.statusCode, 200, act.body);
        await receiver.waitFor((r) => r.length >= 1);
        const [got] = receiver.received;
        const payload = new Webhook(hook.secret).verify(got!.body, got!.headers as Record<string, string>) as {
          type: string;
          data: Record<string, unknown>;
        };
        assert.equal(payload.type, 'policy.activated');
        assert.equal(payload.data.version, version);
        assert.equal(payload.data.previous_version, before);
        // Put the original back for the subtests after this one.
        assert.equal(
          (
            await world.app.inject({
              method: 'POST',
              url: `/api/v1/policies/${before}/activate`,
              headers: bearer(admin),
            })
          ).statusCode,
          200,
        );
      },
    );

    await t.test(
      'decision.high_risk for a score at high or above (not for a low one); dispute.analyzed for an analysis',
      async () => {
        await subscribe(['decision.high_risk', 'dispute.analyzed']);
        const bad = hash(`wh-bad-${backend}`);
        await postEvents({ inject: (o: never) => world.app.inject(o) } as never, admin, [
          event('entity.blocklisted', bad),
          event('fraud.reported', bad),
          event('chargeback', bad),
          event('chargeback', bad),
        ]);
        const risky = (
          await world.app.inject({
            method: 'POST',
            url: '/api/v1/trust/score',
            headers: bearer(admin),
            payload: { entity_id: bad, amount: 900, currency: 'USD' },
          })
        ).json();
        assert.ok(['high', 'critical'].includes(risky.risk_level), JSON.stringify(risky));
        const calm = (
          await world.app.inject({
            method: 'POST',
            url: '/api/v1/trust/score',
            headers: bearer(admin),
            payload: { entity_id: hash('wh-calm'), amount: 5, currency: 'USD' },
          })
        ).json();
        assert.equal(calm.risk_level === 'high' || calm.risk_level === 'critical', false);
        const dispute = await world.app.inject({
          method: 'POST',
          url: '/api/v1/dispute/analyze',
          headers: bearer(admin),
          payload: {
            dispute_id: 'dsp-wh-1',
            trade: {
              trade_id: 't-wh-1',
              amount: 100,
              currency: 'USD',
              payment_method: 'bank_transfer',
              created_at: new Date(Date.now() - 3_600_000).toISOString(),
            },
            buyer_id: hash('wh-buyer'),
            seller_id: bad,
            opened_by: 'buyer',
            opened_at: new Date().toISOString(),
            reason: 'payment_not_received',
          },
        });
        assert.equal(dispute.statusCode, 200, dispute.body);
        await receiver.waitFor((r) => r.length >= 2);
        await new Promise((r) => setTimeout(r, 150));
        const got = bodies();
        assert.equal(got.length, 2);
        const high = got.find((b) => b.type === 'decision.high_risk')!;
        assert.equal(high.data.decision_id, risky.decision_id);
        assert.equal(high.data.entity_id, bad);
        assert.equal(high.data.score, risky.score);
        assert.equal(high.data.risk_level, risky.risk_level);
        const analyzed = got.find((b) => b.type === 'dispute.analyzed')!;
        assert.equal(analyzed.data.analysis_id, dispute.json().analysis_id);
        assert.equal(analyzed.data.dispute_id, 'dsp-wh-1');
        assert.equal(analyzed.data.recommendation, dispute.json().recommendation);
      },
    );

    await t.test('entity.flagged for the reported entity and for one sharing an identifier with it', async () => {
      await subscribe(['entity.flagged']);
      const device = { type: 'device', hash: hash(`wh-device-${backend}`) };
      const culprit = hash(`wh-culprit-${backend}`);
      const sharer = hash(`wh-sharer-${backend}`);
      const ctx = { inject: (o: never) => world.app.inject(o) } as never;
      await postEvents(ctx, admin, [
        event('identifier.linked', culprit, { linked_identifiers: [device] }),
        event('identifier.linked', sharer, { linked_identifiers: [device] }),
      ]);
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(receiver.received.length, 0, 'linking alone flags nobody');
      await postEvents(ctx, admin, [event('fraud.reported', culprit)]);
      await receiver.waitFor((r) => r.length >= 2);
      const got = bodies();
      const own = got.find((b) => b.data.entity_id === culprit)!;
      assert.equal(own.data.reason, 'fraud.reported');
      assert.equal(own.data.via, null);
      const linked = got.find((b) => b.data.entity_id === sharer)!;
      assert.equal(linked.data.flagged_entity_id, culprit);
      assert.deepEqual(linked.data.via, device);
    });

    await t.test(
      'retries: two 500s then 200 → delivered on the third attempt, same webhook-id each time; the log shows it',
      async () => {
        const hook = await subscribe(['key.deactivated']);
        receiver.script.push({ status: 500 }, { status: 503 });
        const key = (
          await world.app.inject({
            method: 'POST',
            url: '/api/v1/keys',
            headers: bearer(admin),
            payload: { name: 'r', scopes: ['trust:read'] },
          })
        ).json();
        await world.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.id}`, headers: bearer(admin) });
        await receiver.waitFor((r) => r.length >= 3);
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(receiver.received.length, 3);
        assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1);
        for (const r of receiver.received) new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>);
        const [log] = await deliveries(hook.id);
        assert.equal(log!.status, 'succeeded');
        assert.equal(log!.attempts, 3);
        const attempts = await world.fresh.store.db
          .selectFrom('webhook_attempts')
          .selectAll()
          .where('delivery_id', '=', String(log!.id))
          .orderBy('seq')
          .execute();
        assert.deepEqual(
          attempts.map((a) => a.status_code),
          [500, 503, 200],
        );
      },
    );

    await t.test('a timeout is a failure and is retried', async () => {
      const hook = await subscribe(['key.deactivated']);
      receiver.script.push({ status: 200, delayMs: 1500 });
      const key = (
        await world.app.inject({
          method: 'POST',
          url: '/api/v1/keys',
          headers: bearer(admin),
          payload: { name: 'slow', scopes: ['trust:read'] },
        })
      ).json();
      await world.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.id}`, headers: bearer(admin) });
      await receiver.waitFor((r) => r.length >= 2);
      const deadline = Date.now() + 5000;
      let log = (await deliveries(hook.id))[0]!;
      while (log.status !== 'succeeded' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        log = (await deliveries(hook.id))[0]!;
      }
      assert.equal(log.status, 'succeeded');
      assert.equal(log.attempts, 2);
      const attempts = await world.fresh.store.db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('delivery_id', '=', String(log.id))
        .orderBy('seq')
        .execute();
      assert.equal(attempts[0]!.status_code, null);
      assert.equal(attempts[0]!.error, 'timeout');
    });

    await t.test(
      'every attempt fails → failed after the schedule; manual retry: 202, sent again with the same webhook-id',
      async () => {
        const hook = await subscribe(['key.deactivated']);
        receiver.fallback = { status: 500 };
        const key = (
          await world.app.inject({
            method: 'POST',
            url: '/api/v1/keys',
            headers: bearer(admin),
            payload: { name: 'f', scopes: ['trust:read'] },
          })
        ).json();
        await world.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.id}`, headers: bearer(admin) });
        // FAST_WORKER: the first try and five retries.
        await receiver.waitFor((r) => r.length >= 6);
        const deadline = Date.now() + 3000;
        let log = (await deliveries(hook.id))[0]!;
        while (log.status !== 'failed' && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
          log = (await deliveries(hook.id))[0]!;
        }
        assert.equal(log.status, 'failed');
        assert.equal(log.attempts, 6);
        assert.equal(log.next_attempt_at, null);
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(receiver.received.length, 6, 'nothing after the last retry');
        receiver.fallback = { status: 204 };
        const retry = await world.app.inject({
          method: 'POST',
          url: `${HOOKS}/${hook.id}/deliveries/${log.id}/retry`,
          headers: bearer(admin),
        });
        assert.equal(retry.statusCode, 202, retry.body);
        await receiver.waitFor((r) => r.length >= 7);
        assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1);
        problem(
          await world.app.inject({
            method: 'POST',
            url: `${HOOKS}/${hook.id}/deliveries/whd_01ARZ3NDEKTSV4RRFFQ69G5FAV/retry`,
            headers: bearer(admin),
          }),
          404,
          'not_found',
        );
        const service = await (async () => {
          const { createClient } = await import('../../src/auth/clients.ts');
          const { client, secret } = await createClient(world.fresh.store.db, {
            name: 's',
            role: 'service',
            scopes: ['webhooks:read', 'webhooks:write'],
          });
          return (
            await world.app.inject({
              method: 'POST',
              url: '/api/v1/auth/token',
              payload: { client_id: client.client_id, client_secret: secret },
            })
          ).json().access_token as string;
        })();
        problem(
          await world.app.inject({
            method: 'POST',
            url: `${HOOKS}/${hook.id}/deliveries/${log.id}/retry`,
            headers: bearer(service),
          }),
          403,
          'insufficient_scope',
        );
      },
    );

    await t.test("a webhook of another client gets none of this client's events", async () => {
      const { createClient } = await import('../../src/auth/clients.ts');
      const { client, secret } = await createClient(world.fresh.store.db, {
        name: 'o',
        role: 'operator',
        scopes: ['webhooks:read', 'webhooks:write'],
      });
      const other = (
        await world.app.inject({
          method: 'POST',
          url: '/api/v1/auth/token',
          payload: { client_id: client.client_id, client_secret: secret },
        })
      ).json().access_token as string;
      assert.equal(
        (
          await world.app.inject({
            method: 'POST',
            url: HOOKS,
            headers: bearer(other),
            payload: { url: receiver.url, events: ['key.deactivated'] },
          })
        ).statusCode,
        201,
      );
      const key = (
        await world.app.inject({
          method: 'POST',
          url: '/api/v1/keys',
          headers: bearer(admin),
          payload: { name: 'mine', scopes: ['trust:read'] },
        })
      ).json();
      await world.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.id}`, headers: bearer(admin) });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receiver.received.length, 0);
    });
  });
}
