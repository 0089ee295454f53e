// A noisy client cannot starve resolution (docs/network.md, "Using it"): B's peer A grants it 1,000
// evaluations a day; one of B's trust:read clients names 4,000 junk hashes in batch-score contexts.
// Only 1,000 of them are queued (its quota; the rest dropped and counted), the phone an event links
// afterwards is resolved first, and another client's context identifier gets its turn in the same
// batch: both are matched at the first sync, while the budget runs out on the junk.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { backends, bearer, startApp, testConfig, type TestContext } from '../helpers/app.ts';
import { createClient } from '../../src/auth/clients.ts';
import { networkDb } from '../../src/network/tables.ts';
import { resolveKeyEncryption } from '../../src/auth/kek.ts';
import { loadIdentity } from '../../src/network/identity.ts';
import { refreshPublished } from '../../src/network/publisher.ts';

type App = TestContext & { close(): Promise<void> };
const at = () => new Date(Date.now() - 60_000).toISOString();
const PHONE = 'fe'.repeat(32);
const OTHER_PHONE = 'ff'.repeat(32);
const junk = (n: number) => `${n}`.padStart(8, '0').repeat(8);

for (const backend of backends()) {
  describe(`resolution order under a noisy client [${backend}]`, () => {
    let A: App;
    let B: App;
    const tokens: Record<string, string> = {};
    const call = async (app: App, token: string, method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const clientToken = async (app: App, name: string) => {
      const { client, secret } = await createClient(app.store.db, {
        name,
        role: 'service',
        scopes: ['trust:read', 'trust:write'],
      });
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: client.client_id, client_secret: secret },
      });
      return res.json().access_token as string;
    };

    before(async () => {
      const network = { network: { ...testConfig().network, allowPrivate: true } };
      A = await startApp(backend, network);
      B = await startApp(backend, network);
      await A.app.listen({ port: 0, host: '127.0.0.1' });
      const urlOfA = `http://127.0.0.1:${(A.app.server.address() as AddressInfo).port}`;
      tokens.A = await A.token();
      tokens.B = await B.token();
      const descriptor = async (app: App) =>
        (await app.inject({ method: 'GET', url: '/network/v1/descriptor' })).json();
      await call(B, tokens.B, 'POST', '/api/v1/network/peers', {
        name: 'A',
        url: urlOfA,
        signing_key: (await descriptor(A)).signing_key,
      });
      await call(A, tokens.A, 'POST', '/api/v1/network/peers', {
        name: 'B',
        url: 'https://93.184.216.34',
        signing_key: (await descriptor(B)).signing_key,
        budget_per_day: 1000,
      });
      await call(A, tokens.A, 'POST', '/api/v1/trust/events', {
        events: [
          {
            event_id: 'fraud-1',
            type: 'fraud.reported',
            entity_id: 'a1'.repeat(32),
            occurred_at: at(),
            linked_identifiers: [{ type: 'phone', hash: PHONE }],
          },
          {
            event_id: 'fraud-2',
            type: 'fraud.reported',
            entity_id: 'a2'.repeat(32),
            occurred_at: at(),
            linked_identifiers: [{ type: 'phone', hash: OTHER_PHONE }],
          },
        ],
      });
      // A's published set made now, as its scheduled tick would: B's first pull would otherwise
      // start A's first refresh and wait at most 3 s for it (src/network/peer-routes.ts), a margin
      // a starved CPU can miss (the flags page then served empty).
      const identityOfA = await loadIdentity(networkDb(A.store.db), resolveKeyEncryption(A.config, A.store));
      await refreshPublished(A.store, identityOfA, { entityIds: A.config.network.commonEntityIds });
    });
    after(async () => {
      await B?.close();
      await A?.close();
    });

    test("4,000 junk hashes: 1,000 queued, the linked phone and another client's identifier matched at the first sync", async () => {
      const noisy = await clientToken(B, 'noisy');
      for (let call_ = 0; call_ < 2; call_++) {
        const requests = Array.from({ length: 100 }, (_, i) => ({
          entity_id: junk(call_ * 100 + i),
          amount: 10,
          currency: 'USD',
          context: {
            linked_identifiers: Array.from({ length: 20 }, (_, j) => ({
              type: 'email',
              hash: junk(100_000 + (call_ * 100 + i) * 20 + j),
            })),
          },
        }));
        await call(B, noisy, 'POST', '/api/v1/trust/score/batch', { requests });
      }
      const quiet = await clientToken(B, 'quiet');
      const QUIET_ENTITY = 'c3'.repeat(32);
      await call(B, quiet, 'POST', '/api/v1/trust/score', {
        entity_id: QUIET_ENTITY,
        amount: 10,
        currency: 'USD',
        context: { linked_identifiers: [{ type: 'phone', hash: OTHER_PHONE }] },
      });
      const VICTIM = 'b2'.repeat(32);
      await call(B, tokens.B!, 'POST', '/api/v1/trust/events', {
        events: [
          {
            event_id: 'linked-later',
            type: 'identifier.linked',
            entity_id: VICTIM,
            occurred_at: at(),
            linked_identifiers: [{ type: 'phone', hash: PHONE }],
          },
        ],
      });

      const sync = await call(B, tokens.B!, 'POST', '/api/v1/network/sync');
      assert.equal(sync.peers.length, 1);
      const db = networkDb(B.store.db);
      const queued = await db
        .selectFrom('network_pending')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('hash', 'like', '0%')
        .executeTakeFirstOrThrow();
      assert.equal(Number(queued.n), 1000, "the noisy client's quota");
      const metrics = (await B.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /^vouch_network_pending_dropped_total 3000$/m);

      const victim = await call(B, tokens.B!, 'GET', `/api/v1/network/matches?entity_id=${VICTIM}`);
      assert.deepEqual(
        victim.peers.map((p: { name: string }) => p.name),
        ['A'],
        'the phone an event linked was resolved first',
      );
      const other = await call(B, tokens.B!, 'GET', `/api/v1/network/matches?entity_id=${QUIET_ENTITY}`);
      assert.deepEqual(other.peers, [], 'no event linked it: a plain score of the entity does not count it');
      assert.equal(other.with_named_identifiers.identifiers, 1);
      assert.deepEqual(
        other.with_named_identifiers.peers.map((p: { name: string }) => p.name),
        ['A'],
        'the quiet client had its turn',
      );
      assert.equal(other.with_named_identifiers.signal.value, 0.5);
      const resolved = await db
        .selectFrom('network_resolved')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(resolved.n), 1000, 'the budget A grants bounds what was asked');
    });
  });
}
