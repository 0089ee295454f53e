// docs/api.md, "Rules and lists": typed lists, entries (bulk add with already_present, paging,
// removal kept in the store), value checks per kind (the raw-identifier refusal on entity and
// identifier lists), the 409 on deleting a list a live rule names, list.changed webhooks, the
// environment bound, environments, and a list entry applied on the next score.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend, problem, type TestContext } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import type { Environment, Role } from '../../src/lib/principal.ts';
import { addListEntries } from '../../src/rules/lists.ts';

const ALL = ['rules:read', 'rules:write', 'trust:read', 'trust:write', 'webhooks:write'];

async function key(ctx: TestContext, environment: Environment, role: Role, scopes = ALL): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/keys',
    headers: bearer(await ctx.token()),
    payload: { name: `lists-${environment}`, role, environment, scopes },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().key as string;
}

describeEachBackend(
  'lists API',
  (ctx) => {
    let live = '';
    let testKey = '';
    const call = (k: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
      ctx().inject({
        method,
        url,
        headers: { 'x-api-key': k },
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
    const makeList = async (name: string, kind: string, k = live) => {
      const res = await call(k, 'POST', '/api/v1/lists', { name, kind, description: `${kind} list` });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    const add = (name: string, payload: Record<string, unknown>, k = live) =>
      call(k, 'POST', `/api/v1/lists/${name}/entries`, payload);

    before(async () => {
      live = await key(ctx(), 'live', 'operator');
      testKey = await key(ctx(), 'test', 'operator');
      const hook = await call(live, 'POST', '/api/v1/webhooks', {
        url: 'http://127.0.0.1:9/hook',
        events: ['list.changed'],
      });
      assert.equal(hook.statusCode, 201, hook.body);
    });

    test('POST 201; the same name again 409; a bad name or kind 400; GET one and the list with present counts', async () => {
      const list = await makeList('vip-sellers', 'string');
      assert.deepEqual(
        { name: list.name, kind: list.kind, entries: list.entries },
        { name: 'vip-sellers', kind: 'string', entries: 0 },
      );
      problem(await call(live, 'POST', '/api/v1/lists', { name: 'vip-sellers', kind: 'string' }), 409, 'conflict');
      problem(
        await call(live, 'POST', '/api/v1/lists', { name: 'has space', kind: 'string' }),
        400,
        'validation_failed',
      );
      problem(await call(live, 'POST', '/api/v1/lists', { name: 'x', kind: 'colour' }), 400, 'validation_failed');
      const added = await add('vip-sellers', { values: ['a', 'b', 'c'], reason: 'known' });
      assert.equal(added.statusCode, 200, added.body);
      assert.deepEqual(added.json(), { added: 3, already_present: 0 });
      assert.deepEqual((await add('vip-sellers', { values: ['c', 'd', 'd'] })).json(), {
        added: 1,
        already_present: 1,
      });
      assert.equal((await call(live, 'GET', '/api/v1/lists/vip-sellers')).json().entries, 4);
      const all = (await call(live, 'GET', '/api/v1/lists')).json();
      assert.equal(all.data.find((l: { name: string }) => l.name === 'vip-sellers').entries, 4);
      problem(await call(live, 'GET', '/api/v1/lists/nope'), 404, 'not_found');
      problem(await add('nope', { values: ['x'] }), 404, 'not_found');
    });

    test('entries page by value; a removed entry is gone from the list but kept in the store with who and when', async () => {
      await makeList('paged', 'string');
      await add('paged', { values: ['e1', 'e2', 'e3', 'e4', 'e5'], reason: 'seed' });
      const first = (await call(live, 'GET', '/api/v1/lists/paged/entries?limit=2')).json();
      assert.deepEqual(
        first.data.map((e: { value: string }) => e.value),
        ['e1', 'e2'],
      );
      assert.equal(first.data[0].reason, 'seed');
      assert.equal(typeof first.data[0].added_by, 'string');
      const second = (
        await call(live, 'GET', `/api/v1/lists/paged/entries?limit=2&cursor=${first.next_cursor}`)
      ).json();
      assert.deepEqual(
        second.data.map((e: { value: string }) => e.value),
        ['e3', 'e4'],
      );
      assert.equal((await call(live, 'DELETE', '/api/v1/lists/paged/entries/e3')).statusCode, 204);
      problem(await call(live, 'DELETE', '/api/v1/lists/paged/entries/e3'), 404, 'not_found');
      const after = (await call(live, 'GET', '/api/v1/lists/paged/entries?limit=10')).json();
      assert.deepEqual(
        after.data.map((e: { value: string }) => e.value),
        ['e1', 'e2', 'e4', 'e5'],
      );
      const stored = await ctx()
        .store.db.selectFrom('list_entries')
        .select(['removed_at', 'removed_by'])
        .where('value', '=', 'e3')
        .executeTakeFirstOrThrow();
      assert.ok(Number(stored.removed_at) > 0);
      assert.equal(typeof stored.removed_by, 'string');
      // added again: a new entry
      assert.deepEqual((await add('paged', { values: ['e3'] })).json(), { added: 1, already_present: 0 });
    });

    test('values per kind: countries (upper-cased, assigned codes), payment methods, expiry in the future', async () => {
      await makeList('countries', 'country');
      assert.deepEqual((await add('countries', { values: ['ng', 'GH'] })).json(), { added: 2, already_present: 0 });
      const entries = (await call(live, 'GET', '/api/v1/lists/countries/entries'))
        .json()
        .data.map((e: { value: string }) => e.value);
      assert.deepEqual(entries, ['GH', 'NG']);
      const bad = problem(await add('countries', { values: ['GH', 'XX'] }), 400, 'validation_failed');
      assert.equal((bad.errors as Array<{ field: string }>)[0]!.field, 'values.1');
      await makeList('methods', 'payment_method');
      assert.equal((await add('methods', { values: ['card'] })).statusCode, 200);
      problem(await add('methods', { values: ['cheque'] }), 400, 'validation_failed');
      problem(await add('methods', { values: ['card'], expires_at: '2001-01-01T00:00:00Z' }), 400, 'validation_failed');
      problem(await add('methods', { values: [] }), 400, 'validation_failed');
      problem(
        await add('methods', { values: Array.from({ length: 1001 }, (_, i) => `v${i}`) }),
        400,
        'validation_failed',
      );
    });

    test('entity and identifier lists refuse raw identifiers (400 raw_identifier_rejected), never echoing the value', async () => {
      await makeList('mules', 'entity');
      await makeList('bad-phones', 'identifier');
      for (const [name, raw] of [
        ['mules', '+44 7911 123456'],
        ['bad-phones', 'someone@example.com'],
        ['mules', 'DE89 3704 0044 0532 0130 00'],
      ] as const) {
        const res = await add(name, { values: [hash('fine'), raw] });
        const body = problem(res, 400, 'raw_identifier_rejected');
        assert.equal((body.errors as Array<{ field: string }>)[0]!.field, 'values.1');
        assert.ok(!res.body.includes(raw));
      }
      assert.equal(
        (await call(live, 'GET', '/api/v1/lists/mules')).json().entries,
        0,
        'nothing of a refused request is added',
      );
      assert.deepEqual((await add('mules', { values: [hash('mule-1')] })).json(), { added: 1, already_present: 0 });
    });

    test('a list an active or shadow rule names cannot be deleted (409 naming the rules); once it is a draft again it can', async () => {
      await makeList('blocked', 'entity');
      const rule = await call(live, 'POST', '/api/v1/rules', {
        name: 'blocked entities',
        condition: 'in_list("blocked", entity_id)',
        action: 'decline',
        status: 'shadow',
      });
      assert.equal(rule.statusCode, 201, rule.body);
      const refused = problem(await call(live, 'DELETE', '/api/v1/lists/blocked'), 409, 'conflict');
      assert.deepEqual(
        (refused.rules as Array<{ id: string }>).map((r) => r.id),
        [rule.json().id],
      );
      await call(live, 'PATCH', `/api/v1/rules/${rule.json().id}`, { status: 'draft' });
      assert.equal((await call(live, 'DELETE', '/api/v1/lists/blocked')).statusCode, 204);
      problem(await call(live, 'GET', '/api/v1/lists/blocked'), 404, 'not_found');
      // the name can be taken again
      await makeList('blocked', 'string');
    });

    test('a list entry applies on the next score, cached scores included; removal too', async () => {
      await makeList('deny', 'entity');
      const rule = await call(live, 'POST', '/api/v1/rules', {
        name: 'deny list',
        condition: 'in_list("deny", entity_id)',
        action: 'decline',
        status: 'active',
      });
      assert.equal(rule.statusCode, 201, rule.body);
      const entity = hash('deny-me');
      const score = async () =>
        (await call(live, 'POST', '/api/v1/trust/score', { entity_id: entity, amount: 20, currency: 'USD' })).json();
      const first = await score();
      assert.notEqual(first.outcome, 'decline');
      assert.equal((await score()).cached, true);
      await add('deny', { values: [entity], reason: 'mule' });
      const denied = await score();
      assert.equal(denied.outcome, 'decline');
      assert.equal(denied.cached, false);
      assert.equal(denied.rules[0].reads['in_list(deny, entity_id)'], true);
      assert.equal((await call(live, 'DELETE', `/api/v1/lists/deny/entries/${entity}`)).statusCode, 204);
      assert.equal((await score()).outcome, first.outcome);
    });

    test('list.changed is enqueued with counts and never the values; a test key sees no live list', async () => {
      const before = await ctx()
        .store.db.selectFrom('webhook_events')
        .select('id')
        .where('type', '=', 'list.changed')
        .execute();
      await makeList('hooked', 'string');
      await add('hooked', { values: ['secret-value'] });
      await call(live, 'DELETE', '/api/v1/lists/hooked/entries/secret-value');
      await call(live, 'DELETE', '/api/v1/lists/hooked');
      const rows = await ctx()
        .store.db.selectFrom('webhook_events')
        .select(['data', 'owner_client_id'])
        .where('type', '=', 'list.changed')
        .execute();
      assert.equal(rows.length, before.length + 4);
      const mine = rows.map((r) => JSON.parse(r.data)).filter((d) => d.list === 'hooked');
      assert.deepEqual(mine.map((d) => d.change).sort(), ['created', 'deleted', 'entries_added', 'entry_removed']);
      assert.ok(!rows.some((r) => r.data.includes('secret-value')));
      await makeList('live-only', 'string');
      problem(await call(testKey, 'GET', '/api/v1/lists/live-only'), 404, 'not_found');
      problem(await add('live-only', { values: ['x'] }, testKey), 404, 'not_found');
      problem(await call(testKey, 'DELETE', '/api/v1/lists/live-only'), 404, 'not_found');
      assert.ok(
        !(await call(testKey, 'GET', '/api/v1/lists'))
          .json()
          .data.some((l: { name: string }) => l.name === 'live-only'),
      );
      // a test list of the same name is its own
      await makeList('live-only', 'country', testKey);
    });

    test('addListEntries moves rule_revisions and writes the feed row in the caller transaction; an expired entry is added anew', async () => {
      const db = ctx().store.db;
      await makeList('exported', 'string');
      const revision = async () =>
        Number(
          (
            await db
              .selectFrom('rule_revisions')
              .select('revision')
              .where('environment', '=', 'live')
              .executeTakeFirstOrThrow()
          ).revision,
        );
      const seq = async () =>
        Number(
          (
            await db
              .selectFrom('revocations')
              .select((eb) => eb.fn.max('seq').as('m'))
              .executeTakeFirstOrThrow()
          ).m,
        );
      const r0 = await revision();
      const s0 = await seq();
      const now = Date.now();
      const result = await db
        .transaction()
        .execute((trx) =>
          addListEntries(
            trx,
            'live',
            'exported',
            ['x', 'y'],
            'reviewer',
            { reason: 'review', expiresAt: now + 1000 },
            now,
          ),
        );
      assert.deepEqual(result, { added: 2, already_present: 0 });
      assert.equal(await revision(), r0 + 1);
      assert.ok((await seq()) > s0);
      // at a later time the entries have expired: adding them again makes new entries
      assert.deepEqual(await addListEntries(db, 'live', 'exported', ['x'], 'reviewer', {}, now + 5000), {
        added: 1,
        already_present: 0,
      });
      const xs = await db
        .selectFrom('list_entries')
        .innerJoin('lists', 'lists.id', 'list_entries.list_id')
        .select(['list_entries.removed_at'])
        .where('lists.name', '=', 'exported')
        .where('value', '=', 'x')
        .execute();
      assert.equal(xs.length, 2);
      assert.equal(xs.filter((x) => x.removed_at === null).length, 1);
    });
  },
  { webhookAllowPrivate: true },
);
