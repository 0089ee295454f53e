// entity.flagged fan-out (issue 18): a fraud batch over a hundred entities sharing a device, with
// five webhooks, commits one fan-out row in the ingest transaction (not ten thousand events); the
// worker expands it into one event per flagged entity and per neighbour, within the caps.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { backends, bearer, type Backend } from '../helpers/app.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { MAX_NEIGHBOURS_PER_IDENTIFIER, MAX_NEIGHBOURS_PER_REQUEST } from '../../src/webhooks/fanout.ts';
import { distinctDeliveries, FAST_WORKER, startReceiver, webhookWorld } from './support.ts';

type Flagged = {
  type: string;
  data: {
    entity_id: string;
    reason: string;
    reasons: string[];
    flagged_entity_id: string;
    via: unknown;
    linked_truncated?: boolean;
    flagged_links?: number;
  };
};

const rows = async (db: Awaited<ReturnType<typeof webhookWorld>>['fresh']['store']['db']) => ({
  fanouts: (await db.selectFrom('webhook_fanouts').select('id').execute()).length,
  events: (await db.selectFrom('webhook_events').select('id').execute()).length,
  deliveries: (await db.selectFrom('webhook_deliveries').select('id').execute()).length,
});

/** A store with the webhook worker, a receiver, an admin token and a postEvents context; closed after the test. */
async function fanoutWorld(t: TestContext, backend: Backend, worker: Parameters<typeof webhookWorld>[2] = FAST_WORKER) {
  const world = await webhookWorld(backend, {}, worker);
  const receiver = await startReceiver();
  t.after(async () => {
    await receiver.close();
    await world.close();
  });
  const admin = await world.token(world.app);
  const ctx = { inject: (o: never) => world.app.inject(o) } as never;
  return { world, receiver, admin, ctx };
}

