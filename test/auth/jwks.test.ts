// GET /.well-known/jwks.json and signing-key rotation (`vouch signing-keys rotate`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { rotateSigningKey } from '../../src/auth/signing-keys.ts';
import { resolveKeyEncryption } from '../../src/auth/kek.ts';

describeEachBackend('JWKS and signing-key rotation', (ctx) => {
  const jwks = async () => {
    const res = await ctx().inject({ method: 'GET', url: '/.well-known/jwks.json' });
    assert.equal(res.statusCode, 200);
    return res.json() as JSONWebKeySet;
  };

  test('JWKS without credentials: 200 with the Ed25519 public key (kty OKP, crv Ed25519, kid, alg, use) and no private part', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/.well-known/jwks.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.match(String(res.headers['cache-control']), /max-age=\d+/);
    const { keys } = res.json() as JSONWebKeySet;
    assert.equal(keys.length, 1);
    const [key] = keys;
    assert.equal(key!.kty, 'OKP');
    assert.equal(key!.crv, 'Ed25519');
    assert.equal(key!.alg, 'EdDSA');
    assert.equal(key!.use, 'sig');
    assert.equal(typeof key!.kid, 'string');
    assert.equal(Buffer.from(String(key!.x), 'base64url').length, 32);
    assert.deepEqual(Object.keys(key!).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    assert.ok(!('d' in key!));
  });

  test('an issued token verifies against the published JWKS with a standard library: 200', async () => {
    const token = await ctx().token();
    const set = await jwks();
    assert.equal(decodeProtectedHeader(token).kid, set.keys[0]!.kid);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(set), {
      issuer: ctx().config.issuer,
      audience: 'vouch-api',
      typ: 'at+jwt',
      algorithms: ['EdDSA'],
    });
    assert.equal(payload.sub, 'admin-test');
    assert.equal(protectedHeader.alg, 'EdDSA');
  });

  test('rotation: tokens of the old key still verify (200), new tokens carry the new kid (200), both keys published', async () => {
    const oldToken = await ctx().token(['keys:read']);
    const oldKid = decodeProtectedHeader(oldToken).kid;
    const newKid = await rotateSigningKey(ctx().store.db, resolveKeyEncryption(ctx().config, ctx().store));
    assert.notEqual(newKid, oldKid);

    const newToken = await ctx().token(['keys:read']);
    assert.equal(decodeProtectedHeader(newToken).kid, newKid);
    // The old token was never verified before, so this is a real signature check with the retired key.
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(oldToken) })).statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/api/v1/keys', headers: bearer(newToken) })).statusCode,
      200,
    );

    const set = await jwks();
    assert.deepEqual(set.keys.map((k) => k.kid).sort(), [oldKid, newKid].sort());
    const local = createLocalJWKSet(set);
    for (const token of [oldToken, newToken])
      await jwtVerify(token, local, { issuer: ctx().config.issuer, audience: 'vouch-api' });

    const rows = await ctx().store.db.selectFrom('signing_keys').select(['kid', 'retired_at']).execute();
    assert.equal(rows.filter((r) => r.retired_at === null).length, 1, 'exactly one current key');
    assert.equal(rows.find((r) => r.retired_at === null)!.kid, newKid);
  });

  test('a key retired longer ago than token lifetime + leeway: unpublished and its tokens no longer verify', async () => {
    const token = await ctx().token(['keys:read']);
    const kid = decodeProtectedHeader(token).kid!;
    await rotateSigningKey(ctx().store.db, resolveKeyEncryption(ctx().config, ctx().store));
    // Pretend the rotation happened long ago; a fresh ring (as after a restart) sees the row as is.
    const longAgo = Date.now() - (ctx().config.tokenTtlSeconds + 120) * 1000;
    await ctx().store.db.updateTable('signing_keys').set({ retired_at: longAgo }).where('kid', '=', kid).execute();
    const { KeyRing } = await import('../../src/auth/signing-keys.ts');
    const { TokenService } = await import('../../src/auth/tokens.ts');
    const ring = new KeyRing(
      ctx().store.db,
      (ctx().config.tokenTtlSeconds + 60) * 1000,
      resolveKeyEncryption(ctx().config, ctx().store),
    );
    await ring.init();
    assert.ok(!(await ring.jwks()).keys.some((k) => k.kid === kid));
    const service = new TokenService(
      ring,
      { issuer: 'vouch', audience: 'vouch-api', ttlSeconds: 900 },
      async () => true,
    );
    assert.equal(await service.verify(token), undefined);
  });
});
