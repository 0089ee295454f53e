// `vouch network …` from a terminal acts on the same store as the running server, in another
// process: `status` shows the name the server's descriptor shows (not the CLI's own default), and a
// `sync` makes the server's cached scores stale at once, as the API's sync does (docs/network.md,
// "Admin API and CLI").
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import {
  backends,
  bearer,
  freshStore,
  startApp,
  testConfig,
  type TestContext,
  type TestStore,
} from '../helpers/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { buildApp } from '../../src/app.ts';
import { runCli } from '../helpers/processes.ts';
import type { FastifyInstance } from 'fastify';

const SECRET = 'cli-shared-state-secret-0123456789abcdef';
const PHONE = '7c'.repeat(32);
const ENTITY = '8d'.repeat(32);
const at = () => new Date(Date.now() - 60_000).toISOString();

for (const backend of backends()) {
  describe(`the network CLI beside a running server [${backend}]`, () => {
    let A: TestContext & { close(): Promise<void> };
    let store: TestStore;
    let B: FastifyInstance;
    let token = '';
    const cliEnv = () => ({
      VOUCH_DATABASE_URL: store.url,
      VOUCH_SECRET_KEY: SECRET,
      VOUCH_NETWORK_ALLOW_PRIVATE: '1',
    });
    const call = async (app: FastifyInstance, auth: string, method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await app.inject({ method, url, headers: bearer(auth), ...(payload ? { payload } : {}) });
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };

    before(async () => {
      A = await startApp(backend, { network: { ...testConfig().network, allowPrivate: true } });
      await A.app.listen({ port: 0, host: '127.0.0.1' });
      store = await freshStore(backend);
      const config = testConfig({
        secretKey: SECRET,
        network: { ...testConfig().network, name: 'market-b', allowPrivate: true },
      });
      await ensureBootstrapAdmin(store.store, config);
      B = await buildApp({ config, store: store.store, logger: false });
      await B.ready();
      const res = await B.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: config.bootstrapClientId, client_secret: config.bootstrapClientSecret },
      });
      token = res.json().access_token;
      const adminA = await A.token();
      const descriptor = async (app: FastifyInstance) =>
        (await app.inject({ method: 'GET', url: '/network/v1/descriptor' })).json();
      await call(B, token, 'POST', '/api/v1/network/peers', {
        name: 'A',
        url: `http://127.0.0.1:${(A.app.server.address() as AddressInfo).port}`,
        signing_key: (await descriptor(A.app)).signing_key,
      });
      await call(A.app, adminA, 'POST', '/api/v1/network/peers', {
        name: 'B',
        url: 'https://93.184.216.34',
        signing_key: (await descriptor(B)).signing_key,
      });
      await call(A.app, adminA, 'POST', '/api/v1/trust/events', {
        events: [
          {
            event_id: 'a-1',
            type: 'chargeback',
            entity_id: 'a7'.repeat(32),
            occurred_at: at(),
            linked_identifiers: [{ type: 'phone', hash: PHONE }],
          },
        ],
      });
      await call(B, token, 'POST', '/api/v1/trust/events', {
        events: [
          {
            event_id: 'b-1',
            type: 'identifier.linked',
            entity_id: ENTITY,
            occurred_at: at(),
            linked_identifiers: [{ type: 'phone', hash: PHONE }],
          },
        ],
      });
    });
    after(async () => {
      await B?.close();
      await store?.drop();
      await A?.close();
    });

    test("status shows the server's descriptor name, not the CLI's default", { timeout: 180_000 }, async () => {
      assert.equal((await call(B, token, 'GET', '/network/v1/descriptor')).name, 'market-b');
      const status = await runCli(['network', 'status'], cliEnv());
      assert.equal(status.code, 0, status.stderr);
      assert.equal(JSON.parse(status.stdout).name, 'market-b');
    });

    test(
      "a sync from the CLI: the server's very next score is fresh and carries what it matched",
      { timeout: 180_000 },
      async () => {
        const score = () =>
          call(B, token, 'POST', '/api/v1/trust/score', { entity_id: ENTITY, amount: 50, currency: 'USD' });
        const first = await score();
        assert.equal(
          first.signals.some((s: { name: string }) => s.name === 'network_flags'),
          false,
        );
        assert.equal((await score()).cached, true);
        const sync = await runCli(['network', 'sync'], cliEnv());
        assert.equal(sync.code, 0, sync.stderr);
        assert.equal(JSON.parse(sync.stdout).peers[0].matched, 1);
        const next = await score();
        assert.equal(next.cached, false, "the score cached before the CLI's sync is stale");
        assert.equal(next.signals.find((s: { name: string }) => s.name === 'network_flags')?.value, 0.5);
      },
    );
  });
}
