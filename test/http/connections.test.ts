// Connection admission on real loopback sockets (src/http/connections.ts, issue 18 item 7): idle
// keep-alive connections close after the keep-alive timeout and give way to new clients when the
// process is full; one source holds at most its share of the cap. Linux routes all of 127/8 to
// loopback, so 127.0.0.x addresses play distinct sources.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { freshStore, testConfig, type TestStore } from '../helpers/app.ts';
import { buildApp } from '../../src/app.ts';
import type { Config } from '../../src/config/env.ts';
import { trustedProxies } from '../../src/http/connections.ts';

async function listening(
  overrides: Partial<Config>,
): Promise<{ app: FastifyInstance; port: number; close(): Promise<void> }> {
  const fresh: TestStore = await freshStore('sqlite');
  const app = await buildApp({ config: testConfig(overrides), store: fresh.store, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return {
    app,
    port,
    async close() {
      await app.close();
      await fresh.drop();
    },
  };
}

interface Client {
  socket: Socket;
  /** resolves once the server closes or resets the connection */
  closed: Promise<void>;
  /** sends a keep-alive GET /healthz; resolves to its status, or undefined when the connection closed first */
  get(): Promise<number | undefined>;
}

/** A connection from `source`, open once the server has had a moment to accept it. */
async function open(port: number, source = '127.0.0.1'): Promise<Client> {
  const socket = connect({ port, host: '127.0.0.1', localAddress: source });
  socket.on('error', () => {});
  let received = '';
  let waiting: ((status: number | undefined) => void) | undefined;
  socket.on('data', (chunk) => {
    received += chunk.toString();
    const match = /^HTTP\/1\.1 (\d{3})[^]*?\r\n\r\n[^]*?\{[^}]*\}/.exec(received);
    if (match && waiting) {
      received = '';
      waiting(Number(match[1]));
      waiting = undefined;
    }
  });
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      waiting?.(undefined);
      resolve();
    }),
  );
  await new Promise<void>((resolve) => {
    socket.once('connect', resolve);
    socket.once('close', resolve);
  });
  // Let the server's 'connection' handler run before the next socket arrives.
  await new Promise((r) => setTimeout(r, 30));
  return {
    socket,
    closed,
    get() {
      if (socket.destroyed) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        waiting = resolve;
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      });
    },
  };
}

/** Whether `promise` settles within `ms`: a bound on waiting, not a timing assertion. */
const within = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

describe('idle keep-alive connections', () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  const clients: Client[] = [];
  after(async () => {
    for (const c of clients) c.socket.destroy();
    for (const s of servers) await s.close();
  });

  test("an idle keep-alive connection is closed after VOUCH_KEEP_ALIVE_TIMEOUT_MS (default 5 s, not Fastify's 72 s)", async () => {
    const server = await listening({ keepAliveTimeoutMs: 300 });
    servers.push(server);
    assert.equal(server.app.server.keepAliveTimeout, 300);
    const client = await open(server.port);
    clients.push(client);
    assert.equal(await client.get(), 200);
    assert.ok(await within(client.closed, 5000), 'the server closed the idle connection');
    assert.equal(testConfig().keepAliveTimeoutMs, 5000);
  });

  test('at the cap, a new client is served: the connection idle the longest is closed to make room', async () => {
    const server = await listening({ maxConnections: 4, maxConnectionsPerSource: 4, keepAliveTimeoutMs: 60_000 });
    servers.push(server);
    // Four clients, each sends one request and then idles, as in the issue.
    const idlers: Client[] = [];
    for (let i = 0; i < 4; i++) {
      const c = await open(server.port, `127.0.0.${10 + i}`);
      clients.push(c);
      idlers.push(c);
      assert.equal(await c.get(), 200);
    }
    const newcomer = await open(server.port, '127.0.0.20');
    clients.push(newcomer);
    assert.equal(await newcomer.get(), 200, 'the new client was locked out');
    // The first idler made room; the others still hold their connections.
    assert.ok(await within(idlers[0]!.closed, 2000), 'the longest-idle connection was closed');
    assert.equal(await idlers[3]!.get(), 200);
  });

  test('at the cap with every connection busy (no complete request yet), a new connection is closed unanswered', async () => {
    const server = await listening({ maxConnections: 3, maxConnectionsPerSource: 3, keepAliveTimeoutMs: 60_000 });
    servers.push(server);
    for (let i = 0; i < 3; i++) clients.push(await open(server.port, `127.0.0.${30 + i}`));
    const refused = await open(server.port, '127.0.0.40');
    clients.push(refused);
    assert.ok(await within(refused.closed, 2000), 'the connection over the cap was closed');
    assert.equal(await refused.get(), undefined);
  });
});

describe('connections per source', () => {
  const clients: Client[] = [];
  let server: Awaited<ReturnType<typeof listening>> | undefined;
  after(async () => {
    for (const c of clients) c.socket.destroy();
    await server?.close();
  });

  test('one source holds at most VOUCH_MAX_CONNECTIONS_PER_SOURCE; another source is still served', async () => {
    server = await listening({ maxConnections: 10, maxConnectionsPerSource: 2, keepAliveTimeoutMs: 60_000 });
    // Two connections that have not finished a request: busy, so not reclaimable.
    for (let i = 0; i < 2; i++) clients.push(await open(server.port, '127.0.0.50'));
    const third = await open(server.port, '127.0.0.50');
    clients.push(third);
    assert.ok(await within(third.closed, 2000), 'the third connection from one source was closed');
    const other = await open(server.port, '127.0.0.51');
    clients.push(other);
    assert.equal(await other.get(), 200);
  });

  test('a source at its limit replaces its own idle connection rather than being refused', async () => {
    const a = await open(server!.port, '127.0.0.60');
    const b = await open(server!.port, '127.0.0.60');
    clients.push(a, b);
    assert.equal(await a.get(), 200);
    assert.equal(await b.get(), 200);
    const c = await open(server!.port, '127.0.0.60');
    clients.push(c);
    assert.equal(await c.get(), 200);
    assert.ok(await within(a.closed, 2000), "the source's longest-idle connection made room");
  });
});

test('trusted proxies are not limited per source: VOUCH_TRUST_PROXY addresses, CIDRs and keywords', () => {
  const list = trustedProxies(['10.0.0.0/8', '192.0.2.7', 'loopback', '2001:db8::/32']);
  for (const address of ['10.1.2.3', '::ffff:10.1.2.3', '192.0.2.7', '127.0.0.1', '::1', '2001:db8::5'])
    assert.equal(list(address), true, address);
  for (const address of ['192.0.2.8', '11.0.0.1', '2001:db9::1', 'not-an-address'])
    assert.equal(list(address), false, address);
  assert.equal(trustedProxies(false)('127.0.0.1'), false);
  assert.equal(trustedProxies(2)('203.0.113.9'), true);
});
