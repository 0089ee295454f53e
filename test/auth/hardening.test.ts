// Issue 8 hardening of the auth layer: token lifetime and subject checks, canonical compact JWS
// only, repeated credential headers, one client-authentication method per token request, and a
// lockout counted per client and source address.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { describeEachBackend, bearer, problem, ADMIN_ID, ADMIN_SECRET } from '../helpers/app.ts';
import { currentSigningKey, header, signToken } from './support.ts';

const KEYS = '/api/v1/keys';
const TOKEN = '/api/v1/auth/token';
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function invalidToken(res: LightMyRequestResponse): void {
  problem(res, 401, 'unauthenticated');
  assert.equal(header(res, 'www-authenticate'), 'Bearer realm="vouch", error="invalid_token"');
}

describeEachBackend('token verification hardening', (ctx) => {
  let signing: Awaited<ReturnType<typeof currentSigningKey>>;
  const get = (token: string) => ctx().inject({ method: 'GET', url: KEYS, headers: bearer(token) });

  before(async () => {
    signing = await currentSigningKey(ctx().store, ctx().config);
  });

  test('a lifetime (exp - iat) above the configured one plus 30 s: 401 invalid_token; exactly at it: 200', async () => {
    const ttl = ctx().config.tokenTtlSeconds;
    const now = Math.floor(Date.now() / 1000);
    invalidToken(await get(await signToken(signing.key, signing.kid, { claims: { iat: now, exp: now + ttl + 31 } })));
    invalidToken(
      await get(await signToken(signing.key, signing.kid, { claims: { iat: now - 10, exp: now + 10 * 365 * 86400 } })),
    );
    assert.equal(
      (await get(await signToken(signing.key, signing.kid, { claims: { iat: now, exp: now + ttl + 30 } }))).statusCode,
      200,
    );
  });

  test('iat in the future beyond the leeway (so exp - iat looks short): 401 invalid_token', async () => {
    const now = Math.floor(Date.now() / 1000);
    invalidToken(
      await get(await signToken(signing.key, signing.kid, { claims: { iat: now + 3600, exp: now + 3600 + 600 } })),
    );
  });

  test('a validly signed token whose sub is not a client (made up): 401 invalid_token', async () => {
    invalidToken(
      await get(await signToken(signing.key, signing.kid, { claims: { sub: 'cli_madeup', client_id: 'cli_madeup' } })),
    );
  });

  test('a validly signed token whose sub was a client now deleted from the store: 401 invalid_token', async () => {
    const c = await ctx().client(['keys:read']);
    await ctx().store.db.deleteFrom('clients').where('id', '=', c.id).execute();
    invalidToken(
      await get(
        await signToken(signing.key, signing.kid, {
          claims: { sub: c.id, client_id: c.id, role: 'service', scope: 'keys:read' },
        }),
      ),
    );
  });

  test('a validly signed token whose sub is a client deactivated before this process started: 401 invalid_token', async () => {
    const c = await ctx().client(['keys:read']);
    await ctx().store.db.updateTable('clients').set({ deactivated_at: Date.now() }).where('id', '=', c.id).execute();
    invalidToken(
      await get(
        await signToken(signing.key, signing.kid, {
          claims: { sub: c.id, client_id: c.id, role: 'service', scope: 'keys:read' },
        }),
      ),
    );
  });

  test('a JWT with "==" (or "=") padding appended to a part: 401 invalid_token; the same token without it: 200', async () => {
    const token = await ctx().token(['keys:read']);
    const [h, p, s] = token.split('.');
    for (const padded of [`${token}==`, `${token}=`, `${h}==.${p}.${s}`, `${h}.${p}=.${s}`])
      invalidToken(await get(padded));
    assert.equal((await get(token)).statusCode, 200);
  });

  test('a JWT whose signature differs only in the unused low bits of its last character: 401 invalid_token', async () => {
    const token = await ctx().token(['keys:read']);
    const sig = token.slice(token.lastIndexOf('.') + 1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(sig.at(-1)!);
    // 64 bytes = 86 characters; the last carries 4 bits, so its 2 low bits are unused.
    const variant = `${token.slice(0, -1)}${alphabet[last ^ 1]}`;
    assert.deepEqual(
      Buffer.from(variant.slice(variant.lastIndexOf('.') + 1), 'base64url'),
      Buffer.from(sig, 'base64url'),
    );
    invalidToken(await get(variant));
  });

  test('Authorization header repeated: 400 invalid_request, even when both values are the same valid token', async () => {
    const token = await ctx().token(['keys:read']);
    const res = await ctx().inject({
      method: 'GET',
      url: KEYS,
      headers: { authorization: [`Bearer ${token}`, `Bearer ${token}`] as unknown as string },
    });
    problem(res, 400, 'invalid_request');
    const mixed = await ctx().inject({
      method: 'GET',
      url: KEYS,
      headers: { authorization: [`Bearer ${token}`, 'Bearer forged'] as unknown as string },
    });
    problem(mixed, 400, 'invalid_request');
  });

  test('X-API-Key header repeated: 400 invalid_request', async () => {
    const admin = await ctx().token();
    const key = (
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: bearer(admin),
        payload: { name: 'dup', scopes: ['keys:read'] },
      })
    ).json().key as string;
    assert.equal((await ctx().inject({ method: 'GET', url: KEYS, headers: { 'x-api-key': key } })).statusCode, 200);
    problem(
      await ctx().inject({ method: 'GET', url: KEYS, headers: { 'x-api-key': [key, key] as unknown as string } }),
      400,
      'invalid_request',
    );
  });

  test('token request with HTTP Basic and a client_secret in the body: 400 invalid_request (error invalid_request)', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: { authorization: basic(ADMIN_ID, ADMIN_SECRET) },
      payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
    });
    const body = problem(res, 400, 'invalid_request');
    assert.equal(body.error, 'invalid_request');
    const form = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ADMIN_ID, ADMIN_SECRET) },
      payload: new URLSearchParams({ grant_type: 'client_credentials', client_secret: ADMIN_SECRET }).toString(),
    });
    problem(form, 400, 'invalid_request');
    // Basic sent twice: which one counts would be ambiguous.
    problem(
      await ctx().inject({
        method: 'POST',
        url: TOKEN,
        headers: { authorization: [basic(ADMIN_ID, ADMIN_SECRET), basic('x', 'y')] as unknown as string },
        payload: {},
      }),
      400,
      'invalid_request',
    );
    // Another client id in the body than in Basic is a second identity: refused too.
    problem(
      await ctx().inject({
        method: 'POST',
        url: TOKEN,
        headers: { authorization: basic(ADMIN_ID, ADMIN_SECRET) },
        payload: { client_id: 'someone-else' },
      }),
      400,
      'invalid_request',
    );
  });

  test('token request with HTTP Basic and the same client_id repeated in the body (no secret): 200', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: TOKEN,
      headers: { authorization: basic(ADMIN_ID, ADMIN_SECRET) },
      payload: { client_id: ADMIN_ID },
    });
    assert.equal(res.statusCode, 200, res.body);
  });
});

