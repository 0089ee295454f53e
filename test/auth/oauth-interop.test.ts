// OAuth interop (CONTRACT §3): RFC 8414 metadata, `scope` in the token response, the Basic
// challenge's error, and a stock OAuth client (openid-client) discovering and using the server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import * as oidc from 'openid-client';
import { describeEachBackend, backends, startApp, problem, ADMIN_ID, ADMIN_SECRET } from '../helpers/app.ts';
import { SCOPES } from '../../src/auth/principal.ts';

const METADATA = '/.well-known/oauth-authorization-server';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeEachBackend('OAuth metadata and token response', (ctx) => {
  test('metadata: 200 without credentials, absolute URLs from the request host, the contract members', async () => {
    const res = await ctx().inject({ method: 'GET', url: METADATA, headers: { host: 'vouch.test:8443' } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.issuer, 'vouch');
    assert.equal(body.token_endpoint, 'http://vouch.test:8443/api/v1/auth/token');
    assert.equal(body.jwks_uri, 'http://vouch.test:8443/.well-known/jwks.json');
    assert.deepEqual(body.grant_types_supported, ['client_credentials']);
    assert.deepEqual(body.token_endpoint_auth_methods_supported, ['client_secret_post', 'client_secret_basic']);
    assert.deepEqual(body.scopes_supported, [...SCOPES]);
  });

  test('token response: scope is the granted scopes, space-separated', async () => {
    const c = await ctx().client(['keys:read', 'trust:read']);
    const res = await ctx().inject({ method: 'POST', url: '/api/v1/auth/token', payload: { client_id: c.id, client_secret: c.secret, scope: 'trust:read' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().scope, 'trust:read');
    const all = await ctx().inject({ method: 'POST', url: '/api/v1/auth/token', payload: { client_id: c.id, client_secret: c.secret } });
    assert.equal(all.json().scope, 'keys:read trust:read');
    assert.deepEqual(all.json().scopes, ['keys:read', 'trust:read']);
  });

  test('wrong secret over HTTP Basic: 401 with WWW-Authenticate: Basic realm="vouch", error="invalid_client"', async () => {
    const basic = Buffer.from(`${ADMIN_ID}:wrong-secret-value`).toString('base64');
    const res = await ctx().inject({ method: 'POST', url: '/api/v1/auth/token', headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' });
    problem(res, 401, 'invalid_client');
    assert.equal(res.headers['www-authenticate'], 'Basic realm="vouch", error="invalid_client"');
  });
}, {});

describeEachBackend('OAuth metadata with VOUCH_PUBLIC_URL', (ctx) => {
  test('absolute URLs come from the public URL, whatever the Host header', async () => {
    const body = (await ctx().inject({ method: 'GET', url: METADATA, headers: { host: 'internal:8080' } })).json();
    assert.equal(body.token_endpoint, 'https://risk.example.com/vouch/api/v1/auth/token');
    assert.equal(body.jwks_uri, 'https://risk.example.com/vouch/.well-known/jwks.json');
  });
}, { publicUrl: 'https://risk.example.com/vouch' });

for (const backend of backends()) {
  test(`openid-client discovers the server over a socket and obtains a client-credentials token [${backend}]`, async (t) => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const app = await startApp(backend, { issuer });
    t.after(() => app.close());
    await app.app.listen({ port, host: '127.0.0.1' });
    for (const auth of [oidc.ClientSecretPost(ADMIN_SECRET), oidc.ClientSecretBasic(ADMIN_SECRET)]) {
      const config = await oidc.discovery(new URL(issuer), ADMIN_ID, undefined, auth, { execute: [oidc.allowInsecureRequests], algorithm: 'oauth2' });
      assert.equal(config.serverMetadata().token_endpoint, `${issuer}/api/v1/auth/token`);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'trust:read keys:read' });
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, 'trust:read keys:read');
      assert.ok(tokens.expires_in! > 0);
      const res = await fetch(`${issuer}/api/v1/keys`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(res.status, 200);
    }
  });
}
