// OAuth interop (docs/api.md, "Authentication"): RFC 8414 metadata, `scope` in the token response, the Basic
// challenge's error, and a stock OAuth client (openid-client) discovering and using the server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { describeEachBackend, backends, startApp, problem, ADMIN_ID, ADMIN_SECRET } from '../helpers/app.ts';
import { SCOPES } from '../../src/lib/principal.ts';
import { loadConfig } from '../../src/config/env.ts';
import { currentSigningKey, freePort, listeningWithDefaults, signToken } from './support.ts';

const METADATA = '/.well-known/oauth-authorization-server';
const OPENID = '/.well-known/openid-configuration';

describeEachBackend(
  'OAuth metadata and token response',
  (ctx) => {
    test('metadata: 200 without credentials, absolute URLs from the request host, the contract members', async () => {
      const res = await ctx().inject({ method: 'GET', url: METADATA, headers: { host: 'vouch.test:8443' } });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.issuer, ctx().config.issuer);
      assert.match(body.issuer, /^http:\/\//, 'the default issuer is a URL');
      assert.equal(body.token_endpoint, 'http://vouch.test:8443/api/v1/auth/token');
      assert.equal(body.jwks_uri, 'http://vouch.test:8443/.well-known/jwks.json');
      assert.deepEqual(body.grant_types_supported, ['client_credentials']);
      assert.deepEqual(body.token_endpoint_auth_methods_supported, ['client_secret_post', 'client_secret_basic']);
      assert.deepEqual(body.scopes_supported, [...SCOPES]);
    });

    test('the same metadata is served at /.well-known/openid-configuration, without credentials', async () => {
      const rfc8414 = await ctx().inject({ method: 'GET', url: METADATA, headers: { host: 'vouch.test:8443' } });
      const openid = await ctx().inject({ method: 'GET', url: OPENID, headers: { host: 'vouch.test:8443' } });
      assert.equal(openid.statusCode, 200, openid.body);
      assert.deepEqual(openid.json(), rfc8414.json());
    });

    test("an issued token's iss is the metadata's issuer", async () => {
      const token = await ctx().token(['keys:read']);
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iss: string };
      assert.equal(claims.iss, (await ctx().inject({ method: 'GET', url: METADATA })).json().issuer);
    });

    test('token response: scope is the granted scopes, space-separated', async () => {
      const c = await ctx().client(['keys:read', 'trust:read']);
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: c.id, client_secret: c.secret, scope: 'trust:read' },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().scope, 'trust:read');
      const all = await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: c.id, client_secret: c.secret },
      });
      assert.equal(all.json().scope, 'keys:read trust:read');
      assert.deepEqual(all.json().scopes, ['keys:read', 'trust:read']);
    });

    test('wrong secret over HTTP Basic: 401 with WWW-Authenticate: Basic realm="vouch", error="invalid_client"', async () => {
      const basic = Buffer.from(`${ADMIN_ID}:wrong-secret-value`).toString('base64');
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials',
      });
      problem(res, 401, 'invalid_client');
      assert.equal(res.headers['www-authenticate'], 'Basic realm="vouch", error="invalid_client"');
    });
  },
  {},
);

describeEachBackend(
  'tokens issued under the former default issuer',
  (ctx) => {
    test('while VOUCH_ISSUER is unset, a token with iss "vouch" (issued before the upgrade) is still accepted; another iss is not', async () => {
      const { key, kid } = await currentSigningKey(ctx().store, ctx().config);
      const get = async (iss: string) =>
        (
          await ctx().inject({
            method: 'GET',
            url: '/api/v1/keys',
            headers: { authorization: `Bearer ${await signToken(key, kid, { claims: { iss } })}` },
          })
        ).statusCode;
      assert.equal(await get('vouch'), 200);
      assert.equal(await get(ctx().config.issuer), 200);
      assert.equal(await get('https://evil.example'), 401);
    });
  },
  {},
);

describeEachBackend(
  'an explicit VOUCH_ISSUER',
  (ctx) => {
    test('is the only iss accepted: "vouch" is refused once the operator has chosen an issuer', async () => {
      const { key, kid } = await currentSigningKey(ctx().store, ctx().config);
      const get = async (iss: string) =>
        (
          await ctx().inject({
            method: 'GET',
            url: '/api/v1/keys',
            headers: { authorization: `Bearer ${await signToken(key, kid, { claims: { iss } })}` },
          })
        ).statusCode;
      assert.equal(await get('https://issuer.example'), 200);
      assert.equal(await get('vouch'), 401);
    });
  },
  {
    ...loadConfig({ VOUCH_ISSUER: 'https://issuer.example' }),
    bootstrapClientId: ADMIN_ID,
    bootstrapClientSecret: ADMIN_SECRET,
  },
);

describeEachBackend(
  'OAuth metadata with VOUCH_PUBLIC_URL',
  (ctx) => {
    test('absolute URLs come from the public URL, whatever the Host header', async () => {
      const body = (await ctx().inject({ method: 'GET', url: METADATA, headers: { host: 'internal:8080' } })).json();
      assert.equal(body.token_endpoint, 'https://risk.example.com/vouch/api/v1/auth/token');
      assert.equal(body.jwks_uri, 'https://risk.example.com/vouch/.well-known/jwks.json');
    });
  },
  { publicUrl: 'https://risk.example.com/vouch' },
);

for (const backend of backends()) {
  test(`openid-client discovers the server over a socket and obtains a client-credentials token [${backend}]`, async (t) => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const app = await startApp(backend, { issuer });
    t.after(() => app.close());
    await app.app.listen({ port, host: '127.0.0.1' });
    for (const auth of [oidc.ClientSecretPost(ADMIN_SECRET), oidc.ClientSecretBasic(ADMIN_SECRET)]) {
      const config = await oidc.discovery(new URL(issuer), ADMIN_ID, undefined, auth, {
        execute: [oidc.allowInsecureRequests],
        algorithm: 'oauth2',
      });
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

// The out-of-the-box case of issue 18 (item 9): no VOUCH_ISSUER, no VOUCH_PUBLIC_URL, and
// openid-client's default discovery (OpenID Connect's well-known path) against the listen address.
for (const backend of backends()) {
  test(`with the default configuration, openid-client's default discovery and a client-credentials grant work [${backend}]`, async (t) => {
    const { config, port } = await listeningWithDefaults(t, backend);
    const issuer = new URL(`http://${config.host}:${port}`);
    const discovered = await oidc.discovery(issuer, ADMIN_ID, ADMIN_SECRET, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    assert.equal(discovered.serverMetadata().issuer, config.issuer);
    const tokens = await oidc.clientCredentialsGrant(discovered, { scope: 'keys:read' });
    assert.equal(tokens.scope, 'keys:read');
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()) as {
      iss: string;
    };
    assert.equal(claims.iss, config.issuer);
    const res = await fetch(`${issuer.origin}/api/v1/keys`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(res.status, 200);
  });
}
