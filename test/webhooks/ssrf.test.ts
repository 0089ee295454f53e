// SSRF rules for webhook destinations (docs/api.md, "Integration"): public unicast addresses only, checked on the
// resolved addresses at creation and again at delivery; redirects are not followed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backends, bearer } from '../helpers/app.ts';
import { checkDestination, isPublicAddress } from '../../src/webhooks/ssrf.ts';
import { FAST_WORKER, startReceiver, webhookWorld } from './support.ts';

test('isPublicAddress: private, loopback, link-local, CGNAT, ULA, multicast, mapped and NAT64 forms are not public', () => {
  for (const a of [
    '127.0.0.1',
    '10.0.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:a00:1',
    '64:ff9b::a00:1',
    '2001:db8::1',
    'not-an-ip',
  ]) {
    assert.equal(isPublicAddress(a), false, a);
  }
  for (const a of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
    assert.equal(isPublicAddress(a), true, a);
});

test('isPublicAddress: every IPv6 form that carries a private IPv4 address is refused, whichever way it is spelled', () => {
  const refused = [
    // IPv4-translated ::ffff:0:0/96 (missed before), dotted and hex
    '::ffff:0:10.0.0.1',
    '::ffff:0:a00:1',
    '::ffff:0:127.0.0.1',
    '0:0:0:0:ffff:0:c0a8:101',
    '::ffff:0:169.254.169.254',
    // IPv4-mapped, dotted, hex and in full
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '::FFFF:192.168.1.1',
    // IPv4-compatible (deprecated): refused whatever it carries
    '::10.0.0.1',
    '::127.0.0.1',
    '::8.8.8.8',
    '::a00:1',
    // NAT64, well-known prefix with private IPv4 inside, and the local-use /48 whatever it carries
    '64:ff9b::10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::127.0.0.1',
    '64:ff9b:1::8.8.8.8',
    '64:ff9b:1:ab::a00:1',
    // 6to4 with a private IPv4 (and 6to4 at all)
    '2002:a00:1::1',
    '2002:c0a8:101::',
    '2002:7f00:1::1',
    '2002:808:808::1',
    // unique-local, link-local with a zone, site-local, multicast, and space outside 2000::/3
    'fc00::1',
    'fd00:1234::1',
    'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'fe80::1%eth0',
    'fec0::1',
    'ff05::2',
    '1::1',
    '4000::1',
    '::ffff:0:0:7f00:1',
  ];
  for (const a of refused) assert.equal(isPublicAddress(a), false, a);
  // The forms that carry a public IPv4 address for translation reach that address.
  for (const a of ['::ffff:0:8.8.8.8', '64:ff9b::8.8.8.8', '64:ff9b::808:808', '2a00:1450:4001::200e'])
    assert.equal(isPublicAddress(a), true, a);
});

test('checkDestination: a name whose answers include an IPv4-translated private address is refused', async () => {
  const check = await checkDestination('https://hooks.example/x', {
    allowPrivate: false,
    resolve: async () => [
      { address: '2606:4700:4700::1111', family: 6 },
      { address: '::ffff:0:a9fe:a9fe', family: 6 },
    ],
  });
  assert.equal(check.ok, false);
  assert.equal(check.ok === false && check.reason, 'private');
  assert.equal((await checkDestination('https://[::ffff:0:10.0.0.1]/x', { allowPrivate: false })).ok, false);
});

test('checkDestination: a name is judged by every address it resolves to', async () => {
  const resolveTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  assert.equal(
    (await checkDestination('https://hooks.example/x', { allowPrivate: false, resolve: resolveTo('93.184.216.34') }))
      .ok,
    true,
  );
  const mixed = await checkDestination('https://hooks.example/x', {
    allowPrivate: false,
    resolve: resolveTo('93.184.216.34', '10.0.0.7'),
  });
  assert.deepEqual(mixed, {
    ok: false,
    reason: 'private',
    message:
      'must not point to a private, loopback or link-local address (allowed with VOUCH_WEBHOOK_ALLOW_PRIVATE=1 (webhooks) or VOUCH_NETWORK_ALLOW_PRIVATE=1 (network peers))',
  });
  const none = await checkDestination('https://hooks.example/x', {
    allowPrivate: false,
    resolve: async () => {
      throw new Error('ENOTFOUND');
    },
  });
  assert.deepEqual(none, { ok: false, reason: 'unresolved', message: 'does not resolve to an address' });
  assert.equal((await checkDestination('http://127.0.0.1:9/x', { allowPrivate: true })).ok, true);
  assert.equal((await checkDestination('http://93.184.216.34/x', { allowPrivate: false })).ok, false);
});

for (const backend of backends()) {
  test(`the destination is checked again at delivery: a name that now resolves to loopback is not called [${backend}]`, async (t) => {
    const receiver = await startReceiver();
    let answer = '93.184.216.34';
    const port = new URL(receiver.url).port;
    const world = await webhookWorld(
      backend,
      { webhookAllowPrivate: false },
      { ...FAST_WORKER, retryDelaysMs: [], urlPolicy: { resolve: async () => [{ address: answer, family: 4 }] } },
    );
    t.after(async () => {
      await receiver.close();
      await world.close();
    });
    const admin = await world.token(world.app);
    const created = await world.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: bearer(admin),
      payload: { url: `https://hooks.example:${port}/x`, events: ['key.deactivated'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    answer = '127.0.0.1';
    const key = (
      await world.app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: bearer(admin),
        payload: { name: 'k', scopes: ['trust:read'] },
      })
    ).json();
    await world.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.id}`, headers: bearer(admin) });
    const deadline = Date.now() + 5000;
    let rows: Array<{ status: string; last_error: string | null }> = [];
    while (Date.now() < deadline) {
      rows = await world.fresh.store.db.selectFrom('webhook_deliveries').select(['status', 'last_error']).execute();
      if (rows[0]?.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(rows[0]?.status, 'failed');
    assert.equal(rows[0]?.last_error, 'blocked', 'a category, not the address');
    assert.equal(receiver.received.length, 0);
  });

  test(`redirects are not followed: a 3xx is a failed attempt [${backend}]`, async (t) => {
    const receiver = await startReceiver();
    const world = await webhookWorld(backend, {}, { ...FAST_WORKER, retryDelaysMs: [] });
    t.after(async () => {
      await receiver.close();
      await world.close();
    });
    receiver.fallback = { status: 307 };
    const admin = await world.token(world.app);
    await world.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: bearer(admin),
      payload: { url: receiver.url, events: ['key.deactivated'] },
    });
    const key = (
      await world.app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: bearer(admin),
        payload: { name: 'k', scopes: ['trust:read'] },
      })
    ).json();
    await world.app.inject({ method: 'DELETE', url: `/api/v1/keys/${key.id}`, headers: bearer(admin) });
    await receiver.waitFor((r) => r.length >= 1);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(receiver.received.length, 1);
    const [row] = await world.fresh.store.db.selectFrom('webhook_deliveries').selectAll().execute();
    assert.equal(row!.status, 'failed');
    assert.equal(row!.last_status_code, 307);
  });
}
