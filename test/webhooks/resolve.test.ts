// Destination names are resolved with c-ares (dns.Resolver), not getaddrinfo: a name whose server
// never answers holds no thread of the libuv pool, so it cannot stall other tenants' lookups.
// A small DNS server on loopback plays the tenant's name server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { pbkdf2 } from 'node:crypto';
import { promisify } from 'node:util';
import { checkDestination } from '../../src/webhooks/ssrf.ts';
import { destinationResolver } from '../../src/webhooks/resolve.ts';

/** Answers A queries for `answers`' names, AAAA with no records, and never answers `silent` names. */
async function nameServer(answers: Record<string, string>, silent: string[]) {
  const socket = createSocket('udp4');
  const asked: string[] = [];
  socket.on('message', (query, peer) => {
    const labels: string[] = [];
    let at = 12;
    while (query[at]! > 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('ascii'));
      at += query[at]! + 1;
    }
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(at + 1);
    asked.push(name);
    if (silent.includes(name)) return;
    const question = query.subarray(12, at + 5);
    const address = type === 1 ? answers[name] : undefined;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(answers[name] === undefined ? 0x8183 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(address ? 1 : 0, 6);
    const answer = address
      ? Buffer.concat([
          Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]),
          Buffer.from(address.split('.').map(Number)),
        ])
      : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    port: socket.address().port,
    asked,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

test('destination names are asked of the name servers through c-ares; one that never answers holds no pool thread', async (t) => {
  const server = await nameServer({ 'hooks.example.test': '93.184.216.34', 'inside.example.test': '10.0.0.8' }, [
    'silent.example.test',
  ]);
  const previous = destinationResolver.getServers();
  destinationResolver.setServers([`127.0.0.1:${server.port}`]);
  t.after(async () => {
    destinationResolver.setServers(previous);
    await server.close();
  });
  const found = await checkDestination('https://hooks.example.test/x', { allowPrivate: false });
  assert.deepEqual(found.ok && [found.address, found.family], ['93.184.216.34', 4]);
  assert.ok(server.asked.includes('hooks.example.test'));
  const inside = await checkDestination('https://inside.example.test/x', { allowPrivate: false });
  assert.equal(!inside.ok && inside.reason, 'private');
  const unknown = await checkDestination('https://nowhere.example.test/x', { allowPrivate: false });
  assert.equal(!unknown.ok && unknown.reason, 'unresolved');

  // More silent lookups than the pool has threads; work on the pool still runs meanwhile.
  let settled = 0;
  const silent = Array.from({ length: 8 }, () =>
    checkDestination('https://silent.example.test/x', { allowPrivate: false }).finally(() => (settled += 1)),
  );
  await promisify(pbkdf2)('secret', 'salt', 1000, 32, 'sha256');
  assert.equal(settled, 0, 'the pool job finished while every silent lookup was still waiting');
  for (const result of await Promise.all(silent)) assert.equal(!result.ok && result.reason, 'unresolved');
});

test('localhost is loopback without asking anyone; a single-label name is not resolved unless private destinations are allowed', async () => {
  const local = await checkDestination('https://localhost/x', { allowPrivate: false });
  assert.equal(!local.ok && local.reason, 'private');
  const sub = await checkDestination('https://api.localhost/x', { allowPrivate: false });
  assert.equal(!sub.ok && sub.reason, 'private');
  const single = await checkDestination('https://intranet/x', { allowPrivate: false });
  assert.equal(!single.ok && single.reason, 'unresolved');
  const allowed = await checkDestination('http://localhost:9/x', { allowPrivate: true });
  assert.equal(allowed.ok && allowed.address, '127.0.0.1');
});
