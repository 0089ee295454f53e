// Secrets never reach the logs: client secrets, access tokens and API keys, whichever way they
// were sent (JSON, form, Basic, Bearer, X-API-Key) and whether the request succeeded or failed.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { backends, freshStore, testConfig, ADMIN_ID, ADMIN_SECRET, type TestStore } from '../helpers/app.ts';
import { buildApp, loggerOptions } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { createClient } from '../../src/auth/clients.ts';

for (const backend of backends()) {
  describe(`logs [${backend}]`, () => {
    const lines: string[] = [];
    let fresh: TestStore;
    let app: FastifyInstance;

    before(async () => {
      fresh = await freshStore(backend);
      const config = testConfig({ logLevel: 'trace' });
      await ensureBootstrapAdmin(fresh.store, config);
      const stream = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const options = loggerOptions('trace') as Record<string, unknown>;
      app = await buildApp({ config, store: fresh.store, logger: { ...options, level: 'trace', stream } });
      await app.ready();
    });

    after(async () => {
      await app.close();
      await fresh.drop();
    });

    test('secrets, access tokens and API keys never appear in the logs (info and trace), across successes and failures', async () => {
      const { client, secret } = await createClient(fresh.store.db, {
        name: 'logged',
        role: 'service',
        scopes: ['keys:read', 'keys:write'],
      });
      const secrets: string[] = [ADMIN_SECRET, secret];

      // Token requests: JSON, form, Basic, and failures that echo nothing.
      const json = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
      });
      assert.equal(json.statusCode, 200);
      const adminToken = json.json().access_token as string;
      const form = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: client.client_id,
          client_secret: secret,
        }).toString(),
      });
      assert.equal(form.statusCode, 200);
      const basic = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}` },
        payload: {},
      });
      assert.equal(basic.statusCode, 200);
      const clientToken = basic.json().access_token as string;
      const wrongSecret = 'wrong-secret-that-must-not-be-logged';
      secrets.push(wrongSecret);
      assert.equal(
        (
          await app.inject({
            method: 'POST',
            url: '/api/v1/auth/token',
            payload: { client_id: client.client_id, client_secret: wrongSecret },
          })
        ).statusCode,
        401,
      );
      assert.equal(
        (
          await app.inject({
            method: 'POST',
            url: '/api/v1/auth/token',
            payload: { client_secret: wrongSecret, extra: wrongSecret },
          })
        ).statusCode,
        400,
      );

      // Key creation (the response carries the key) and use of the key and of the tokens.
      const created = await app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: { authorization: `Bearer ${clientToken}` },
        payload: { name: 'logged key', scopes: ['keys:read'] },
      });
      assert.equal(created.statusCode, 201);
      const apiKey = created.json().key as string;
      const rotated = await app.inject({
        method: 'POST',
        url: `/api/v1/keys/${created.json().id}/rotate`,
        headers: { authorization: `Bearer ${adminToken}` },
        payload: { grace_period_seconds: 60 },
      });
      assert.equal(rotated.statusCode, 201);
      const rotatedKey = rotated.json().key as string;
      assert.equal(
        (await app.inject({ method: 'GET', url: '/api/v1/keys?limit=5', headers: { 'x-api-key': apiKey } })).statusCode,
        200,
      );
      assert.equal(
        (await app.inject({ method: 'GET', url: '/api/v1/keys', headers: { authorization: `Bearer ${adminToken}` } }))
          .statusCode,
        200,
      );
      assert.equal(
        (
          await app.inject({
            method: 'GET',
            url: '/api/v1/keys',
            headers: { 'x-api-key': `${apiKey.slice(0, -1)}${apiKey.endsWith('x') ? 'y' : 'x'}` },
          })
        ).statusCode,
        401,
      );
      assert.equal(
        (await app.inject({ method: 'GET', url: '/api/v1/keys', headers: { authorization: `Bearer ${adminToken}x` } }))
          .statusCode,
        401,
      );
      // A key pasted where it does not belong: in the body and the query string.
      assert.equal(
        (
          await app.inject({
            method: 'POST',
            url: '/api/v1/keys',
            headers: { authorization: `Bearer ${adminToken}` },
            payload: { name: 'x', scopes: ['keys:read'], key: apiKey },
          })
        ).statusCode,
        400,
      );
      assert.equal(
        (
          await app.inject({
            method: 'GET',
            url: `/api/v1/keys?cursor=${apiKey}`,
            headers: { authorization: `Bearer ${adminToken}` },
          })
        ).statusCode,
        400,
      );

      const output = lines.join('');
      assert.ok(lines.length > 10, 'the logger captured the requests');
      assert.match(output, /"msg":"incoming request"/);
      assert.match(output, /"msg":"request completed"/);
      for (const value of [...secrets, adminToken, clientToken, apiKey, rotatedKey]) {
        assert.ok(!output.includes(value), `a secret leaked into the logs: ${value.slice(0, 12)}…`);
        // Nor a recognisable piece of it (the signature part of a JWT, the random part of a key).
        assert.ok(!output.includes(value.slice(-20)), `part of a secret leaked into the logs: …${value.slice(-8)}`);
      }
    });
  });
}
