// POST /api/v1/auth/token: JSON and RFC 6749 form, HTTP Basic, down-scoping, every error the
// endpoint can answer, its rate limit, and a real OAuth 2.0 client library against a live socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as oauth from 'oauth4webapi';
import { describeEachBackend, bearer, problem, ADMIN_ID, ADMIN_SECRET } from '../helpers/app.ts';
import { SCOPES } from '../../src/lib/principal.ts';
import { header } from './support.ts';

const TOKEN = '/api/v1/auth/token';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
/** RFC 6749 §2.3.1: id and secret are each form-url-encoded before the Basic encoding. */
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describeEachBackend('token endpoint', (ctx) => {
  test('JSON client credentials: 200 with access_token, token_type Bearer, integer expires_in, scopes, role and Cache-Control no-store', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
    });
    assert.equal(res.statusCode, 200);
    assert.match(header(res, 'content-type'), /^application\/json/);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'access_token',
      'client_name',
      'environment',
      'expires_in',
      'role',
      'scope',
      'scopes',
      'token_type',
    ]);
    assert.equal(typeof body.access_token, 'string');
    assert.equal(body.token_type, 'Bearer');
    assert.ok(Number.isInteger(body.expires_in));
    assert.equal(body.expires_in, ctx().config.tokenTtlSeconds);
    assert.deepEqual([...body.scopes].sort(), [...SCOPES].sort());
    assert.equal(body.role, 'admin');
    assert.equal(body.client_name, 'bootstrap admin');
  });

  test('issued JWT: RFC 9068 header typ at+jwt, alg EdDSA, kid, and claims iss, aud, sub, client_id, iat, exp, jti, scope, role: 200', async () => {
    const c = await ctx().client(['keys:read', 'trust:read'], 'operator');
    const before = Math.floor(Date.now() / 1000);
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: c.id, client_secret: c.secret },
    });
    assert.equal(res.statusCode, 200);
    const token = res.json().access_token as string;
    const head = decodeProtectedHeader(token);
    assert.equal(head.typ, 'at+jwt');
    assert.equal(head.alg, 'EdDSA');
    assert.equal(typeof head.kid, 'string');
    const claims = decodeJwt(token);
    assert.equal(claims.iss, ctx().config.issuer);
    assert.equal(claims.aud, ctx().config.audience);
    assert.equal(claims.sub, c.id);
    assert.equal(claims.client_id, c.id);
    assert.ok(Number.isInteger(claims.iat) && claims.iat! >= before - 1 && claims.iat! <= before + 5);
    assert.equal(claims.exp, claims.iat! + ctx().config.tokenTtlSeconds);
    assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
    assert.equal(claims.scope, 'keys:read trust:read');
    assert.equal(claims.role, 'operator');
    // Two tokens never share a jti.
    const again = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: c.id, client_secret: c.secret },
    });
    assert.notEqual(decodeJwt(again.json().access_token).jti, claims.jti);
  });

  test('RFC 6749 form with grant_type=client_credentials and credentials in the body: 200, token works', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: FORM,
      payload: form({ grant_type: 'client_credentials', client_id: ADMIN_ID, client_secret: ADMIN_SECRET }),
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.json().token_type, 'Bearer');
    const list = await ctx().inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(res.json().access_token) });
    assert.equal(list.statusCode, 200);
  });

  test('RFC 6749 form with credentials in HTTP Basic (form-url-encoded id and secret): 200', async () => {
    const c = await ctx().client(['keys:read']);
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: { ...FORM, authorization: basic(c.id, c.secret) },
      payload: form({ grant_type: 'client_credentials', scope: 'keys:read' }),
    });
    assert.equal(res.statusCode, 200);
    assert.equal(decodeJwt(res.json().access_token).sub, c.id);
    assert.deepEqual(res.json().scopes, ['keys:read']);
  });

  test('HTTP Basic with a secret holding + and %, sent form-encoded (RFC 6749) or raw (curl -u): 200 both ways', async () => {
    const { createClient } = await import('../../src/auth/clients.ts');
    const secret = 'p+ss%20w:rd/with spaces';
    const { client } = await createClient(ctx().store.db, {
      name: 'special',
      role: 'service',
      scopes: ['keys:read'],
      secret,
    });
    const raw = `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}`;
    for (const authorization of [basic(client.client_id, secret), raw]) {
      const res = await ctx().inject({
        method: 'POST',
        url: TOKEN,
        headers: { ...FORM, authorization },
        payload: form({ grant_type: 'client_credentials' }),
      });
      assert.equal(res.statusCode, 200, `${authorization}: ${res.body}`);
    }
    problem(
      await ctx().inject({
        method: 'POST',
        url: TOKEN,
        headers: { ...FORM, authorization: basic(client.client_id, 'p ss%20w:rd/with spaces') },
        payload: form({ grant_type: 'client_credentials' }),
      }),
      401,
      'invalid_client',
    );
  });

  test('JSON body with credentials in HTTP Basic: 200', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: { authorization: basic(ADMIN_ID, ADMIN_SECRET) },
      payload: { scope: 'keys:read' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().scopes, ['keys:read']);
  });

  test('scope down-scoping: 200 with only the requested scopes, and the token is refused what it dropped (403)', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET, scope: 'keys:read  trust:read keys:read' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().scopes, ['keys:read', 'trust:read']);
    assert.equal(decodeJwt(res.json().access_token).scope, 'keys:read trust:read');
    const token = res.json().access_token as string;
    assert.equal((await ctx().inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(token) })).statusCode, 200);
    const create = await ctx().inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: bearer(token),
      payload: { name: 'x', scopes: ['keys:read'] },
    });
    problem(create, 403, 'insufficient_scope');
  });

  test('scope the client does not hold: 400 invalid_scope with error invalid_scope', async () => {
    const c = await ctx().client(['keys:read']);
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: c.id, client_secret: c.secret, scope: 'keys:read keys:write' },
    });
    const body = problem(res, 400, 'invalid_scope');
    assert.equal(body.error, 'invalid_scope');
    assert.match(String(body.error_description), /keys:write/);
    const unknown = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: c.id, client_secret: c.secret, scope: 'root' },
    });
    problem(unknown, 400, 'invalid_scope');
    const blank = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: c.id, client_secret: c.secret, scope: '   ' },
    });
    problem(blank, 400, 'invalid_scope');
  });

  test('missing client_secret: 400 validation_failed with error invalid_request naming the field', async () => {
    const res = await ctx().inject({ method: 'POST', url: TOKEN, payload: { client_id: ADMIN_ID } });
    const body = problem(res, 400, 'validation_failed');
    assert.equal(body.error, 'invalid_request');
    assert.equal(typeof body.error_description, 'string');
    assert.deepEqual(body.errors, [{ field: 'client_secret', message: 'is required' }]);
  });

  test('missing client_id and client_secret in a form: 400 validation_failed with error invalid_request', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: FORM,
      payload: form({ grant_type: 'client_credentials' }),
    });
    const body = problem(res, 400, 'validation_failed');
    assert.equal(body.error, 'invalid_request');
    assert.deepEqual(
      (body.errors as { field: string }[]).map((e) => e.field),
      ['client_id', 'client_secret'],
    );
  });

  test('wrong types and unknown fields: 400 validation_failed with error invalid_request', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: 42, client_secret: ADMIN_SECRET, username: 'x' },
    });
    const body = problem(res, 400, 'validation_failed');
    assert.equal(body.error, 'invalid_request');
    const fields = body.errors as { field: string; message: string }[];
    assert.ok(fields.some((e) => e.field === 'client_id'));
    assert.ok(fields.some((e) => e.field === 'username' && e.message === 'is not a known field'));
  });

  test('unsupported grant_type: 400 with error unsupported_grant_type', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: FORM,
      payload: form({ grant_type: 'password', client_id: ADMIN_ID, client_secret: ADMIN_SECRET }),
    });
    const body = problem(res, 400, 'validation_failed');
    assert.equal(body.error, 'unsupported_grant_type');
  });

  test('wrong secret: 401 invalid_client with error invalid_client', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: ADMIN_ID, client_secret: `${ADMIN_SECRET}x` },
    });
    const body = problem(res, 401, 'invalid_client');
    assert.equal(body.error, 'invalid_client');
    assert.doesNotMatch(res.body, new RegExp(ADMIN_SECRET));
  });

  test('unknown client: 401 invalid_client, same answer as a wrong secret', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: 'cli_nobody', client_secret: ADMIN_SECRET },
    });
    const body = problem(res, 401, 'invalid_client');
    const wrong = problem(
      await ctx().inject({ method: 'POST', url: TOKEN, payload: { client_id: ADMIN_ID, client_secret: 'nope' } }),
      401,
      'invalid_client',
    );
    assert.equal(body.detail, wrong.detail);
    // Ids that cannot exist (a NUL byte, spaces) are unknown clients too, not a store error.
    problem(
      await ctx().inject({ method: 'POST', url: TOKEN, payload: { client_id: 'a\u0000b', client_secret: 'x' } }),
      401,
      'invalid_client',
    );
    problem(
      await ctx().inject({ method: 'POST', url: TOKEN, payload: { client_id: 'a b', client_secret: 'x' } }),
      401,
      'invalid_client',
    );
  });

  test('error asked for as application/json (RFC 6749 §5.2): 401 with the same document labelled application/json', async () => {
    const payload = { client_id: ADMIN_ID, client_secret: 'wrong' };
    const json = await ctx().inject({ method: 'POST', url: TOKEN, headers: { accept: 'application/json' }, payload });
    assert.equal(json.statusCode, 401);
    assert.match(header(json, 'content-type'), /^application\/json/);
    assert.equal(json.json().error, 'invalid_client');
    assert.equal(json.json().code, 'invalid_client');
    const either = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: { accept: 'application/problem+json, application/json' },
      payload,
    });
    problem(either, 401, 'invalid_client');
  });

  test('wrong secret in HTTP Basic: 401 invalid_client with WWW-Authenticate Basic', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: { ...FORM, authorization: basic(ADMIN_ID, 'wrong') },
      payload: form({ grant_type: 'client_credentials' }),
    });
    problem(res, 401, 'invalid_client');
    assert.match(header(res, 'www-authenticate'), /^Basic realm="vouch"/);
  });

  test('deactivated client: 401 invalid_client', async () => {
    const { deactivateClient } = await import('../../src/auth/clients.ts');
    const { ChangeFeed } = await import('../../src/store/change-feed.ts');
    const c = await ctx().client(['keys:read']);
    assert.equal(
      (await ctx().inject({ method: 'POST', url: TOKEN, payload: { client_id: c.id, client_secret: c.secret } }))
        .statusCode,
      200,
    );
    await deactivateClient(ctx().store.db, new ChangeFeed(ctx().store), c.id);
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      payload: { client_id: c.id, client_secret: c.secret },
    });
    problem(res, 401, 'invalid_client');
  });

  test('oauth4webapi (a real OAuth 2.0 client) obtains a token by client_credentials over HTTP and lists keys with it: 200', async () => {
    const { app } = ctx();
    if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    const as: oauth.AuthorizationServer = { issuer: base, token_endpoint: `${base}${TOKEN}` };
    const c = await ctx().client(['keys:read', 'keys:write']);
    const client: oauth.Client = { client_id: c.id };
    const insecure = { [oauth.allowInsecureRequests]: true };
    for (const auth of [oauth.ClientSecretBasic(c.secret), oauth.ClientSecretPost(c.secret)]) {
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        auth,
        new URLSearchParams({ scope: 'keys:read' }),
        insecure,
      );
      const result = await oauth.processClientCredentialsResponse(as, client, response);
      assert.equal(result.token_type, 'bearer');
      assert.equal(result.expires_in, ctx().config.tokenTtlSeconds);
      const list = await fetch(`${base}/api/v1/keys`, { headers: { authorization: `Bearer ${result.access_token}` } });
      assert.equal(list.status, 200);
      assert.deepEqual(Object.keys((await list.json()) as object).sort(), ['data', 'next_cursor']);
    }
    // The library surfaces our RFC 6749 error members.
    const bad = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost('wrong'),
      new URLSearchParams(),
      insecure,
    );
    await assert.rejects(oauth.processClientCredentialsResponse(as, client, bad), (err: unknown) => {
      assert.ok(err instanceof oauth.ResponseBodyError);
      assert.equal(err.error, 'invalid_client');
      assert.equal(err.status, 401);
      return true;
    });
    const scoped = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(c.secret),
      new URLSearchParams({ scope: 'audit:read' }),
      insecure,
    );
    await assert.rejects(
      oauth.processClientCredentialsResponse(as, client, scoped),
      (err: unknown) => err instanceof oauth.ResponseBodyError && err.error === 'invalid_scope',
    );
  });
});

