// Idempotency-Key (docs/api.md, "Integration"): replay with Idempotent-Replayed, 422 on reuse with another body,
// 409 while in flight, 400 when malformed, one effect under concurrency, expiry after 24 h.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { wellBehaved } from '../helpers/fuzz.ts';
import { buildApp } from '../../src/app.ts';

const KEYS = '/api/v1/keys';

describeEachBackend('Idempotency-Key', (ctx) => {
  let admin: string;
  const create = (key: string | undefined, payload: object, token = admin) =>
    ctx().inject({
      method: 'POST',
      url: KEYS,
      headers: { ...bearer(token), ...(key === undefined ? {} : { 'idempotency-key': key }) },
      payload,
    });
  const countKeys = async (name: string) =>
    (await ctx().store.db.selectFrom('api_keys').select('id').where('name', '=', name).execute()).length;

  before(async () => {
    admin = await ctx().token();
  });

  test('same key, same body: the first response (status, body, Location) replayed with Idempotent-Replayed: true; one key created', async () => {
    const first = await create('replay-1', { name: 'idem-a', scopes: ['keys:read'] });
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await create('replay-1', { name: 'idem-a', scopes: ['keys:read'] });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(again.headers.location, first.headers.location);
    assert.match(String(again.headers['content-type']), /^application\/json/);
    // The original response, so the original request id (a problem's request_id must match it).
    assert.equal(again.headers['x-request-id'], first.headers['x-request-id']);
    assert.equal(await countKeys('idem-a'), 1);
  });

  test('the stored response is sealed: the secret it carries is not in the store in clear', async () => {
    const first = await create('sealed-1', { name: 'idem-sealed', scopes: ['keys:read'] });
    const rows = await ctx()
      .store.db.selectFrom('idempotency_keys')
      .selectAll()
      .where('idem_key', '=', 'sealed-1')
      .execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(first.json().key));
  });

  test('same key, different body: 422 idempotency_key_reused, nothing created', async () => {
    await create('reuse-1', { name: 'idem-b', scopes: ['keys:read'] });
    problem(await create('reuse-1', { name: 'idem-b2', scopes: ['keys:read'] }), 422, 'idempotency_key_reused');
    assert.equal(await countKeys('idem-b2'), 0);
  });

  test('same key on another path: 422 idempotency_key_reused', async () => {
    const made = (await create('path-1', { name: 'idem-p', scopes: ['keys:read'] })).json();
    const res = await ctx().inject({
      method: 'POST',
      url: `${KEYS}/${made.id}/rotate`,
      headers: { ...bearer(admin), 'idempotency-key': 'path-1' },
      payload: {},
    });
    problem(res, 422, 'idempotency_key_reused');
  });

  test('another client may use the same key: its own request runs', async () => {
    await create('shared-1', { name: 'idem-c', scopes: ['keys:read'] });
    const other = await ctx().token(['keys:read', 'keys:write']);
    const res = await create('shared-1', { name: 'idem-c', scopes: ['keys:read'] }, other);
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['idempotent-replayed'], undefined);
    assert.equal(await countKeys('idem-c'), 2);
  });

  test('malformed key: 400 invalid_request (empty, over 255, non-printable), nothing created', async () => {
    for (const key of ['', 'x'.repeat(256), 'tab\there']) {
      problem(await create(key, { name: 'idem-bad', scopes: ['keys:read'] }), 400, 'invalid_request');
    }
    assert.equal((await create('k'.repeat(255), { name: 'idem-max', scopes: ['keys:read'] })).statusCode, 201);
    assert.equal(await countKeys('idem-bad'), 0);
  });

  test('a pending claim for another body: 422; concurrent identical requests: one effect, the others 409 or replayed', async () => {
    const now = Date.now();
    await ctx()
      .store.db.insertInto('idempotency_keys')
      .values({
        environment: 'live',
        client_id: 'admin-test',
        principal_id: 'admin-test',
        idem_key: 'inflight-1',
        fingerprint: 'x',
        state: 'pending',
        response: null,
        created_at: now,
        expires_at: now + 86_400_000,
      })
      .execute();
    const res = await create('inflight-1', { name: 'idem-f', scopes: ['keys:read'] });
    problem(res, 422, 'idempotency_key_reused');
    const concurrent = await Promise.all(
      [0, 1, 2, 3].map(() => create('inflight-2', { name: 'idem-g', scopes: ['keys:read'] })),
    );
    const statuses = concurrent.map((r) => r.statusCode).sort();
    assert.ok(
      statuses.every((s) => s === 201 || s === 409),
      statuses.join(),
    );
    for (const r of concurrent) if (r.statusCode === 409) assert.equal(r.headers['retry-after'], '1');
    assert.equal(await countKeys('idem-g'), 1);
    const fresh = concurrent.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    assert.equal(fresh.length, 1);
  });

  test('a pending claim that matches: 409 conflict; once stale it is taken over', async () => {
    const first = await create('stale-1', { name: 'idem-s', scopes: ['keys:read'] });
    assert.equal(first.statusCode, 201);
    await ctx()
      .store.db.updateTable('idempotency_keys')
      .set({ state: 'pending', response: null, created_at: Date.now() })
      .where('idem_key', '=', 'stale-1')
      .execute();
    problem(await create('stale-1', { name: 'idem-s', scopes: ['keys:read'] }), 409, 'conflict');
    await ctx()
      .store.db.updateTable('idempotency_keys')
      .set({ created_at: Date.now() - 120_000 })
      .where('idem_key', '=', 'stale-1')
      .execute();
    assert.equal((await create('stale-1', { name: 'idem-s', scopes: ['keys:read'] })).statusCode, 201);
    assert.equal(await countKeys('idem-s'), 2);
  });

  test('4xx results are kept and replayed; an expired key runs again', async () => {
    const weak = await ctx().token(['keys:read', 'keys:write']);
    const denied = await create('denied-1', { name: 'idem-d', scopes: ['trust:read'] }, weak);
    problem(denied, 403, 'insufficient_scope');
    const replay = await create('denied-1', { name: 'idem-d', scopes: ['trust:read'] }, weak);
    problem(replay, 403, 'insufficient_scope');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    await create('expire-1', { name: 'idem-e', scopes: ['keys:read'] });
    await ctx()
      .store.db.updateTable('idempotency_keys')
      .set({ expires_at: Date.now() - 1 })
      .where('idem_key', '=', 'expire-1')
      .execute();
    const rerun = await create('expire-1', { name: 'idem-e', scopes: ['keys:read'] });
    assert.equal(rerun.statusCode, 201);
    assert.equal(rerun.headers['idempotent-replayed'], undefined);
    assert.equal(await countKeys('idem-e'), 2);
  });

  test('the token endpoint ignores Idempotency-Key', async () => {
    const c = await ctx().client(['keys:read', 'trust:read']);
    for (const scope of ['keys:read', 'trust:read']) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        headers: { 'idempotency-key': 'tok-1' },
        payload: { client_id: c.id, client_secret: c.secret, scope },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().scope, scope);
    }
  });

  test('scoring replays the same decision', async () => {
    const body = { entity_id: 'a'.repeat(64), amount: 100, currency: 'USD' };
    const headers = { ...bearer(admin), 'idempotency-key': 'score-1' };
    const first = await ctx().inject({ method: 'POST', url: '/api/v1/trust/score', headers, payload: body });
    assert.equal(first.statusCode, 200, first.body);
    const again = await ctx().inject({ method: 'POST', url: '/api/v1/trust/score', headers, payload: body });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
  });

  test('a decision whose stored response was lost (crash or dropped connection after its commit): the retry gets it, never a second decision', async () => {
    const db = ctx().store.db;
    const lose = (key: string, createdAt: number) =>
      db
        .updateTable('idempotency_keys')
        .set({ state: 'pending', response: null, created_at: createdAt })
        .where('idem_key', '=', key)
        .execute();
    const decisions = async (kind: string) =>
      (await db.selectFrom('decisions').select('id').where('kind', '=', kind).execute()).length;
    const score = { entity_id: 'c'.repeat(64), amount: 120, currency: 'USD', context: { trade_id: 'lost-1' } };
    const dispute = {
      dispute_id: 'dsp-lost-1',
      trade: { trade_id: 'trd-lost-1', amount: 100, currency: 'USD', payment_method: 'bank_transfer' },
      buyer_id: 'd'.repeat(64),
      seller_id: 'e'.repeat(64),
      opened_by: 'buyer',
      reason: 'asset_not_released',
    };
    for (const [url, payload, kind] of [
      ['/api/v1/trust/score', score, 'score'],
      ['/api/v1/dispute/analyze', dispute, 'dispute_analysis'],
    ] as const) {
      const key = `lost-${kind}`;
      const headers = { ...bearer(admin), 'idempotency-key': key };
      const first = await ctx().inject({ method: 'POST', url, headers, payload });
      assert.equal(first.statusCode, 200, first.body);
      const stored = await decisions(kind);
      // fresh (its request could still be running) and stale (taken over before): both answered from the decision
      for (const createdAt of [Date.now(), Date.now() - 120_000]) {
        await lose(key, createdAt);
        const again = await ctx().inject({ method: 'POST', url, headers, payload });
        assert.equal(again.statusCode, 200, again.body);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.deepEqual(again.json(), first.json());
        assert.equal(await decisions(kind), stored, `${kind}: no second decision`);
      }
      // and the recovered response is stored: the next retry replays it as any other
      const row = await db
        .selectFrom('idempotency_keys')
        .select('state')
        .where('idem_key', '=', key)
        .executeTakeFirst();
      assert.equal(row?.state, 'done');
    }
  });

  test('fuzzed Idempotency-Key values never cause a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary-ascii', maxLength: 300 }), async (key) => {
        if (/[\r\n\0]/.test(key)) return;
        const res = await ctx().inject({
          method: 'POST',
          url: '/api/v1/trust/score',
          headers: { ...bearer(admin), 'idempotency-key': key },
          payload: { entity_id: 'b'.repeat(64), amount: 1, currency: 'USD' },
        });
        wellBehaved(res, JSON.stringify(key));
      }),
      { numRuns: 60 },
    );
  });

  test('shared by instances: the same key sent to two apps on one store runs once; the other replays', async () => {
    const other = await buildApp({ config: ctx().config, store: ctx().store, logger: false });
    await other.ready();
    try {
      const send = (app: typeof other) =>
        app.inject({
          method: 'POST',
          url: KEYS,
          headers: { ...bearer(admin), 'idempotency-key': 'two-apps' },
          payload: { name: 'idem-two', scopes: ['keys:read'] },
        });
      const [a, b] = await Promise.all([send(ctx().app), send(other)]);
      assert.ok(
        [a.statusCode, b.statusCode].every((s) => s === 201 || s === 409),
        `${a.statusCode} ${b.statusCode}`,
      );
      const later = await send(other);
      assert.equal(later.statusCode, 201);
      assert.equal(later.headers['idempotent-replayed'], 'true');
      assert.equal(await countKeys('idem-two'), 1);
    } finally {
      await other.close();
    }
  });
});