describeEachBackend(
  'token lockout per client and source',
  (ctx) => {
    test('30 failures from address A for a client: A gets 429, address B with the right secret gets 200', async () => {
      const a = '203.0.113.10';
      for (let i = 0; i < 30; i++) {
        problem(
          await ctx().inject({
            method: 'POST',
            url: TOKEN,
            remoteAddress: a,
            payload: { client_id: ADMIN_ID, client_secret: `wrong-${i}` },
          }),
          401,
          'invalid_client',
        );
      }
      const locked = await ctx().inject({
        method: 'POST',
        url: TOKEN,
        remoteAddress: a,
        payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
      });
      problem(locked, 429, 'rate_limited');
      assert.ok(Number(locked.headers['retry-after']) > 0);
      const b = await ctx().inject({
        method: 'POST',
        url: TOKEN,
        remoteAddress: '203.0.113.11',
        payload: { client_id: ADMIN_ID, client_secret: ADMIN_SECRET },
      });
      assert.equal(b.statusCode, 200, b.body);
      // A's failures for the admin do not lock A out of another client.
      const c = await ctx().client(['keys:read']);
      assert.equal(
        (
          await ctx().inject({
            method: 'POST',
            url: TOKEN,
            remoteAddress: a,
            payload: { client_id: c.id, client_secret: c.secret },
          })
        ).statusCode,
        200,
      );
    });

    test('failures spread over many addresses never lock the client out of its correct secret: 200', async () => {
      const c = await ctx().client(['keys:read']);
      for (let i = 0; i < 40; i++) {
        problem(
          await ctx().inject({
            method: 'POST',
            url: TOKEN,
            remoteAddress: `198.51.100.${i + 1}`,
            payload: { client_id: c.id, client_secret: `guess-${i}` },
          }),
          401,
          'invalid_client',
        );
      }
      const res = await ctx().inject({
        method: 'POST',
        url: TOKEN,
        remoteAddress: '198.51.100.200',
        payload: { client_id: c.id, client_secret: c.secret },
      });
      assert.equal(res.statusCode, 200, res.body);
    });

    test('successful requests do not count as failures: 35 good requests from one address: all 200', async () => {
      const c = await ctx().client(['keys:read']);
      for (let i = 0; i < 35; i++) {
        const res = await ctx().inject({
          method: 'POST',
          url: TOKEN,
          remoteAddress: '192.0.2.77',
          payload: { client_id: c.id, client_secret: c.secret },
        });
        assert.equal(res.statusCode, 200, `request ${i + 1}`);
      }
    });
  },
  { rateLimit: { perSecond: 100_000, burst: 200_000, tokenPerMinute: 35, tokenFailuresPerMinute: 30 } },
);
