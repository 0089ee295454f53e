// GET /api/v1/keys/{key_id} and an API key sent as Authorization: Bearer vch_… (docs/api.md, "Authentication", §4,
// §10).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { nasty, wellBehaved } from '../helpers/fuzz.ts';

const KEYS = '/api/v1/keys';

describeEachBackend('Read one key; API key as bearer', (ctx) => {
  let admin: string;
  let key: { id: string; key: string };
  before(async () => {
    admin = await ctx().token();
    const res = await ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: bearer(admin),
      payload: { name: 'reader', scopes: ['keys:read', 'trust:read'] },
    });
    assert.equal(res.statusCode, 201, res.body);
    key = res.json();
  });

  test('GET one: 200 with the record (no secret) for its owner or an admin', async () => {
    const res = await ctx().inject({ method: 'GET', url: `${KEYS}/${key.id}`, headers: bearer(admin) });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.id, key.id);
    assert.equal(body.status, 'active');
    assert.equal(body.key, undefined);
    assert.ok(!res.body.includes(key.key));
  });

  test("GET one: 404 for an unknown id, a malformed id and another client's key", async () => {
    problem(
      await ctx().inject({ method: 'GET', url: `${KEYS}/key_01ARZ3NDEKTSV4RRFFQ69G5FAV`, headers: bearer(admin) }),
      404,
      'not_found',
    );
    problem(await ctx().inject({ method: 'GET', url: `${KEYS}/nope`, headers: bearer(admin) }), 404, 'not_found');
    const other = await ctx().token(['keys:read', 'keys:write'], 'operator');
    problem(await ctx().inject({ method: 'GET', url: `${KEYS}/${key.id}`, headers: bearer(other) }), 404, 'not_found');
  });

  test('GET one: 403 without keys:read, 401 without credentials', async () => {
    const weak = await ctx().token(['trust:read']);
    problem(
      await ctx().inject({ method: 'GET', url: `${KEYS}/${key.id}`, headers: bearer(weak) }),
      403,
      'insufficient_scope',
    );
    problem(await ctx().inject({ method: 'GET', url: `${KEYS}/${key.id}` }), 401, 'unauthenticated');
  });

  test('Authorization: Bearer vch_… authenticates as the key, exactly as X-API-Key', async () => {
    const viaBearer = await ctx().inject({ method: 'GET', url: `${KEYS}/${key.id}`, headers: bearer(key.key) });
    assert.equal(viaBearer.statusCode, 200, viaBearer.body);
    const viaHeader = await ctx().inject({
      method: 'GET',
      url: `${KEYS}/${key.id}`,
      headers: { 'x-api-key': key.key },
    });
    assert.equal(viaHeader.statusCode, 200);
    // The key's own listing sees what its owner client sees.
    assert.deepEqual(viaBearer.json().id, viaHeader.json().id);
  });

  test('Bearer vch_ with a wrong or deactivated key: 401 invalid_token challenge', async () => {
    const res = await ctx().inject({
      method: 'GET',
      url: KEYS,
      headers: bearer(`${key.key.slice(0, -1)}${key.key.endsWith('x') ? 'y' : 'x'}`),
    });
    problem(res, 401, 'unauthenticated');
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
    const made = (
      await ctx().inject({
        method: 'POST',
        url: KEYS,
        headers: bearer(admin),
        payload: { name: 'gone', scopes: ['keys:read'] },
      })
    ).json();
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `${KEYS}/${made.id}`, headers: bearer(admin) })).statusCode,
      200,
    );
    problem(await ctx().inject({ method: 'GET', url: KEYS, headers: bearer(made.key) }), 401, 'unauthenticated');
  });

  test('Bearer vch_ and X-API-Key together: 400 invalid_request', async () => {
    problem(
      await ctx().inject({ method: 'GET', url: KEYS, headers: { ...bearer(key.key), 'x-api-key': key.key } }),
      400,
      'invalid_request',
    );
  });

  test('fuzz: GET /api/v1/keys/{random id} and random Bearer vch_ credentials never answer 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(nasty, fc.string({ maxLength: 120 })), async (id) => {
        let path = '%ED%A0%80';
        try {
          path = encodeURIComponent(id);
        } catch {
          /* invalid bytes */
        }
        wellBehaved(await ctx().inject({ method: 'GET', url: `${KEYS}/${path}`, headers: bearer(admin) }), id);
        const credential = `vch_${id.replace(/[^\x21-\x7e]/g, '')}`;
        wellBehaved(
          await ctx().inject({ method: 'GET', url: KEYS, headers: { authorization: `Bearer ${credential}` } }),
          credential,
        );
      }),
      { numRuns: 80 },
    );
  });
});
