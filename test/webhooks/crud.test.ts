// /api/v1/webhooks CRUD (docs/api.md, "Integration"): 201 with a whsec_ secret shown once, ownership like keys
// (others' webhooks are 404), role rules, URL rules (SSRF), fuzzed bodies never 5xx.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { JSON_TYPE, RUNS, bodies, wellBehaved } from '../helpers/fuzz.ts';

const HOOKS = '/api/v1/webhooks';
const PUBLIC_URL = 'https://93.184.216.34/hooks/vouch';

describeEachBackend('Webhook subscriptions', (ctx) => {
  let admin: string;
  let operator: string;
  const create = (payload: unknown, token = operator) =>
    ctx().inject({ method: 'POST', url: HOOKS, headers: bearer(token), payload: payload as object });

  before(async () => {
    admin = await ctx().token();
    operator = await ctx().token(['webhooks:read', 'webhooks:write'], 'operator');
  });

  test('create: 201, Location, the record and a whsec_ secret shown once; the secret is sealed at rest', async () => {
    const res = await create({
      url: PUBLIC_URL,
      events: ['decision.high_risk', 'key.deactivated'],
      description: 'risk desk',
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.match(body.id, /^whk_[0-9A-Z]{26}$/);
    assert.equal(res.headers.location, `${HOOKS}/${body.id}`);
    assert.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(body.events, ['decision.high_risk', 'key.deactivated']);
    assert.equal(body.description, 'risk desk');
    assert.equal(body.url, PUBLIC_URL);
    const row = await ctx()
      .store.db.selectFrom('webhooks')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    assert.ok(!row.secret.includes(body.secret.slice(6)));
    const one = await ctx().inject({ method: 'GET', url: `${HOOKS}/${body.id}`, headers: bearer(operator) });
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().secret, undefined);
    const list = await ctx().inject({ method: 'GET', url: HOOKS, headers: bearer(operator) });
    assert.ok(list.json().data.some((w: { id: string }) => w.id === body.id));
    assert.ok(!list.body.includes(body.secret));
  });

  test("ownership: another client's webhook is 404 (read, delete, deliveries); an admin sees it", async () => {
    const id = (await create({ url: PUBLIC_URL, events: ['entity.flagged'] })).json().id as string;
    const other = await ctx().token(['webhooks:read', 'webhooks:write'], 'operator');
    problem(await ctx().inject({ method: 'GET', url: `${HOOKS}/${id}`, headers: bearer(other) }), 404, 'not_found');
    problem(await ctx().inject({ method: 'DELETE', url: `${HOOKS}/${id}`, headers: bearer(other) }), 404, 'not_found');
    problem(
      await ctx().inject({ method: 'GET', url: `${HOOKS}/${id}/deliveries`, headers: bearer(other) }),
      404,
      'not_found',
    );
    assert.ok(!(await ctx().inject({ method: 'GET', url: HOOKS, headers: bearer(other) })).body.includes(id));
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `${HOOKS}/${id}`, headers: bearer(admin) })).statusCode,
      200,
    );
    problem(await ctx().inject({ method: 'GET', url: `${HOOKS}/whk_nope`, headers: bearer(admin) }), 404, 'not_found');
  });

  test('delete: 200 then 404', async () => {
    const id = (await create({ url: PUBLIC_URL, events: ['entity.flagged'] })).json().id as string;
    const res = await ctx().inject({ method: 'DELETE', url: `${HOOKS}/${id}`, headers: bearer(operator) });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { id, deleted: true });
    problem(await ctx().inject({ method: 'GET', url: `${HOOKS}/${id}`, headers: bearer(operator) }), 404, 'not_found');
  });

  test('scopes and roles: webhooks:write needs operator or admin (403); webhooks:read lists; no scope 403; none 401', async () => {
    const service = await ctx().token(['webhooks:read', 'webhooks:write'], 'service');
    problem(await create({ url: PUBLIC_URL, events: ['entity.flagged'] }, service), 403, 'insufficient_scope');
    assert.equal((await ctx().inject({ method: 'GET', url: HOOKS, headers: bearer(service) })).statusCode, 200);
    const reader = await ctx().token(['webhooks:read'], 'operator');
    problem(await create({ url: PUBLIC_URL, events: ['entity.flagged'] }, reader), 403, 'insufficient_scope');
    problem(
      await ctx().inject({ method: 'GET', url: HOOKS, headers: bearer(await ctx().token(['trust:read'])) }),
      403,
      'insufficient_scope',
    );
    problem(await ctx().inject({ method: 'GET', url: HOOKS }), 401, 'unauthenticated');
  });

  test('URL rules: other schemes, credentials, malformed, http, private, loopback, link-local and names resolving to them: 400 validation_failed', async () => {
    for (const url of [
      'ftp://example.com/x',
      'javascript:alert(1)',
      'file:///etc/passwd',
      'not a url',
      '//example.com/x',
      'https://user:pw@example.com/x',
      'http://93.184.216.34/x',
      'https://127.0.0.1/x',
      'https://10.1.2.3/x',
      'https://172.16.0.1/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest',
      'https://[::1]/x',
      'https://[fe80::1]/x',
      'https://[fd00::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://0.0.0.0/x',
      'https://localhost/x',
      'https://2130706433/x',
    ]) {
      const res = await create({ url, events: ['entity.flagged'] });
      const body = problem(res, 400, 'validation_failed');
      assert.equal((body.errors as Array<{ field: string }>)[0]!.field, 'url', url);
    }
    problem(await create({ url: PUBLIC_URL, events: ['nope'] }), 400, 'validation_failed');
    problem(await create({ url: PUBLIC_URL, events: [] }), 400, 'validation_failed');
    problem(await create({ url: PUBLIC_URL, events: ['entity.flagged', 'entity.flagged'] }), 400, 'validation_failed');
  });

  test('fuzz: random create bodies never answer 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(bodies(['url', 'events', 'description']), async (body) => {
        const res = await ctx().inject({
          method: 'POST',
          url: HOOKS,
          headers: { ...bearer(operator), ...JSON_TYPE },
          payload: body,
        });
        wellBehaved(res, body);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (id) => {
        let path = '%ED%A0%80';
        try {
          path = encodeURIComponent(id);
        } catch {
          /* invalid bytes */
        }
        wellBehaved(
          await ctx().inject({ method: 'GET', url: `${HOOKS}/${path}/deliveries`, headers: bearer(operator) }),
          id,
        );
        wellBehaved(
          await ctx().inject({
            method: 'POST',
            url: `${HOOKS}/${path}/deliveries/${path}/retry`,
            headers: bearer(operator),
          }),
          id,
        );
      }),
      { numRuns: 50 },
    );
  });
});
