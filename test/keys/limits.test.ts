// At most 100 active API keys per client (issue 18 item 8; each key has its own rate limit): 409
// conflict beyond. A rotation replaces a key, so it works at the cap; keys in their grace period
// have a cap of their own.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { MAX_ACTIVE_KEYS_PER_CLIENT } from '../../src/keys/repository.ts';

const KEYS = '/api/v1/keys';

describeEachBackend('API keys per client', (ctx) => {
  let token: string;
  let other: string;
  const create = (as: string, name: string) =>
    ctx().inject({ method: 'POST', url: KEYS, headers: bearer(as), payload: { name, scopes: ['keys:read'] } });
  const rotate = (as: string, id: string) =>
    ctx().inject({
      method: 'POST',
      url: `${KEYS}/${id}/rotate`,
      headers: bearer(as),
      payload: { grace_period_seconds: 3600 },
    });
  const ids: string[] = [];

  before(async () => {
    token = await ctx().token(['keys:read', 'keys:write']);
    other = await ctx().token(['keys:read', 'keys:write']);
  });

  test(`one active key beyond ${MAX_ACTIVE_KEYS_PER_CLIENT} for a client: 409 conflict naming the limit; another client is unaffected`, async () => {
    assert.equal(MAX_ACTIVE_KEYS_PER_CLIENT, 100);
    for (let i = 0; i < MAX_ACTIVE_KEYS_PER_CLIENT; i++) {
      const res = await create(token, `k${i}`);
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id as string);
    }
    const body = problem(await create(token, 'one too many'), 409, 'conflict');
    assert.match(String(body.detail), /100 active API keys/);
    assert.equal((await create(other, 'elsewhere')).statusCode, 201);
  });

  test('a key at the cap can be rotated (a rotation replaces it), and the cap still holds afterwards', async () => {
    const res = await rotate(token, ids[0]!);
    assert.equal(res.statusCode, 201, res.body);
    ids[0] = res.json().id as string;
    problem(await create(token, 'still too many'), 409, 'conflict');
  });

  test('deactivating a key makes room for one more', async () => {
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `${KEYS}/${ids[1]}`, headers: bearer(token) })).statusCode,
      200,
    );
    const res = await create(token, 'room again');
    assert.equal(res.statusCode, 201, res.body);
    ids[1] = res.json().id as string;
    problem(await create(token, 'full again'), 409, 'conflict');
  });

  test('rotated keys in their grace period are capped too: a chain of rotations cannot pile up live keys', async () => {
    // One key was rotated above and is in its grace period; rotate its successors in a chain.
    let id = ids[0]!;
    for (let i = 1; i < MAX_ACTIVE_KEYS_PER_CLIENT; i++) {
      const res = await rotate(token, id);
      assert.equal(res.statusCode, 201, res.body);
      id = res.json().id as string;
    }
    const body = problem(await rotate(token, id), 409, 'conflict');
    assert.match(String(body.detail), /grace period/);
    // The refused rotation left the key as it was: still active and rotatable later.
    const record = (await ctx().inject({ method: 'GET', url: `${KEYS}/${id}`, headers: bearer(token) })).json();
    assert.equal(record.status, 'active');
  });
});

describeEachBackend('API keys per client, created concurrently', (ctx) => {
  test('concurrent creations never take a client past the cap', async () => {
    const token = await ctx().token(['keys:read', 'keys:write']);
    const create = (name: string) =>
      ctx().inject({ method: 'POST', url: KEYS, headers: bearer(token), payload: { name, scopes: ['keys:read'] } });
    for (let i = 0; i < MAX_ACTIVE_KEYS_PER_CLIENT - 5; i++) assert.equal((await create(`k${i}`)).statusCode, 201);
    const statuses = (await Promise.all(Array.from({ length: 12 }, (_, i) => create(`race${i}`)))).map(
      (r) => r.statusCode,
    );
    assert.equal(statuses.filter((s) => s === 201).length, 5, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 409).length, 7, statuses.join(' '));
  });
});
