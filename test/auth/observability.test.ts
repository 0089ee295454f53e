// What operators see of authentication: one info line per auth failure and per key change,
// naming ids but never a credential, and the counters vouch_auth_failures_total{reason} and
// vouch_tokens_issued_total on /metrics.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { backends, freshStore, testConfig, bearer, ADMIN_ID, ADMIN_SECRET, type TestStore } from '../helpers/app.ts';
import { buildApp, loggerOptions } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { createClient, deactivateClient } from '../../src/auth/clients.ts';
import { ChangeFeed } from '../../src/store/change-feed.ts';
import { generateApiKey } from '../../src/keys/format.ts';

const TOKEN = '/api/v1/auth/token';
const KEYS = '/api/v1/keys';

for (const backend of backends()) {
  describe(`auth logs and metrics [${backend}]`, () => {
    let fresh: TestStore;
    let app: FastifyInstance;
    const lines: Record<string, unknown>[] = [];
    const raw: string[] = [];
    const logged = (event: string) => lines.filter((l) => l.event === event);

    before(async () => {
      fresh = await freshStore(backend);
      const config = testConfig();
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
            raw.push(line);
            lines.push(JSON.parse(line) as Record<string, unknown>);
          }
          done();
        },
      });
      const bootstrap: { details: Record<string, unknown>; message: string }[] = [];
      await ensureBootstrapAdmin(fresh.store, config, {
        info: (details, message) => bootstrap.push({ details, message }),
      });
      assert.deepEqual(
        bootstrap.map((b) => b.details),
        [{ event: 'bootstrap_admin_created', client_id: ADMIN_ID }],
      );
      app = await buildApp({
        config,
        store: fresh.store,
        logger: { ...(loggerOptions('info') as object), stream: sink },
      });
      await app.ready();
    });

    after(async () => {
      await app.close();
      await fresh.drop();
    });

    test('a wrong secret: one info line with reason wrong_secret, the route and the client id, never the secret; the counter counts it', async () => {
      const secret = 'not-the-secret-4f1d9a';
      assert.equal(
        (await app.inject({ method: 'POST', url: TOKEN, payload: { client_id: ADMIN_ID, client_secret: secret } }))
          .statusCode,
        401,
      );
      const [line] = logged('auth_failure').filter((l) => l.reason === 'wrong_secret');
      assert.ok(line);
      assert.equal(line.level, 30);
      assert.equal(line.client_id, ADMIN_ID);
      assert.equal(line.route, TOKEN);
      assert.ok(!raw.some((l) => l.includes(secret)));
    });

    test('an unknown client id (perhaps a misplaced secret): logged as unknown_client without the id', async () => {
      const misplaced = 'Zm9vYmFyYmF6cXV4cXV1eHF1dXpxdXV6eHh4eHh4eHg';
      await app.inject({
        method: 'POST',
        url: TOKEN,
        payload: { client_id: misplaced, client_secret: 'whatever-it-is' },
      });
      const line = logged('auth_failure').find((l) => l.reason === 'unknown_client');
      assert.ok(line && !('client_id' in line));
      assert.ok(!raw.some((l) => l.includes(misplaced) || l.includes('whatever-it-is')));
    });

    test('invalid API key and invalid token: logged by reason, never the credential', async () => {
      const key = generateApiKey('live');
      assert.equal((await app.inject({ method: 'GET', url: KEYS, headers: { 'x-api-key': key } })).statusCode, 401);
      assert.equal(
        (await app.inject({ method: 'GET', url: KEYS, headers: bearer('eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln') }))
          .statusCode,
        401,
      );
      assert.equal((await app.inject({ method: 'GET', url: KEYS })).statusCode, 401);
      const reasons = logged('auth_failure').map((l) => l.reason);
      for (const reason of ['invalid_api_key', 'invalid_token', 'missing_credentials'])
        assert.ok(reasons.includes(reason), reason);
      assert.ok(!raw.some((l) => l.includes(key) || l.includes('c2ln')));
    });

    test('key creation, rotation and deactivation: one info line each with ids, never the key', async () => {
      const token = (
        await app.inject({ method: 'POST', url: TOKEN, payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET } })
      ).json().access_token as string;
      const created = (
        await app.inject({
          method: 'POST',
          url: KEYS,
          headers: bearer(token),
          payload: { name: 'logged', scopes: ['keys:read'] },
        })
      ).json();
      const rotated = (
        await app.inject({ method: 'POST', url: `${KEYS}/${created.id}/rotate`, headers: bearer(token), payload: {} })
      ).json();
      assert.equal(
        (await app.inject({ method: 'DELETE', url: `${KEYS}/${rotated.id}`, headers: bearer(token) })).statusCode,
        200,
      );
      assert.deepEqual(
        logged('api_key_created').map((l) => l.key_id),
        [created.id],
      );
      assert.deepEqual(
        logged('api_key_rotated').map((l) => [l.key_id, l.successor_id]),
        [[created.id, rotated.id]],
      );
      assert.deepEqual(
        logged('api_key_deactivated').map((l) => l.key_id),
        [rotated.id],
      );
      assert.ok(logged('api_key_created').every((l) => l.principal_id === ADMIN_ID && l.level === 30));
      assert.ok(!raw.some((l) => l.includes(created.key) || l.includes(rotated.key) || l.includes(token)));
    });

    test('client creation and deactivation log through the logger they are given', async () => {
      const seen: Record<string, unknown>[] = [];
      const log = { info: (details: Record<string, unknown>) => seen.push(details) };
      const { client, secret } = await createClient(
        fresh.store.db,
        { name: 'n', role: 'service', scopes: ['keys:read'] },
        log,
      );
      await deactivateClient(fresh.store.db, new ChangeFeed(fresh.store), client.client_id, log);
      await deactivateClient(fresh.store.db, new ChangeFeed(fresh.store), client.client_id, log);
      assert.deepEqual(
        seen.map((d) => [d.event, d.client_id]),
        [
          ['client_created', client.client_id],
          ['client_deactivated', client.client_id],
        ],
      );
      assert.ok(!JSON.stringify(seen).includes(secret));
    });

    test('/metrics: vouch_auth_failures_total by reason and vouch_tokens_issued_total', async () => {
      const before = await app.inject({ method: 'GET', url: '/metrics' });
      const issued = Number(/^vouch_tokens_issued_total (\d+)$/m.exec(before.body)?.[1]);
      assert.ok(issued >= 1, before.body.slice(0, 200));
      await app.inject({ method: 'POST', url: TOKEN, payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET } });
      const body = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.equal(Number(/^vouch_tokens_issued_total (\d+)$/m.exec(body)?.[1]), issued + 1);
      assert.match(body, /^vouch_auth_failures_total\{reason="wrong_secret"\} 1$/m);
      assert.match(body, /^vouch_auth_failures_total\{reason="invalid_api_key"\} 1$/m);
      assert.match(body, /^vouch_auth_failures_total\{reason="missing_credentials"\} 1$/m);
    });
  });
}
