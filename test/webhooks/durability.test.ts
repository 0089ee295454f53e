// The outbox survives restarts and runs once across instances (docs/api.md, "Integration"): an app closed
// mid-backlog and another started on the same store deliver every event exactly once; a worker
// that dies holding a lease loses nothing; two servers working at once never deliver twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { backends, bearer } from '../helpers/app.ts';
import { enqueueWebhookEvent } from '../../src/webhooks/repository.ts';
import { claimDue } from '../../src/webhooks/claims.ts';
import { FAST_WORKER, startReceiver, webhookWorld, type Receiver } from './support.ts';

async function backlog(world: Awaited<ReturnType<typeof webhookWorld>>, count: number): Promise<string[]> {
  const ids: string[] = [];
  // One transaction per event, as the facts that announce them commit.
  for (let i = 0; i < count; i++) {
    const id = await world.fresh.store.db
      .transaction()
      .execute((trx) => enqueueWebhookEvent(trx, 'live', 'policy.activated', { version: `v${i}` }));
    ids.push(id!);
  }
  return ids;
}

function exactlyOnce(receiver: Receiver, ids: string[], secret: string): void {
  const counts = new Map<string, number>();
  for (const r of receiver.received) {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    const id = String(r.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  assert.deepEqual([...counts.keys()].sort(), [...ids].sort(), 'every event delivered');
  const twice = [...counts.entries()].filter(([, n]) => n > 1);
  assert.deepEqual(twice, [], 'no event delivered twice');
}

for (const backend of backends()) {
  test(`an app closed mid-backlog and another on the same store deliver every event exactly once [${backend}]`, async (t) => {
    // A generous timeout: an attempt that times out is sent again (at least once), which is not
    // what these tests look at, and booting apps can stall this process's event loop.
    const world = await webhookWorld(backend, {}, { ...FAST_WORKER, batch: 4, timeoutMs: 10_000 });
    const receiver = await startReceiver();
    t.after(async () => {
      await receiver.close();
      await world.close();
    });
    receiver.fallback = { status: 200, delayMs: 30 };
    const admin = await world.token(world.app);
    const hook = (
      await world.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: bearer(admin),
        payload: { url: receiver.url, events: ['policy.activated'] },
      })
    ).json();
    const ids = await backlog(world, 30);
    await receiver.waitFor((r) => r.length >= 6);
    await world.app.close();
    const deliveredByFirst = receiver.received.length;
    assert.ok(deliveredByFirst < 30, 'the first app stopped mid-backlog');
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(receiver.received.length, deliveredByFirst, 'a closed app sends nothing more');
    await world.spawn();
    await receiver.waitFor((r) => new Set(r.map((x) => x.headers['webhook-id'])).size >= 30, 15_000);
    await new Promise((r) => setTimeout(r, 200));
    exactlyOnce(receiver, ids, hook.secret);
  });

  test(`a worker that dies holding leases loses nothing: the deliveries are taken over when the leases end [${backend}]`, async (t) => {
    const world = await webhookWorld(backend, {}, { ...FAST_WORKER, enabled: false });
    const receiver = await startReceiver();
    t.after(async () => {
      await receiver.close();
      await world.close();
    });
    const admin = await world.token(world.app);
    const hook = (
      await world.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: bearer(admin),
        payload: { url: receiver.url, events: ['policy.activated'] },
      })
    ).json();
    const ids = await backlog(world, 8);
    // A worker claims five and is killed before it sends anything (or records anything).
    const claimedAt = Date.now();
    const claimed = await claimDue(world.fresh.store, 5, 3000);
    assert.equal(claimed.length, 5);
    await world.spawn(FAST_WORKER);
    await receiver.waitFor((r) => r.length >= 8, 15_000);
    await new Promise((r) => setTimeout(r, 200));
    exactlyOnce(receiver, ids, hook.secret);
    // Judged by when each arrived, not by a count at some moment: a loaded machine may take longer
    // than the lease to send the three free ones, and that is no fault.
    const leased = new Set(claimed.map((c) => c.event_id));
    const early = receiver.received.filter(
      (r) => leased.has(String(r.headers['webhook-id'])) && r.at < claimedAt + 3000,
    );
    assert.deepEqual(
      early.map((r) => r.headers['webhook-id']),
      [],
      'leased deliveries wait for their lease',
    );
  });

  test(`two servers on one store working the same backlog deliver each event once [${backend}]`, async (t) => {
    const world = await webhookWorld(backend, {}, { ...FAST_WORKER, enabled: false });
    const receiver = await startReceiver();
    t.after(async () => {
      await receiver.close();
      await world.close();
    });
    receiver.fallback = { status: 200, delayMs: 5 };
    const admin = await world.token(world.app);
    const hook = (
      await world.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: bearer(admin),
        payload: { url: receiver.url, events: ['policy.activated'] },
      })
    ).json();
    const ids = await backlog(world, 40);
    const busy = { ...FAST_WORKER, batch: 3, pollMs: 5, timeoutMs: 10_000 };
    await Promise.all([world.spawn(busy), world.spawn(busy), world.spawn(busy)]);
    await receiver.waitFor((r) => new Set(r.map((x) => x.headers['webhook-id'])).size >= 40, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    exactlyOnce(receiver, ids, hook.secret);
  });
}
