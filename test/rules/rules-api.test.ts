// docs/api.md, "Rules and lists": rules CRUD, versions, lifecycle, the save-time check (400 naming
// the field and the position), the console's check/variables/stats, role and scope refusals,
// rule.changed webhooks, and environments (a test key never sees or changes live rules).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend, problem, type TestContext } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import type { Environment, Role } from '../../src/lib/principal.ts';

const ALL = ['rules:read', 'rules:write', 'trust:read', 'trust:write', 'webhooks:read', 'webhooks:write'];

async function key(ctx: TestContext, environment: Environment, role: Role, scopes = ALL): Promise<string> {
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/keys',
    headers: bearer(await ctx.token()),
    payload: { name: `rules-${environment}-${role}`, role, environment, scopes },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().key as string;
}

describeEachBackend(
  'rules API',
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
    const create = async (body: Record<string, unknown>, k = live) => {
      const res = await call(k, 'POST', '/api/v1/rules', body);
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as Record<string, unknown> & { id: string; version: number; status: string };
    };
    const scoreOf = async (k: string, entity: string, amount: number) => {
      const res = await call(k, 'POST', '/api/v1/trust/score', { entity_id: hash(entity), amount, currency: 'USD' });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as {
        outcome: string;
        rules: Array<{ id: string; version: number; reads: Record<string, unknown> }>;
        decision_id: string;
        cached?: boolean;
        review_id?: string;
      };
    };

    before(async () => {
      live = await key(ctx(), 'live', 'operator');
      testKey = await key(ctx(), 'test', 'operator');
      for (const k of [live, testKey]) {
        const hook = await call(k, 'POST', '/api/v1/webhooks', {
          url: 'http://127.0.0.1:9/hook',
          events: ['rule.changed', 'list.changed'],
        });
        assert.equal(hook.statusCode, 201, hook.body);
      }
    });

    test('POST 201 version 1, draft by default, with Location; GET one and the list (status filter)', async () => {
      const rule = await create({
        name: 'big first trade',
        condition: 'amount > 5000.0 && entity.completed_trades == 0.0',
        action: 'hold',
        description: 'why',
      });
      assert.equal(rule.version, 1);
      assert.equal(rule.status, 'draft');
      assert.equal(rule.action, 'hold');
      assert.equal(rule.cap, null);
      assert.equal(rule.override, false);
      const one = await call(live, 'GET', `/api/v1/rules/${rule.id}`);
      assert.equal(one.statusCode, 200, one.body);
      assert.equal(one.json().name, 'big first trade');
      const drafts = (await call(live, 'GET', '/api/v1/rules?status=draft')).json();
      assert.ok(drafts.data.some((r: { id: string }) => r.id === rule.id));
      const active = (await call(live, 'GET', '/api/v1/rules?status=active')).json();
      assert.ok(!active.data.some((r: { id: string }) => r.id === rule.id));
      problem(await call(live, 'GET', '/api/v1/rules/rul_nope'), 404, 'not_found');
    });

    test('the list pages with a cursor', async () => {
      for (let i = 0; i < 3; i++) await create({ name: `page ${i}`, condition: 'amount > 1.0', cap: 10 });
      const first = (await call(live, 'GET', '/api/v1/rules?limit=2')).json();
      assert.equal(first.data.length, 2);
      assert.ok(first.next_cursor);
      const second = (
        await call(live, 'GET', `/api/v1/rules?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`)
      ).json();
      assert.ok(second.data.length >= 1);
      assert.ok(!second.data.some((r: { id: string }) => first.data.some((f: { id: string }) => f.id === r.id)));
    });

    test('PATCH makes a new version with the reason; versions keep every one; lifecycle; DELETE retires (final)', async () => {
      const rule = await create({ name: 'lifecycle', condition: 'amount > 100.0', action: 'review' });
      const patched = await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, {
        condition: 'amount > 200.0',
        reason: 'too noisy',
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.json().version, 2);
      assert.equal(patched.json().condition, 'amount > 200.0');
      assert.equal(patched.json().action, 'review');
      for (const status of ['shadow', 'active', 'shadow', 'active']) {
        const moved = await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { status });
        assert.equal(moved.statusCode, 200, moved.body);
        assert.equal(moved.json().status, status);
      }
      const retired = await call(live, 'DELETE', `/api/v1/rules/${rule.id}?reason=replaced`);
      assert.equal(retired.statusCode, 200, retired.body);
      assert.equal(retired.json().status, 'retired');
      assert.equal(retired.json().version, 7);
      problem(await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { status: 'active' }), 409, 'conflict');
      problem(await call(live, 'DELETE', `/api/v1/rules/${rule.id}`), 409, 'conflict');
      const versions = (await call(live, 'GET', `/api/v1/rules/${rule.id}/versions`)).json().data as Array<
        Record<string, unknown>
      >;
      assert.deepEqual(
        versions.map((v) => v.version),
        [7, 6, 5, 4, 3, 2, 1],
      );
      assert.equal(versions[0]!.reason, 'replaced');
      assert.equal(versions[5]!.reason, 'too noisy');
      assert.equal(versions[6]!.condition, 'amount > 100.0');
      assert.equal(typeof versions[0]!.changed_by, 'string');
      assert.ok(!Number.isNaN(Date.parse(String(versions[0]!.changed_at))));
      problem(await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, {}), 400, 'validation_failed');
    });

    test('names, descriptions and list values with bidi overrides or zero-width characters: 400 naming the field', async () => {
      const fieldsOf = (res: Awaited<ReturnType<typeof call>>) =>
        (problem(res, 400, 'validation_failed').errors as Array<{ field: string }>).map((e) => e.field);
      // U+202E shows "enilced" as "decline"
      assert.deepEqual(
        fieldsOf(
          await call(live, 'POST', '/api/v1/rules', {
            name: 'allow \u202eenilced',
            description: 'zero\u200bwidth',
            condition: 'amount > 1.0',
            action: 'review',
          }),
        ),
        ['name', 'description'],
      );
      const rule = await create({
        name: 'plain',
        description: 'two\nlines',
        condition: 'amount > 1.0',
        action: 'review',
      });
      assert.deepEqual(fieldsOf(await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { name: 'pl\u2066ain' })), [
        'name',
      ]);
      assert.deepEqual(
        fieldsOf(
          await call(live, 'POST', '/api/v1/lists', { name: 'hidden', kind: 'string', description: 'a\u200db' }),
        ),
        ['description'],
      );
      assert.equal((await call(live, 'POST', '/api/v1/lists', { name: 'hidden', kind: 'string' })).statusCode, 201);
      assert.deepEqual(
        fieldsOf(await call(live, 'POST', '/api/v1/lists/hidden/entries', { values: ['ok', 'sp\ufeffoof'] })),
        ['values.1'],
      );
    });

    test('a condition that does not check: 400 validation_failed naming condition and line:column; neither action nor cap: 400', async () => {
      const unknown = problem(
        await call(live, 'POST', '/api/v1/rules', {
          name: 'bad',
          condition: 'amount > 1.0 &&\n  nope > 2.0',
          action: 'decline',
        }),
        400,
        'validation_failed',
      );
      const errors = unknown.errors as Array<{ field: string; message: string }>;
      assert.equal(errors[0]!.field, 'condition');
      assert.match(errors[0]!.message, /line 2, column \d+/);
      const syntax = problem(
        await call(live, 'POST', '/api/v1/rules', { name: 'bad', condition: 'amount >', action: 'decline' }),
        400,
        'validation_failed',
      );
      assert.equal((syntax.errors as Array<{ field: string }>)[0]!.field, 'condition');
      const typed = problem(
        await call(live, 'POST', '/api/v1/rules', { name: 'bad', condition: 'amount', action: 'decline' }),
        400,
        'validation_failed',
      );
      assert.equal((typed.errors as Array<{ field: string }>)[0]!.field, 'condition');
      problem(
        await call(live, 'POST', '/api/v1/rules', { name: 'nothing', condition: 'amount > 1.0' }),
        400,
        'validation_failed',
      );
      const list = problem(
        await call(live, 'POST', '/api/v1/rules', {
          name: 'nolist',
          condition: 'in_list("ghosts", entity_id)',
          action: 'decline',
        }),
        400,
        'validation_failed',
      );
      assert.match((list.errors as Array<{ message: string }>)[0]!.message, /ghosts/);
      // a PATCH is checked as the merged rule
      const rule = await create({ name: 'patch check', condition: 'amount > 1.0', action: 'review' });
      problem(await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { action: null }), 400, 'validation_failed');
      problem(
        await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { condition: 'amount >' }),
        400,
        'validation_failed',
      );
      assert.equal((await call(live, 'GET', `/api/v1/rules/${rule.id}`)).json().version, 1);
    });

    test('POST /rules/check answers valid, errors with positions, and the variables read', async () => {
      const ok = await call(live, 'POST', '/api/v1/rules/check', {
        condition: 'amount > 10.0 && entity.account_age_days < 7.0',
      });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().valid, true);
      assert.deepEqual([...ok.json().reads].sort(), ['amount', 'entity.account_age_days']);
      const bad = (await call(live, 'POST', '/api/v1/rules/check', { condition: 'amount > "x"' })).json();
      assert.equal(bad.valid, false);
      assert.equal(bad.errors[0].field, 'condition');
      assert.equal(typeof bad.errors[0].line, 'number');
    });

    test('roles and scopes: a service key cannot write (403), a read-only key reads but cannot write', async () => {
      const service = await key(ctx(), 'live', 'service');
      problem(
        await call(service, 'POST', '/api/v1/rules', { name: 'x', condition: 'amount > 1.0', action: 'review' }),
        403,
        'insufficient_scope',
      );
      problem(await call(service, 'POST', '/api/v1/lists', { name: 'x', kind: 'string' }), 403, 'insufficient_scope');
      const reader = await key(ctx(), 'live', 'operator', ['rules:read']);
      assert.equal((await call(reader, 'GET', '/api/v1/rules')).statusCode, 200);
      problem(
        await call(reader, 'POST', '/api/v1/rules', { name: 'x', condition: 'amount > 1.0', action: 'review' }),
        403,
        'insufficient_scope',
      );
      const none = await key(ctx(), 'live', 'operator', ['trust:read']);
      problem(await call(none, 'GET', '/api/v1/rules'), 403, 'insufficient_scope');
    });

    test('an active rule changes the next score; a shadow one is stored, not applied; draft ones are not evaluated', async () => {
      const entity = 'rules-outcome';
      assert.equal((await scoreOf(live, entity, 77.5)).outcome, 'approve');
      const rule = await create({
        name: 'odd amount',
        condition: 'amount == 77.5',
        action: 'decline',
        status: 'shadow',
      });
      const shadowed = await scoreOf(live, entity, 77.5);
      assert.equal(shadowed.outcome, 'approve');
      const row = await ctx()
        .store.db.selectFrom('decisions')
        .select(['shadow_rules'])
        .where('id', '=', shadowed.decision_id)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(row.shadow_rules!)[0].id, rule.id);
      await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { status: 'active' });
      const declined = await scoreOf(live, entity, 77.5);
      assert.equal(declined.outcome, 'decline');
      assert.equal(declined.rules[0]!.id, rule.id);
      assert.equal(declined.rules[0]!.version, 2);
      assert.deepEqual(declined.rules[0]!.reads, { amount: 77.5 });
      assert.equal(declined.review_id, undefined, 'a decline opens no review');
      // a hold opens a review, and the score names it (docs/api.md, "Reviews")
      await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { action: 'hold' });
      const held = await scoreOf(live, entity, 77.5);
      assert.equal(held.outcome, 'hold');
      assert.match(String(held.review_id), /^rev_/);
      const review = await ctx()
        .store.db.selectFrom('reviews')
        .select(['decision_id', 'outcome'])
        .where('id', '=', String(held.review_id))
        .executeTakeFirstOrThrow();
      assert.deepEqual(review, { decision_id: held.decision_id, outcome: 'hold' });
      await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { status: 'draft' });
      const approved = await scoreOf(live, entity, 77.5);
      assert.equal(approved.outcome, 'approve');
      assert.equal(approved.review_id, undefined);
      // the test environment never saw it
      assert.equal((await scoreOf(testKey, entity, 77.5)).outcome, 'approve');
    });

    test('environments: a test key neither sees nor changes live rules', async () => {
      const liveRule = await create({
        name: 'live only',
        condition: 'amount == 42.5',
        action: 'decline',
        status: 'active',
      });
      problem(await call(testKey, 'GET', `/api/v1/rules/${liveRule.id}`), 404, 'not_found');
      problem(await call(testKey, 'PATCH', `/api/v1/rules/${liveRule.id}`, { status: 'draft' }), 404, 'not_found');
      problem(await call(testKey, 'DELETE', `/api/v1/rules/${liveRule.id}`), 404, 'not_found');
      assert.ok(
        !(await call(testKey, 'GET', '/api/v1/rules?limit=200'))
          .json()
          .data.some((r: { id: string }) => r.id === liveRule.id),
      );
      const testRule = await create(
        { name: 'test only', condition: 'amount == 43.5', action: 'decline', status: 'active' },
        testKey,
      );
      assert.equal((await scoreOf(testKey, 'env-a', 43.5)).outcome, 'decline');
      assert.equal((await scoreOf(live, 'env-a', 43.5)).outcome, 'approve');
      assert.equal((await scoreOf(live, 'env-b', 42.5)).outcome, 'decline');
      assert.equal((await scoreOf(testKey, 'env-b', 42.5)).outcome, 'approve');
      problem(await call(live, 'GET', `/api/v1/rules/${testRule.id}`), 404, 'not_found');
    });

    test('rule.changed is enqueued for the environment on create, patch and retire', async () => {
      const before = await ctx()
        .store.db.selectFrom('webhook_events')
        .select('id')
        .where('type', '=', 'rule.changed')
        .where('environment', '=', 'live')
        .execute();
      const rule = await create({ name: 'hooked', condition: 'amount > 1.0', action: 'review' });
      await call(live, 'PATCH', `/api/v1/rules/${rule.id}`, { status: 'shadow', reason: 'watch it' });
      await call(live, 'DELETE', `/api/v1/rules/${rule.id}`);
      const rows = await ctx()
        .store.db.selectFrom('webhook_events')
        .select(['data', 'owner_client_id', 'environment'])
        .where('type', '=', 'rule.changed')
        .where('environment', '=', 'live')
        .execute();
      assert.equal(rows.length, before.length + 3);
      const mine = rows.map((r) => JSON.parse(r.data)).filter((d) => d.rule_id === rule.id);
      assert.deepEqual(mine.map((d) => d.change).sort(), ['created', 'retired', 'updated']);
      assert.ok(rows.every((r) => r.owner_client_id === null));
      const patched = mine.find((d) => d.change === 'updated');
      assert.equal(patched.reason, 'watch it');
      assert.equal(patched.previous_status, 'draft');
    });

    test('variables list signals by name with examples from the latest decision; stats count matches per day', async () => {
      await scoreOf(live, 'vars', 321);
      const vars = (await call(live, 'GET', '/api/v1/rules/variables')).json().data as Array<{
        name: string;
        example?: unknown;
      }>;
      assert.equal(vars.find((v) => v.name === 'amount')!.example, 321);
      assert.ok(vars.some((v) => v.name.startsWith('signals.') && v.name !== 'signals.<name>'));
      assert.ok(!vars.some((v) => v.name === 'signals.<name>'));
      const rule = await create({ name: 'stats', condition: 'amount == 91.5', action: 'review', status: 'active' });
      await scoreOf(live, 'stats-1', 91.5);
      await scoreOf(live, 'stats-2', 91.5);
      const stats = (await call(live, 'GET', '/api/v1/rules/stats?days=7')).json();
      const mine = stats.data.find((r: { rule_id: string }) => r.rule_id === rule.id);
      const today = new Date().toISOString().slice(0, 10);
      assert.deepEqual(mine.days, [{ day: today, matched: 2, shadow_matched: 0 }]);
      assert.ok(stats.scored.find((d: { day: string }) => d.day === today).decisions >= 2);
      assert.equal(stats.truncated, false);
    });
  },
  { webhookAllowPrivate: true },
);
