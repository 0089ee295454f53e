// docs/api.md, "Four eyes" over HTTP with machine credentials: the setting (admin), a rule's or a
// policy's activation and a list's deletion answered 202 with a pending change while it holds
// (an API key does not get around it), the list of changes, a machine's approval refused (403),
// rejection, expiry (72 hours; approving then is 409) and 409 on a decided change; and people with
// sessions: the requester may not approve their own, another person of the role does.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, problem } from '../helpers/app.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { caller, makeKey, readLog, type Key } from '../audit-log/support.ts';
import { asPerson, person } from '../helpers/people.ts';

interface Change {
  id: string;
  kind: string;
  status: string;
  target: string;
  payload: Record<string, unknown>;
  requested_by: { type: string; id: string; name: string };
  created_at: string;
  expires_at: string;
  decided_by: { type: string; id: string; name: string } | null;
  decided_at: string | null;
  note: string | null;
}

const HOURS_72 = 72 * 3600 * 1000;

describeEachBackend('four eyes over HTTP', (ctx) => {
  const call = caller(ctx);
  let admin: Key;
  let operator: Key;
  let ruleId = '';

  const pendingOf = (res: { statusCode: number; body: string; json(): unknown }): Change => {
    assert.equal(res.statusCode, 202, res.body);
    return res.json() as Change;
  };

  before(async () => {
    admin = await makeKey(ctx(), 'settings admin', 'admin');
    operator = await makeKey(ctx(), 'rule writer', 'operator', [
      'rules:read',
      'rules:write',
      'policy:read',
      'policy:write',
    ]);
    const rule = await call(operator, 'POST', '/api/v1/rules', {
      name: 'held',
      condition: 'amount > 100.0',
      action: 'hold',
    });
    assert.equal(rule.statusCode, 201, rule.body);
    ruleId = (rule.json() as { id: string }).id;
    assert.equal(
      (await call(operator, 'POST', '/api/v1/lists', { name: 'held-list', kind: 'country' })).statusCode,
      201,
    );
  });

  test('settings: empty by default; only an admin with settings:write changes them; 400 on an unknown area', async () => {
    const reader = await makeKey(ctx(), 'settings reader', 'service', ['settings:read']);
    const unset = { four_eyes: [], updated_by: null, updated_at: null };
    assert.deepEqual((await call(reader, 'GET', '/api/v1/settings')).json(), unset);
    const opWithScope = await makeKey(ctx(), 'settings op', 'operator', ['settings:write']);
    problem(await call(opWithScope, 'PUT', '/api/v1/settings', { four_eyes: ['rules'] }), 403, 'insufficient_scope');
    problem(await call(admin, 'PUT', '/api/v1/settings', { four_eyes: ['reviews'] }), 400, 'validation_failed');
    problem(await call(admin, 'PUT', '/api/v1/settings', {}), 400, 'validation_failed');
    const put = await call(admin, 'PUT', '/api/v1/settings', { four_eyes: ['lists', 'rules', 'policies'] });
    assert.equal(put.statusCode, 200, put.body);
    const { updated_at, ...answer } = put.json() as { updated_at: string };
    assert.deepEqual(answer, {
      four_eyes: ['rules', 'policies', 'lists'],
      updated_by: { type: 'client', id: admin.id, name: admin.name },
    });
    assert.ok(Date.parse(updated_at) > 0);
    assert.deepEqual((await call(reader, 'GET', '/api/v1/settings')).json(), put.json());
    // Per environment: test mode has its own.
    const testReader = await makeKey(ctx(), 'test reader', 'service', ['settings:read'], 'test');
    assert.deepEqual((await call(testReader, 'GET', '/api/v1/settings')).json(), unset);
  });

  test('activating a rule: 202 with the pending change, the rule unchanged; a draft↔shadow move is not held', async () => {
    const before = Date.now();
    const change = pendingOf(
      await call(operator, 'PATCH', `/api/v1/rules/${ruleId}`, { status: 'active', reason: 'go' }),
    );
    assert.equal(change.kind, 'rule_activation');
    assert.equal(change.status, 'pending');
    assert.equal(change.target, `rule:${ruleId}`);
    assert.deepEqual(change.requested_by, { type: 'client', id: operator.id, name: 'rule writer' });
    assert.equal(Date.parse(change.expires_at) - Date.parse(change.created_at), HOURS_72);
    assert.ok(Date.parse(change.created_at) >= before - 1000);
    assert.deepEqual(change.payload, { patch: { status: 'active' }, reason: 'go', base_version: 1 });
    assert.equal((await call(operator, 'GET', `/api/v1/rules/${ruleId}`)).json().status, 'draft');
    const shadow = await call(operator, 'PATCH', `/api/v1/rules/${ruleId}`, { status: 'shadow' });
    assert.equal(shadow.statusCode, 200, shadow.body);
    // Checked when asked: a condition that does not check is 400, not a pending change.
    problem(
      await call(operator, 'PATCH', `/api/v1/rules/${ruleId}`, { status: 'active', condition: 'nope > ' }),
      400,
      'validation_failed',
    );
    problem(await call(operator, 'PATCH', '/api/v1/rules/rul_missing', { status: 'active' }), 404, 'not_found');
  });

  test('a rule created active is stored as a draft and its activation held', async () => {
    const change = pendingOf(
      await call(operator, 'POST', '/api/v1/rules', {
        name: 'new active',
        condition: 'amount > 1.0',
        action: 'review',
        status: 'active',
      }),
    );
    const id = change.target.replace(/^rule:/, '');
    assert.equal((await call(operator, 'GET', `/api/v1/rules/${id}`)).json().status, 'draft');
  });

  test('activating a policy and deleting a list are held too; a list that does not exist is still 404', async () => {
    assert.equal(
      (await call(operator, 'POST', '/api/v1/policies', { ...DEFAULT_POLICY, version: 'held-1' })).statusCode,
      201,
    );
    const policy = pendingOf(await call(operator, 'POST', '/api/v1/policies/held-1/activate', {}));
    assert.deepEqual(
      [policy.kind, policy.target, policy.payload],
      ['policy_activation', 'policy:held-1', { version: 'held-1' }],
    );
    assert.equal((await call(operator, 'GET', '/api/v1/policies/held-1')).json().status, 'candidate');
    const list = pendingOf(await call(operator, 'DELETE', '/api/v1/lists/held-list'));
    assert.deepEqual([list.kind, list.target], ['list_deletion', 'list:held-list']);
    assert.equal((await call(operator, 'GET', '/api/v1/lists/held-list')).statusCode, 200);
    problem(await call(operator, 'DELETE', '/api/v1/lists/no-such-list'), 404, 'not_found');
  });

  test('GET /api/v1/changes: newest first, status and kind filters, one by id; another environment sees none', async () => {
    const all = (await call(operator, 'GET', '/api/v1/changes')).json() as { data: Change[] };
    assert.ok(all.data.length >= 4);
    for (let i = 1; i < all.data.length; i++) assert.ok(all.data[i - 1]!.id > all.data[i]!.id);
    const policies = (await call(operator, 'GET', '/api/v1/changes?kind=policy_activation')).json() as {
      data: Change[];
    };
    assert.deepEqual(
      policies.data.map((c) => c.target),
      ['policy:held-1'],
    );
    const pending = (await call(operator, 'GET', '/api/v1/changes?status=pending&limit=1')).json() as {
      data: Change[];
      next_cursor: string | null;
    };
    assert.equal(pending.data.length, 1);
    assert.equal(pending.next_cursor, pending.data[0]!.id);
    const one = await call(operator, 'GET', `/api/v1/changes/${pending.data[0]!.id}`);
    assert.equal(one.json().id, pending.data[0]!.id);
    const testKey = await makeKey(ctx(), 'test op', 'operator', ['rules:read', 'rules:write'], 'test');
    problem(await call(testKey, 'GET', `/api/v1/changes/${pending.data[0]!.id}`), 404, 'not_found');
    problem(await call(testKey, 'POST', `/api/v1/changes/${pending.data[0]!.id}/reject`, {}), 404, 'not_found');
  });

  test('a machine cannot approve (403 forbidden), the requester’s own key neither; the change stays pending', async () => {
    const [change] = (
      (await call(operator, 'GET', '/api/v1/changes?kind=rule_activation&status=pending')).json() as {
        data: Change[];
      }
    ).data;
    problem(await call(admin, 'POST', `/api/v1/changes/${change!.id}/approve`, {}), 403, 'forbidden');
    problem(await call(operator, 'POST', `/api/v1/changes/${change!.id}/approve`), 403, 'forbidden');
    assert.equal((await call(operator, 'GET', `/api/v1/changes/${change!.id}`)).json().status, 'pending');
  });

  test('a policy change needs policy:write to decide on, as its route does', async () => {
    const rulesOnly = await makeKey(ctx(), 'rules only', 'operator', ['rules:read', 'rules:write']);
    const [change] = (
      (await call(operator, 'GET', '/api/v1/changes?kind=policy_activation')).json() as {
        data: Change[];
      }
    ).data;
    const res = await call(rulesOnly, 'POST', `/api/v1/changes/${change!.id}/reject`, {});
    problem(res, 403, 'insufficient_scope');
    assert.match(res.json().detail, /policy:write/);
  });

  test('reject: 200 rejected, with who and why; deciding it again is 409; the audit log has both', async () => {
    const [change] = (
      (await call(operator, 'GET', '/api/v1/changes?kind=list_deletion')).json() as {
        data: Change[];
      }
    ).data;
    const res = await call(admin, 'POST', `/api/v1/changes/${change!.id}/reject`, { note: 'keep it for now' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as Change;
    assert.equal(body.status, 'rejected');
    assert.deepEqual(body.decided_by, { type: 'client', id: admin.id, name: 'settings admin' });
    assert.equal(body.note, 'keep it for now');
    assert.ok(body.decided_at);
    problem(await call(admin, 'POST', `/api/v1/changes/${change!.id}/reject`, {}), 409, 'conflict');
    problem(await call(admin, 'POST', `/api/v1/changes/${change!.id}/approve`, {}), 409, 'conflict');
    assert.equal((await call(operator, 'GET', '/api/v1/lists/held-list')).statusCode, 200);
    const log = (await readLog(ctx(), admin, 'action=change.*')).filter((e) => e.target === `change:${change!.id}`);
    assert.deepEqual(
      log.map((e) => [e.action, e.actor.id]),
      [
        ['change.rejected', admin.id],
        ['change.requested', operator.id],
      ],
    );
    assert.equal(log[0]!.after?.note, 'keep it for now');
  });

  test('after 72 hours a change is expired: shown so, listed under expired, and approving it is 409', async () => {
    const change = pendingOf(await call(operator, 'PATCH', `/api/v1/rules/${ruleId}`, { status: 'active' }));
    await ctx()
      .store.db.updateTable('pending_changes')
      .set({ expires_at: Date.now() - 1 })
      .where('id', '=', change.id)
      .execute();
    assert.equal((await call(operator, 'GET', `/api/v1/changes/${change.id}`)).json().status, 'expired');
    const expired = (await call(operator, 'GET', '/api/v1/changes?status=expired')).json() as { data: Change[] };
    assert.ok(expired.data.some((c) => c.id === change.id));
    const pending = (await call(operator, 'GET', '/api/v1/changes?status=pending')).json() as { data: Change[] };
    assert.ok(!pending.data.some((c) => c.id === change.id));
    problem(await call(admin, 'POST', `/api/v1/changes/${change.id}/reject`, {}), 409, 'conflict');
    const row = await ctx()
      .store.db.selectFrom('pending_changes')
      .select('status')
      .where('id', '=', change.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'expired');
  });

  test('bad ids are 404; bodies are checked', async () => {
    problem(await call(admin, 'POST', '/api/v1/changes/nope/approve', {}), 404, 'not_found');
    problem(await call(admin, 'GET', '/api/v1/changes/chg_01HZY8Q5W6J9V2N4K7M3P5R8T1'), 404, 'not_found');
    problem(await call(admin, 'POST', '/api/v1/changes/nope/reject', { extra: 1 }), 400, 'validation_failed');
  });

  test('with four eyes off, the same requests apply at once', async () => {
    assert.equal((await call(admin, 'PUT', '/api/v1/settings', { four_eyes: [] })).statusCode, 200);
    const res = await call(operator, 'PATCH', `/api/v1/rules/${ruleId}`, { status: 'active' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'active');
    assert.equal((await call(operator, 'DELETE', '/api/v1/lists/held-list')).statusCode, 204);
  });

  test('people: one operator asks, the same one may not approve (403), another approves and the rule goes live', async () => {
    assert.equal((await call(admin, 'PUT', '/api/v1/settings', { four_eyes: ['rules'] })).statusCode, 200);
    const adminToken = await ctx().token();
    const [asker, approver, viewer] = [
      await person(ctx(), 'operator', adminToken),
      await person(ctx(), 'operator', adminToken),
      await person(ctx(), 'viewer', adminToken),
    ];
    const send = (p: typeof asker, method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown> = {}) =>
      ctx().inject({ method, url, headers: asPerson(p), payload });
    const made = await send(asker, 'POST', '/api/v1/rules', {
      name: 'by a person',
      condition: 'amount > 5.0',
      action: 'review',
    });
    assert.equal(made.statusCode, 201, made.body);
    const id = (made.json() as { id: string }).id;
    const change = pendingOf(await send(asker, 'PATCH', `/api/v1/rules/${id}`, { status: 'active', reason: 'live' }));
    assert.deepEqual(change.requested_by, { type: 'user', id: asker.id, name: change.requested_by.name });
    problem(await send(asker, 'POST', `/api/v1/changes/${change.id}/approve`), 403, 'forbidden');
    problem(await send(viewer, 'POST', `/api/v1/changes/${change.id}/approve`), 403, 'insufficient_scope');
    const approved = await send(approver, 'POST', `/api/v1/changes/${change.id}/approve`, { note: 'looked at it' });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal((approved.json() as Change).status, 'approved');
    assert.equal((approved.json() as Change).decided_by?.id, approver.id);
    const rule = await ctx().inject({ method: 'GET', url: `/api/v1/rules/${id}`, headers: asPerson(viewer) });
    assert.equal((rule.json() as { status: string }).status, 'active');
  });
});