describeEachBackend(
  'token endpoint rate limit',
  (ctx) => {
    test('over the per-IP limit: 429 rate_limited with Retry-After and RateLimit headers', async () => {
      const ip = '203.0.113.7';
      for (let i = 0; i < 3; i++) {
        const ok = await ctx().inject({
          method: 'POST',
          url: TOKEN,
          remoteAddress: ip,
          payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
        });
        assert.equal(ok.statusCode, 200, `request ${i + 1}`);
      }
      const res = await ctx().inject({
        method: 'POST',
        url: TOKEN,
        remoteAddress: ip,
        payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
      });
      const body = problem(res, 429, 'rate_limited');
      assert.equal(body.error, 'invalid_request');
      const retry = Number(res.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry > 0 && retry <= 60, `Retry-After ${res.headers['retry-after']}`);
      assert.equal(res.headers['ratelimit-limit'], '3');
      assert.equal(res.headers['ratelimit-remaining'], '0');
      // Another address is not affected (with another client: the admin's own per-client budget is spent too).
      const c = await ctx().client(['keys:read']);
      problem(
        await ctx().inject({
          method: 'POST',
          url: TOKEN,
          remoteAddress: ip,
          payload: { client_id: c.id, client_secret: c.secret },
        }),
        429,
        'rate_limited',
      );
      const other = await ctx().inject({
        method: 'POST',
        url: TOKEN,
        remoteAddress: '203.0.113.8',
        payload: { client_id: c.id, client_secret: c.secret },
      });
      assert.equal(other.statusCode, 200);
    });

    test('one client from many addresses: no per-client ceiling, and wrong secrets elsewhere never lock out the right one: 200 (docs/api.md, "Limits")', async () => {
      const c = await ctx().client(['keys:read']);
      for (let i = 0; i < 4; i++) {
        const ok = await ctx().inject({
          method: 'POST',
          url: TOKEN,
          remoteAddress: `198.51.100.${i + 1}`,
          payload: { client_id: c.id, client_secret: c.secret },
        });
        assert.equal(ok.statusCode, 200, `request ${i + 1}`);
      }
      // Failures are counted per client and source address (test/auth/hardening.test.ts).
      const d = await ctx().client(['keys:read']);
      for (let i = 0; i < 3; i++) {
        problem(
          await ctx().inject({
            method: 'POST',
            url: TOKEN,
            remoteAddress: `192.0.2.${i + 1}`,
            payload: { client_id: d.id, client_secret: `guess-${i}` },
          }),
          401,
          'invalid_client',
        );
      }
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: TOKEN,
            remoteAddress: '192.0.2.50',
            payload: { client_id: d.id, client_secret: d.secret },
          })
        ).statusCode,
        200,
      );
    });
  },
  { rateLimit: { perSecond: 100_000, burst: 200_000, tokenPerMinute: 3, tokenFailuresPerMinute: 100_000 } },
);
