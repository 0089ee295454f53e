// The bearer-token attack matrix: every forged, altered, stale or foreign token is a 401 with
// error="invalid_token"; header misuse and missing scopes get their own answers.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SignJWT, generateKeyPair, type JWK } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { describeEachBackend, bearer, problem, ADMIN_ID } from '../helpers/app.ts';
import { deactivateClient } from '../../src/auth/clients.ts';
import { ChangeFeed } from '../../src/store/change-feed.ts';
import { b64url, currentSigningKey, eventually, header, secondStore, signToken, tamper } from './support.ts';

const KEYS = '/api/v1/keys';

function invalidToken(res: LightMyRequestResponse): void {
  problem(res, 401, 'unauthenticated');
  assert.equal(header(res, 'www-authenticate'), 'Bearer realm="vouch", error="invalid_token"');
}

describeEachBackend('bearer token attacks', (ctx) => {
  let signing: Awaited<ReturnType<typeof currentSigningKey>>;
  const get = (token: string) => ctx().inject({ method: 'GET', url: KEYS, headers: bearer(token) });

  before(async () => {
    signing = await currentSigningKey(ctx().store, ctx().config);
  });

  test('control: a token signed with the service key and every claim right: 200', async () => {
    const res = await get(await signToken(signing.key, signing.kid));
    assert.equal(res.statusCode, 200);
  });

  test('alg none token: 401 invalid_token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: 'vouch',
      aud: 'vouch-api',
      sub: ADMIN_ID,
      client_id: ADMIN_ID,
      iat: now,
      exp: now + 600,
      jti: randomUUID(),
      scope: 'keys:read',
      role: 'admin',
    };
    for (const alg of ['none', 'None', 'NONE']) {
      const token = `${b64url({ alg, typ: 'at+jwt', kid: signing.kid })}.${b64url(claims)}.`;
      invalidToken(await get(token));
    }
    // The same with a junk signature part.
    invalidToken(await get(`${b64url({ alg: 'none', typ: 'at+jwt', kid: signing.kid })}.${b64url(claims)}.AAAA`));
  });

  test('HS256 token signed with the public key bytes as the HMAC secret: 401 invalid_token', async () => {
    const raw = Buffer.from(String(signing.publicJwk.x), 'base64url');
    const jwksText = (await ctx().inject({ method: 'GET', url: '/.well-known/jwks.json' })).body;
    for (const secret of [
      new Uint8Array(raw),
      new TextEncoder().encode(String(signing.publicJwk.x)),
      new TextEncoder().encode(JSON.stringify(signing.publicJwk)),
      new TextEncoder().encode(jwksText),
    ]) {
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ client_id: ADMIN_ID, scope: 'keys:read', role: 'admin' })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: signing.kid })
        .setIssuer('vouch')
        .setAudience('vouch-api')
        .setSubject(ADMIN_ID)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .setJti(randomUUID())
        .sign(secret);
      invalidToken(await get(token));
    }
  });

  test('tampered payload (scope widened, signature kept): 401 invalid_token', async () => {
    const token = await ctx().token(['keys:read']);
    assert.equal((await get(token)).statusCode, 200);
    const widened = tamper(token, (c) => {
      c.scope = 'keys:read keys:write audit:read';
    });
    const res = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: bearer(widened),
      payload: { name: 'x', scopes: ['keys:read'] },
    });
    invalidToken(res);
    invalidToken(
      await get(
        tamper(token, (c) => {
          c.role = 'admin';
        }),
      ),
    );
    invalidToken(
      await get(
        tamper(token, (c) => {
          c.sub = ADMIN_ID;
          c.client_id = ADMIN_ID;
        }),
      ),
    );
    // A flipped signature byte is caught too.
    const sig = token.slice(token.lastIndexOf('.') + 1);
    const flipped = Buffer.from(sig, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    invalidToken(await get(`${token.slice(0, token.lastIndexOf('.'))}.${flipped.toString('base64url')}`));
  });

  test('expired token (exp beyond the 30 s leeway): 401 invalid_token', async () => {
    const now = Math.floor(Date.now() / 1000);
    invalidToken(await get(await signToken(signing.key, signing.kid, { claims: { iat: now - 1000, exp: now - 60 } })));
  });

  test('token expired within the 30 s leeway: 200', async () => {
    const now = Math.floor(Date.now() / 1000);
    // A lifetime of 900 s (the configured one): a longer one is refused on its own (hardening.test.ts).
    const res = await get(await signToken(signing.key, signing.kid, { claims: { iat: now - 910, exp: now - 10 } }));
    assert.equal(res.statusCode, 200);
  });

  test('wrong iss: 401 invalid_token', async () => {
    invalidToken(await get(await signToken(signing.key, signing.kid, { claims: { iss: 'https://evil.example' } })));
  });

  test('wrong aud: 401 invalid_token', async () => {
    invalidToken(await get(await signToken(signing.key, signing.kid, { claims: { aud: 'another-api' } })));
    invalidToken(await get(await signToken(signing.key, signing.kid, { claims: { aud: ['another-api'] } })));
  });

  test('unknown kid: 401 invalid_token', async () => {
    invalidToken(await get(await signToken(signing.key, randomUUID())));
    invalidToken(await get(await signToken(signing.key, signing.kid, { header: { kid: undefined } })));
  });

  test('token signed by a foreign Ed25519 key with the right kid: 401 invalid_token', async () => {
    const foreign = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    invalidToken(await get(await signToken(foreign.privateKey, signing.kid)));
  });

  test('wrong typ (JWT instead of at+jwt), missing jti, or client_id unlike sub: 401 invalid_token', async () => {
    invalidToken(await get(await signToken(signing.key, signing.kid, { header: { typ: 'JWT' } })));
    invalidToken(await get(await signToken(signing.key, signing.kid, { claims: { jti: undefined } })));
    invalidToken(await get(await signToken(signing.key, signing.kid, { claims: { client_id: 'someone-else' } })));
    invalidToken(await get(await signToken(signing.key, signing.kid, { claims: { role: 'root' } })));
  });

  test('a JWK embedded in the header is not trusted: 401 invalid_token', async () => {
    const foreign = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const { exportJWK } = await import('jose');
    const jwk = (await exportJWK(foreign.publicKey)) as JWK;
    invalidToken(await get(await signToken(foreign.privateKey, signing.kid, { header: { jwk } })));
  });

  test('deactivated client (by another process, as `vouch clients deactivate` does): its token 401 invalid_token on the next request', async () => {
    const c = await ctx().client(['keys:read', 'keys:write']);
    const token = await ctx().token(['keys:read', 'keys:write']);
    const own = (
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: c.id, client_secret: c.secret },
      })
    ).json().access_token as string;
    assert.equal((await get(own)).statusCode, 200);
    const created = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: bearer(own),
      payload: { name: 'k', scopes: ['keys:read'] },
    });
    const apiKey = created.json().key as string;
    assert.equal((await ctx().inject({ method: 'GET', url: KEYS, headers: { 'x-api-key': apiKey } })).statusCode, 200);

    const other = secondStore(ctx().store);
    try {
      await deactivateClient(other.db, new ChangeFeed(other), c.id);
    } finally {
      await other.close();
    }
    if (ctx().backend === 'sqlite') {
      // SQLite: seen before the very next request.
      invalidToken(await get(own));
    } else {
      // PostgreSQL: the NOTIFY lands a moment after the commit.
      await eventually(async () => (await get(own)).statusCode === 401);
      invalidToken(await get(own));
    }
    // The client's API keys die with it; other clients are unaffected.
    invalidToken(await ctx().inject({ method: 'GET', url: KEYS, headers: { 'x-api-key': apiKey } }));
    assert.equal((await get(token)).statusCode, 200);
  });

  test('non-Bearer Authorization scheme (Basic): 401 with a plain Bearer challenge', async () => {
    const res = await ctx().inject({
      method: 'GET',
      url: KEYS,
      headers: { authorization: `Basic ${Buffer.from('admin-test:secret').toString('base64')}` },
    });
    problem(res, 401, 'unauthenticated');
    assert.equal(header(res, 'www-authenticate'), 'Bearer realm="vouch"');
    const digest = await ctx().inject({ method: 'GET', url: KEYS, headers: { authorization: 'Digest username="a"' } });
    problem(digest, 401, 'unauthenticated');
    // "Bearerx" is another scheme, not a Bearer token.
    problem(
      await ctx().inject({ method: 'GET', url: KEYS, headers: { authorization: 'Bearerxyz abc' } }),
      401,
      'unauthenticated',
    );
  });

  test('Bearer with a malformed or empty token: 401 invalid_token', async () => {
    for (const value of [
      'Bearer',
      'Bearer ',
      'Bearer a b',
      'Bearer {json}',
      'Bearer not.a.jwt',
      'bearer eyJ.eyJ.sig',
    ]) {
      invalidToken(await ctx().inject({ method: 'GET', url: KEYS, headers: { authorization: value } }));
    }
  });

  test('no credentials: 401 unauthenticated with a plain challenge and no error', async () => {
    const res = await ctx().inject({ method: 'GET', url: KEYS });
    problem(res, 401, 'unauthenticated');
    assert.equal(header(res, 'www-authenticate'), 'Bearer realm="vouch"');
  });

  test('both Authorization and X-API-Key: 400 invalid_request', async () => {
    const token = await ctx().token();
    const key = (
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: bearer(token),
        payload: { name: 'both', scopes: ['keys:read'] },
      })
    ).json().key as string;
    problem(
      await ctx().inject({ method: 'GET', url: KEYS, headers: { ...bearer(token), 'x-api-key': key } }),
      400,
      'invalid_request',
    );
    // Even when one of them is garbage.
    problem(
      await ctx().inject({ method: 'GET', url: KEYS, headers: { authorization: 'Bearer x', 'x-api-key': 'y' } }),
      400,
      'invalid_request',
    );
  });

  test('token without keys:read: 403 insufficient_scope with WWW-Authenticate naming the scope', async () => {
    const token = await ctx().token(['trust:read']);
    const res = await get(token);
    problem(res, 403, 'insufficient_scope');
    assert.equal(
      header(res, 'www-authenticate'),
      'Bearer realm="vouch", error="insufficient_scope", scope="keys:read"',
    );
    const write = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: bearer(await ctx().token(['keys:read'])),
      payload: { name: 'x', scopes: ['keys:read'] },
    });
    problem(write, 403, 'insufficient_scope');
    assert.match(header(write, 'www-authenticate'), /scope="keys:write"/);
  });

  test('unauthenticated caller learns nothing about validation: 401 before 400', async () => {
    problem(await ctx().inject({ method: 'POST', url: KEYS, payload: { bogus: true } }), 401, 'unauthenticated');
    problem(await ctx().inject({ method: 'GET', url: `${KEYS}?limit=abc` }), 401, 'unauthenticated');
  });
});
