// The typed SDK (@vouch/client) and the examples against a real server on 127.0.0.1.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startApp, type TestContext } from '../helpers/app.ts';
import { signedHeaders, generateWebhookSecret } from '../../src/webhooks/signer.ts';
import { createVouchClient, VouchError, type VouchClient } from '../../sdk/src/index.ts';
import { clientFromEnv, hashId } from '../../examples/env.ts';
import * as scoreExample from '../../examples/score-before-release.ts';
import * as outcomesExample from '../../examples/feed-outcomes.ts';
import * as disputeExample from '../../examples/analyze-dispute.ts';
import * as webhookExample from '../../examples/verify-webhook.ts';
import { REPO_ROOT } from '../helpers/repo-root.ts';

const SCOPES = ['trust:read', 'trust:write', 'dispute:analyze', 'audit:read', 'labels:write'];

describe('SDK against a real server', () => {
  let ctx: TestContext & { close(): Promise<void> };
  let base = '';
  let creds: { id: string; secret: string };
  let client: VouchClient;

  before(async () => {
    ctx = await startApp('sqlite');
    await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    creds = await ctx.client(SCOPES);
    client = createVouchClient({
      baseUrl: base,
      clientId: creds.id,
      clientSecret: creds.secret,
      retry: { baseDelayMs: 1 },
    });
  });
  after(async () => {
    await ctx?.close();
  });

  test('score-before-release: a decision, and the release capped at safe_amount', async () => {
    const plan = await scoreExample.main({ client });
    assert.match(plan.score.decision_id, /\S/);
    assert.equal(plan.release, scoreExample.capRelease(plan.requested, plan.score.safe_amount));
    if (plan.score.safe_amount !== null) assert.ok(plan.release <= plan.score.safe_amount);
    assert.equal(plan.release + plan.held, plan.requested);

    // Thin history (one small trade): a large trade is capped at safe_amount, not refused.
    const thin = hashId(`thin-${randomUUID()}`);
    await client.sendEvents([
      {
        event_id: `${thin.slice(0, 12)}-t1`,
        type: 'trade.completed',
        entity_id: thin,
        occurred_at: new Date(Date.now() - 3_600_000).toISOString(),
        amount: 20,
        currency: 'USDT',
      },
    ]);
    const capped = await scoreExample.main({ client, entityId: thin, amount: 50_000 });
    const safe = capped.score.safe_amount;
    assert.ok(safe !== null && safe > 0 && safe < 50_000, `safe_amount ${safe}`);
    assert.equal(capped.release, safe);
    assert.equal(capped.held, 50_000 - safe);

    // A history of chargebacks: nothing is released (safe_amount 0).
    const risky = hashId(`risky-${randomUUID()}`);
    const now = Date.now();
    await client.sendEvents(
      [1, 2, 3].map((n) => ({
        event_id: `${risky.slice(0, 12)}-cb${n}`,
        type: 'chargeback' as const,
        entity_id: risky,
        occurred_at: new Date(now - n * 86_400_000).toISOString(),
        amount: 50,
        currency: 'USDT',
      })),
    );
    const refused = await scoreExample.main({ client, entityId: risky, amount: 500 });
    assert.equal(refused.score.safe_amount, 0);
    assert.equal(refused.release, 0);
    assert.equal(refused.held, 500);
  });

  test('feed-outcomes: events accepted, the decision labelled fraud by the API', async () => {
    const run = await outcomesExample.main({ client });
    assert.deepEqual(run.history, { accepted: 2, duplicates: 0 });
    assert.equal(run.chargeback.accepted, 1);
    assert.equal(run.label.decision_id, run.score.decision_id);
    assert.equal(run.label.label, 'fraud');
    assert.equal(run.label.source, 'api');
    const label = (run.decision as { label?: { label: string; source: string } | null }).label;
    assert.equal(label?.label, 'fraud');
    assert.equal(label?.source, 'api');
  });

  test('analyze-dispute: a recommendation with its analysis id', async () => {
    const result = await disputeExample.main({ client });
    assert.match(result.analysis_id, /\S/);
    assert.ok(['release_to_buyer', 'return_to_seller', 'manual_review'].includes(result.recommendation));
    assert.ok(result.confidence >= 0 && result.confidence <= 1);
    assert.ok(Array.isArray(result.risk_flags) && Array.isArray(result.missing_evidence));
    const decision = await client.getDecision(result.analysis_id);
    assert.ok(decision);
  });

  test('verify-webhook: a signed delivery is accepted once, a forged one refused', async () => {
    const secret = generateWebhookSecret();
    const receiver = await webhookExample.main({ secret, port: 0 });
    try {
      const body = JSON.stringify({
        type: 'decision.high_risk',
        timestamp: new Date().toISOString(),
        data: { decision_id: 'dec_1', entity_id: hashId('x') },
      });
      const headers = signedHeaders(secret, `msg_${randomUUID()}`, new Date(), body);
      const post = (h: Record<string, string>, b: string) =>
        fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json', ...h }, body: b });
      assert.equal((await post(headers, body)).status, 204);
      assert.equal((await post(headers, body)).status, 204); // a retry of the same delivery
      assert.equal((await post(headers, body.replace('dec_1', 'dec_2'))).status, 400);
      assert.equal(
        (await post(signedHeaders(generateWebhookSecret(), headers['webhook-id']!, new Date(), body), body)).status,
        400,
      );
      assert.equal(receiver.received.length, 1);
      assert.equal(receiver.received[0]?.type, 'decision.high_risk');
      assert.equal(receiver.rejected, 2);
    } finally {
      await receiver.close();
    }
  });

  test('scoreBatch: results in request order, a problem object for a bad item', async () => {
    const { results } = await client.scoreBatch([
      { entity_id: hashId('batch-1'), amount: 10, currency: 'USDT' },
      { entity_id: 'someone@example.com', amount: 10, currency: 'USDT' },
    ]);
    assert.equal(results.length, 2);
    assert.match(String((results[0] as { decision_id?: string }).decision_id), /^dec_/);
    assert.equal((results[1] as { code?: string }).code, 'raw_identifier_rejected');
  });

  test('a bad request throws VouchError with the problem body', async () => {
    await assert.rejects(
      client.score({ entity_id: '+1 (555) 123-4567', amount: 10, currency: 'USD' }),
      (err: unknown) =>
        err instanceof VouchError &&
        err.status === 400 &&
        err.code === 'raw_identifier_rejected' &&
        typeof err.requestId === 'string',
    );
    await assert.rejects(
      client.score({ entity_id: hashId('a'), amount: -1, currency: 'USD' }),
      (err: unknown) =>
        err instanceof VouchError &&
        err.code === 'validation_failed' &&
        Array.isArray(err.errors) &&
        err.errors.length > 0,
    );
    const denied = createVouchClient({ baseUrl: base, clientId: creds.id, clientSecret: 'wrong-secret-0123456789' });
    await assert.rejects(
      denied.score({ entity_id: hashId('a'), amount: 1, currency: 'USD' }),
      (err: unknown) => err instanceof VouchError && err.status === 401 && err.code === 'invalid_client',
    );
  });

  test('a POST whose response is lost is retried with the same Idempotency-Key and replayed', async () => {
    const sent: { path: string; key: string | null }[] = [];
    let lose = 1;
    const lossy = async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
      const req = new Request(input, init);
      const path = new URL(req.url).pathname;
      sent.push({ path, key: req.headers.get('idempotency-key') });
      const res = await fetch(req);
      if (path !== '/api/v1/auth/token' && lose > 0) {
        lose -= 1;
        await res.arrayBuffer();
        throw new TypeError('fetch failed: connection reset (simulated, after the server answered)');
      }
      return res;
    };
    const c = createVouchClient({
      baseUrl: base,
      clientId: creds.id,
      clientSecret: creds.secret,
      fetch: lossy,
      retry: { baseDelayMs: 1 },
    });

    // Events: the retry replays the first answer (accepted 1), not a second ingest (duplicates 1).
    const entity = hashId(`idem-${randomUUID()}`);
    const event = {
      event_id: `${entity.slice(0, 12)}-e1`,
      type: 'trade.completed' as const,
      entity_id: entity,
      occurred_at: new Date().toISOString(),
      amount: 10,
      currency: 'USDT',
    };
    const { data, response } = await c.raw.POST('/api/v1/trust/events', { body: { events: [event] } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(data, { accepted: 1, duplicates: 0 });
    const posts = sent.filter((s) => s.path === '/api/v1/trust/events');
    assert.equal(posts.length, 2);
    assert.ok(posts[0]?.key && posts[0].key === posts[1]?.key, 'the retry reuses the key');

    // Score: one decision stored, however many attempts.
    lose = 1;
    sent.length = 0;
    const scored = await c.raw.POST('/api/v1/trust/score', {
      body: { entity_id: entity, amount: 25, currency: 'USDT' },
    });
    assert.equal(scored.response.headers.get('idempotent-replayed'), 'true');
    const keys = sent.filter((s) => s.path === '/api/v1/trust/score').map((s) => s.key);
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1]);
    const list = await c.raw.GET('/api/v1/decisions', { params: { query: { entity_id: entity, kind: 'score' } } });
    assert.equal(list.data?.data.length, 1);
    assert.equal(list.data?.data[0]?.id, scored.data?.decision_id);

    // Two separate calls get two keys.
    sent.length = 0;
    await c.score({ entity_id: entity, amount: 26, currency: 'USDT' });
    await c.score({ entity_id: entity, amount: 27, currency: 'USDT' });
    const two = sent.filter((s) => s.path === '/api/v1/trust/score').map((s) => s.key);
    assert.equal(new Set(two).size, 2);
    // GETs and the token endpoint carry no key.
    assert.ok(sent.filter((s) => s.path !== '/api/v1/trust/score').every((s) => s.key === null));
  });

  test('429 and 5xx are retried a bounded number of times with the same key', async () => {
    const keys: (string | null)[] = [];
    const failing = (status: number, times: number) => async (input: Request | URL | string, init?: RequestInit) => {
      const req = new Request(input, init);
      if (new URL(req.url).pathname === '/api/v1/auth/token') return fetch(req);
      keys.push(req.headers.get('idempotency-key'));
      if (keys.length <= times)
        return new Response(
          JSON.stringify({ code: { 429: 'rate_limited', 409: 'conflict' }[status] ?? 'unavailable', status }),
          { status, headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } },
        );
      return fetch(req);
    };
    const ok = createVouchClient({
      baseUrl: base,
      clientId: creds.id,
      clientSecret: creds.secret,
      fetch: failing(503, 2),
      retry: { baseDelayMs: 1 },
    });
    const scored = await ok.score({ entity_id: hashId('retry'), amount: 5, currency: 'USDT' });
    assert.match(scored.decision_id, /\S/);
    assert.equal(keys.length, 3);
    assert.equal(new Set(keys).size, 1);

    keys.length = 0;
    const never = createVouchClient({
      baseUrl: base,
      clientId: creds.id,
      clientSecret: creds.secret,
      fetch: failing(429, 100),
      retry: { retries: 2, baseDelayMs: 1 },
    });
    await assert.rejects(
      never.score({ entity_id: hashId('retry'), amount: 5, currency: 'USDT' }),
      (err: unknown) => err instanceof VouchError && err.status === 429 && err.code === 'rate_limited',
    );
    assert.equal(keys.length, 3);

    // 409 with Retry-After: the keyed first attempt is still running; the same key is sent again.
    keys.length = 0;
    const busy = createVouchClient({
      baseUrl: base,
      clientId: creds.id,
      clientSecret: creds.secret,
      fetch: failing(409, 1),
      retry: { baseDelayMs: 1 },
    });
    await busy.score({ entity_id: hashId('busy'), amount: 5, currency: 'USDT' });
    assert.equal(keys.length, 2);
    assert.equal(new Set(keys).size, 1);
  });

  test('the token helper refreshes before expiry, and once on a 401', async () => {
    let clock = Date.now();
    const seen: string[] = [];
    let spoil = false;
    const spy = async (input: Request | URL | string, init?: RequestInit) => {
      const req = new Request(input, init);
      const auth = req.headers.get('authorization');
      if (auth) seen.push(auth);
      if (spoil && auth) {
        spoil = false;
        const headers = new Headers(req.headers);
        headers.set('authorization', `${auth}x`); // a token the server will refuse
        return fetch(new Request(req, { headers }));
      }
      return fetch(req);
    };
    const c = createVouchClient({
      baseUrl: base,
      clientId: creds.id,
      clientSecret: creds.secret,
      fetch: spy,
      token: { now: () => clock },
    });
    const entity = hashId('token-refresh');
    await c.score({ entity_id: entity, amount: 1, currency: 'USDT' });
    await c.score({ entity_id: entity, amount: 2, currency: 'USDT' });
    assert.equal(c.tokens?.fetched, 1, 'the token is reused while fresh');

    clock += (ctx.config.tokenTtlSeconds - 10) * 1000; // inside the refresh margin
    await c.score({ entity_id: entity, amount: 3, currency: 'USDT' });
    assert.equal(c.tokens?.fetched, 2, 'refreshed before expiry');
    assert.notEqual(seen.at(-1), seen[0]);

    spoil = true;
    const after401 = await c.score({ entity_id: entity, amount: 4, currency: 'USDT' });
    assert.match(after401.decision_id, /\S/);
    assert.equal(c.tokens?.fetched, 3, 'one refresh after the 401');
  });

  test('an API key client, and the examples read the environment', async () => {
    const admin = await ctx.token();
    const res = await fetch(`${base}/api/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'sdk', scopes: ['trust:read', 'audit:read'] }),
    });
    assert.equal(res.status, 201);
    const { key } = (await res.json()) as { key: string };
    const viaEnv = clientFromEnv({ VOUCH_URL: base, VOUCH_API_KEY: key });
    assert.equal(viaEnv.tokens, undefined);
    const plan = await scoreExample.main({ client: viaEnv, amount: 10 });
    assert.equal((await viaEnv.getDecision(plan.score.decision_id)).id, plan.score.decision_id);
    assert.throws(() => clientFromEnv({ VOUCH_URL: base }), /VOUCH_CLIENT_ID/);
    const fromCreds = clientFromEnv({ VOUCH_URL: base, VOUCH_CLIENT_ID: creds.id, VOUCH_CLIENT_SECRET: creds.secret });
    assert.ok(fromCreds.tokens);
  });

  test('an example runs as a script, configured by VOUCH_* variables', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'examples', 'score-before-release.ts')],
      {
        env: {
          PATH: process.env.PATH ?? '',
          VOUCH_URL: base,
          VOUCH_CLIENT_ID: creds.id,
          VOUCH_CLIENT_SECRET: creds.secret,
        },
        timeout: 60_000,
      },
    );
    const plan = JSON.parse(stdout) as {
      score: { decision_id: string; safe_amount: number | null };
      requested: number;
      release: number;
    };
    assert.match(plan.score.decision_id, /^dec_/);
    assert.equal(plan.release, scoreExample.capRelease(plan.requested, plan.score.safe_amount));
  });
});
