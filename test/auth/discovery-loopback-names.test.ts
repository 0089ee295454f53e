// Issue 29, item 16: without VOUCH_ISSUER or VOUCH_PUBLIC_URL the server listens on 127.0.0.1 and
// every README command says localhost. Discovery must work through either name, and a token issued
// through one name must verify when presented through the other; an issuer nobody configured must not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { backends, ADMIN_ID, ADMIN_SECRET } from '../helpers/app.ts';
import { listeningWithDefaults } from './support.ts';
import { loadConfig } from '../../src/config/env.ts';
import { tokenIssuers } from '../../src/auth/issuer.ts';

const issOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iss: string }).iss;

for (const backend of backends()) {
  test(`discovery and a client-credentials grant work at http://127.0.0.1:PORT and http://localhost:PORT, and the tokens verify through either name [${backend}]`, async (t) => {
    const { config, port } = await listeningWithDefaults(t, backend);
    const tokens: Record<string, string> = {};
    for (const base of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const issuer = new URL(base);
      const response = await oauth.discoveryRequest(issuer, {
        algorithm: 'oauth2',
        [oauth.allowInsecureRequests]: true,
      });
      // processDiscoveryResponse throws OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED when `issuer` differs from the URL used.
      const as = await oauth.processDiscoveryResponse(issuer, response);
      assert.equal(as.issuer, base);
      assert.equal(as.token_endpoint, `${base}/api/v1/auth/token`);
      const client: oauth.Client = { client_id: ADMIN_ID };
      const grant = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(ADMIN_SECRET),
        new URLSearchParams({ scope: 'keys:read' }),
        { [oauth.allowInsecureRequests]: true },
      );
      const result = await oauth.processClientCredentialsResponse(as, client, grant);
      assert.equal(issOf(result.access_token), base, 'the token is issued under the name it was asked through');
      tokens[base] = result.access_token;
    }
    for (const token of Object.values(tokens)) {
      for (const base of Object.keys(tokens)) {
        const res = await fetch(`${base}/api/v1/keys`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.status, 200, `a token issued as ${issOf(token)} used at ${base}`);
      }
    }
    // A Host header naming anything else gets the configured issuer, never its own name.
    const forged = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`, {
      headers: { host: `evil.example:${port}` },
    });
    assert.equal(((await forged.json()) as { issuer: string }).issuer, config.issuer);
  });
}

test('the accepted issuers: loopback names of the listen port only when nothing is configured', () => {
  const loopback = tokenIssuers(loadConfig({ PORT: '9100' }));
  assert.equal(loopback.issuer, 'http://127.0.0.1:9100');
  assert.deepEqual(loopback.aliases, ['http://localhost:9100', 'http://[::1]:9100']);
  // The image listens on every interface: its default issuer is a usable URL, not http://0.0.0.0.
  const everywhere = tokenIssuers(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }));
  assert.equal(everywhere.issuer, 'http://localhost:8080');
  assert.deepEqual(everywhere.aliases, ['http://127.0.0.1:8080', 'http://[::1]:8080']);
  assert.deepEqual(
    tokenIssuers(loadConfig({ HOST: '10.1.2.3' })).aliases,
    [],
    'a non-loopback listen address has no aliases',
  );
  assert.deepEqual(tokenIssuers(loadConfig({ VOUCH_PUBLIC_URL: 'https://risk.example.com' })).aliases, []);
  assert.deepEqual(tokenIssuers(loadConfig({ VOUCH_ISSUER: 'https://issuer.example' })).aliases, []);
});
