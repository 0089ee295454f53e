// docs/operations.md, "Shutdown" and "Health": a request that arrives on a kept-alive connection
// while the server drains gets 503 unavailable with Connection: close (and goes to another
// instance), never a reset; a store out of space answers 503 with Retry-After, and not ready.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../src/app.ts';
import { ADMIN_ID, ADMIN_SECRET, freshStore, testConfig } from '../helpers/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';

function get(port: number, agent: Agent): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a request on a kept-alive connection during the drain: 503 with Connection: close, not a reset', async () => {
  const fresh = await freshStore('sqlite');
  const app = await buildApp({ config: testConfig(), store: fresh.store, logger: false });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    assert.equal((await get(port, agent)).status, 200);
    const closed = app.close();
    // the same socket, idle when the drain began; until the drain is seen, a request is still served
    let answer = await get(port, agent);
    for (let i = 0; i < 50 && answer.status === 200; i++) answer = await get(port, agent);
    assert.equal(answer.status, 503, answer.body);
    assert.equal(answer.connection, 'close');
    assert.equal(JSON.parse(answer.body).code, 'unavailable');
    await closed;
    agent.destroy();
  } finally {
    await fresh.drop();
  }
});

test('a store out of space: the write is 503 with Retry-After (never 500), and /readyz says not ready', async () => {
  const fresh = await freshStore('sqlite');
  const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  const config = testConfig();
  await ensureBootstrapAdmin(fresh.store, config);
  const app = await buildApp({
    config,
    store: fresh.store,
    logger: false,
    decisionCommit: async () => {
      throw full;
    },
  });
  try {
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    const token = (
      await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
      })
    ).json().access_token as string;
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/trust/score',
      headers: { authorization: `Bearer ${token}` },
      payload: { entity_id: 'f'.repeat(64), amount: 10, currency: 'USD' },
    });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '30');
    assert.match(res.json().detail, /no space left/);
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 503);
    assert.match(ready.json().detail, /no space left/);
  } finally {
    await app.close();
    await fresh.drop();
  }
});