for (const backend of backends()) {
  test(`a report over 100 entities sharing a device, 5 webhooks: one fan-out row in the ingest commit, then 100 coalesced events [${backend}]`, async (t) => {
    // No worker at first: what the ingest commit wrote is all there is to count.
    const { world, receiver, admin, ctx } = await fanoutWorld(t, backend, { ...FAST_WORKER, enabled: false });
    for (let i = 0; i < 5; i++) {
      const res = await world.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: bearer(admin),
        payload: { url: `${receiver.url}/${i}`, events: ['entity.flagged'] },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const device = { type: 'device', hash: hash(`fan-device-${backend}`) };
    const entities = Array.from({ length: 100 }, (_, i) => hash(`fan-${backend}-${i}`));
    await postEvents(
      ctx,
      admin,
      entities.map((e) => event('identifier.linked', e, { linked_identifiers: [device] })),
    );
    // A second report of one entity in the same batch coalesces into its one event.
    const batch = [
      ...entities.map((e) => event('fraud.reported', e, { linked_identifiers: [device] })),
      event('entity.blocklisted', entities[0]!),
    ];
    assert.equal((await postEvents(ctx, admin, batch)).accepted, 101);
    const { db } = world.fresh.store;
    assert.deepEqual(
      await rows(db),
      { fanouts: 1, events: 0, deliveries: 0 },
      'the ingest commit wrote one compact row',
    );

    const app: FastifyInstance = await world.spawn(FAST_WORKER);
    assert.ok(app);
    await receiver.waitFor((r) => distinctDeliveries(r).length >= 500, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(await rows(db), { fanouts: 0, events: 100, deliveries: 500 });
    const delivered = distinctDeliveries(receiver.received);
    assert.equal(delivered.length, 500, 'each event once per webhook');
    assert.equal(new Set(delivered.map((r) => r.path)).size, 5);
    const got = delivered.map((r) => JSON.parse(r.body) as Flagged);
    assert.ok(
      got.every((b) => b.type === 'entity.flagged' && b.data.via === null && b.data.linked_truncated === false),
    );
    assert.deepEqual(new Set(got.map((b) => b.data.entity_id)), new Set(entities));
    const first = got.find((b) => b.data.entity_id === entities[0])!;
    assert.deepEqual(first.data.reasons, ['entity.blocklisted', 'fraud.reported']);
  });

  test(`neighbour events are capped per identifier and per request, and the flagged entity's event says so [${backend}]`, async (t) => {
    const { world, receiver, admin, ctx } = await fanoutWorld(t, backend);
    await world.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: bearer(admin),
      payload: { url: receiver.url, events: ['entity.flagged'] },
    });
    const culprit = hash(`cap-culprit-${backend}`);
    const devices = Array.from({ length: 6 }, (_, d) => ({ type: 'device', hash: hash(`cap-device-${backend}-${d}`) }));
    // Six devices, each shared with 21 other accounts (no hub at the default fanout of 25); one account shares the
    // first two.
    const links = [event('identifier.linked', culprit, { linked_identifiers: devices })];
    devices.forEach((device, d) => {
      for (let i = 0; i < 21; i++)
        links.push(event('identifier.linked', hash(`cap-${backend}-${d}-${i}`), { linked_identifiers: [device] }));
    });
    const twice = hash(`cap-${backend}-both`);
    links.push(event('identifier.linked', twice, { linked_identifiers: devices.slice(0, 2) }));
    for (let i = 0; i < links.length; i += 100) await postEvents(ctx, admin, links.slice(i, i + 100));
    await postEvents(ctx, admin, [event('fraud.reported', culprit)]);
    const expected = 1 + MAX_NEIGHBOURS_PER_REQUEST;
    await receiver.waitFor((r) => distinctDeliveries(r).length >= expected, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    const got = distinctDeliveries(receiver.received).map((r) => JSON.parse(r.body) as Flagged);
    assert.equal(got.length, expected, 'the flagged entity, then at most the per-request cap of neighbours');
    const own = got.filter((b) => b.data.via === null);
    assert.equal(own.length, 1);
    assert.equal(own[0]!.data.linked_truncated, true);
    const neighbours = got.filter((b) => b.data.via !== null);
    assert.equal(new Set(neighbours.map((b) => b.data.entity_id)).size, neighbours.length, 'one event per neighbour');
    assert.ok(neighbours.every((b) => b.data.flagged_entity_id === culprit));
    const perDevice = new Map<string, number>();
    for (const b of neighbours)
      perDevice.set(JSON.stringify(b.data.via), (perDevice.get(JSON.stringify(b.data.via)) ?? 0) + 1);
    assert.ok(
      [...perDevice.values()].every((n) => n <= MAX_NEIGHBOURS_PER_IDENTIFIER),
      JSON.stringify([...perDevice.values()]),
    );
  });

  test(`a hub is never traversed: only the holders of ordinary identifiers are neighbours, one event each, once per webhook [${backend}]`, async (t) => {
    const { world, receiver, admin, ctx } = await fanoutWorld(t, backend);
    for (let i = 0; i < 2; i++)
      await world.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: bearer(admin),
        payload: { url: `${receiver.url}/${i}`, events: ['entity.flagged'] },
      });
    const culprit = hash(`hub-culprit-${backend}`);
    const hub = { type: 'other', hash: hash(`hub-wifi-${backend}`) };
    const phone = { type: 'phone', hash: hash(`hub-phone-${backend}`) };
    const bank = { type: 'bank_account', hash: hash(`hub-bank-${backend}`) };
    const links = [event('identifier.linked', culprit, { linked_identifiers: [hub, phone, bank] })];
    for (let i = 0; i < 40; i++)
      links.push(event('identifier.linked', hash(`hub-${backend}-${i}`), { linked_identifiers: [hub] }));
    const near = [0, 1, 2].map((i) => hash(`hub-near-${backend}-${i}`));
    // near[0] holds both the phone and the bank account: still one event.
    links.push(
      event('identifier.linked', near[0]!, { linked_identifiers: [phone, bank] }),
      event('identifier.linked', near[1]!, { linked_identifiers: [phone] }),
      event('identifier.linked', near[2]!, { linked_identifiers: [bank] }),
    );
    await postEvents(ctx, admin, links);
    await postEvents(ctx, admin, [event('fraud.reported', culprit), event('entity.blocklisted', culprit)]);
    await receiver.waitFor((r) => distinctDeliveries(r).length >= 8, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      await rows(world.fresh.store.db),
      { fanouts: 0, events: 4, deliveries: 8 },
      'one event per entity, one delivery per event and webhook',
    );
    const got = distinctDeliveries(receiver.received).map((r) => JSON.parse(r.body) as Flagged);
    assert.deepEqual(new Set(got.map((b) => b.data.entity_id)), new Set([culprit, ...near]));
    assert.ok(
      got.every((b) => JSON.stringify(b.data.via) !== JSON.stringify(hub)),
      'no event through the hub',
    );
    assert.equal(got.find((b) => b.data.entity_id === near[0])!.data.flagged_links, 2);
    assert.equal(got.find((b) => b.data.via === null)!.data.linked_truncated, false);
  });
}
