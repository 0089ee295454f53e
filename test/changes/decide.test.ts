// docs/api.md, "Four eyes", decided by people (principals of kind user, as a session will make
// them): another person's approval applies the change exactly as its request would have, checked
// again then (and in the approval's transaction: a refusal leaves it pending); the requester
// cannot approve their own; a machine cannot approve; a decided or expired change is a conflict.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/app.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { ChangeFeed } from '../../src/store/change-feed.ts';
import { Conflict } from '../../src/lib/domain-errors.ts';
import type { Principal } from '../../src/lib/principal.ts';
import { decideChange, deferIfFourEyes, type ChangeAppliers } from '../../src/changes/four-eyes.ts';
import { ruleAppliers } from '../../src/rules/four-eyes.ts';
import { policyAppliers } from '../../src/policies/changes.ts';
import { caller, makeKey, readLog, type Key } from '../audit-log/support.ts';

const person = (id: string, name: string, scopes = ['rules:read', 'rules:write', 'policy:write']): Principal => ({
  id,
  kind: 'user',
  name,
  clientId: '',
  role: 'operator',
  scopes: new Set(scopes),
  environment: 'live',
});
const ana = person('usr_ana', 'Ana Lima');
const ben = person('usr_ben', 'Ben Okafor');
const approve = { approve: true, note: null, lacks: () => undefined };
const reject = { approve: false, note: 'no', lacks: () => undefined };

describeEachBackend('four eyes, decided by people', (ctx) => {
  const call = caller(ctx);
  let operator: Key;
  let admin: Key;
  let appliers: ChangeAppliers;

  /** A held change asked for over HTTP by the operator's key: its id. */
  const held = async (method: 'PATCH' | 'POST' | 'DELETE', url: string, payload?: unknown): Promise<string> => {
    const res = await call(operator, method, url, payload);
    assert.equal(res.statusCode, 202, res.body);
    return (res.json() as { id: string }).id;
  };
  const newRule = async (name: string) => {
    const res = await call(operator, 'POST', '/api/v1/rules', { name, condition: 'amount > 10.0', action: 'hold' });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { id: string }).id;
  };
  const ruleOf = async (id: string) => (await call(operator, 'GET', `/api/v1/rules/${id}`)).json();

  before(async () => {
    const { store } = ctx();
    const feed = new ChangeFeed(store);
    appliers = { ...ruleAppliers({ feed }), ...policyAppliers({ store, feed }) };
    admin = await makeKey(ctx(), 'admin', 'admin');
    operator = await makeKey(ctx(), 'asking operator', 'operator', [
      'rules:read',
      'rules:write',
      'policy:read',
      'policy:write',
    ]);
    const put = await call(admin, 'PUT', '/api/v1/settings', { four_eyes: ['rules', 'policies', 'lists'] });
    assert.equal(put.statusCode, 200, put.body);
  });

  test('another person approves a rule activation: approved, applied as asked, by the requester, logged', async () => {
    const id = await newRule('approve me');
    const change = await held('PATCH', `/api/v1/rules/${id}`, { status: 'active', reason: 'reviewed' });
    const outcome = await decideChange(ctx().store, ana, change, approve, appliers);
    assert.equal(outcome.kind, 'decided');
    if (outcome.kind !== 'decided') return;
    await outcome.afterCommit();
    assert.equal(outcome.change.status, 'approved');
    assert.deepEqual(outcome.change.decided_by, { type: 'user', id: 'usr_ana', name: 'Ana Lima' });
    const rule = await ruleOf(id);
    assert.deepEqual([rule.status, rule.version, rule.updated_by], ['active', 2, operator.id]);
    const versions = (await call(operator, 'GET', `/api/v1/rules/${id}/versions`)).json().data;
    assert.equal(versions[0].reason, 'reviewed');
    const log = await readLog(ctx(), admin);
    const approval = log.find((e) => e.action === 'change.approved' && e.target === `change:${change}`);
    assert.deepEqual(approval?.actor, { type: 'user', id: 'usr_ana', name: 'Ana Lima' });
    const applied = log.find((e) => e.action === 'rule.status_changed' && e.target === `rule:${id}`);
    assert.equal(applied?.actor.id, operator.id);
    // Newest first: the approval's entry follows the change it applied, in the same transaction.
    assert.equal(log.indexOf(approval!) + 1, log.indexOf(applied!));
  });

  test('the requester cannot approve their own change; another person can', async () => {
    const id = await newRule('asked by ana');
    const request = await deferIfFourEyes(ctx().store, ana, {
      kind: 'rule_activation',
      target: `rule:${id}`,
      payload: { patch: { status: 'active' }, reason: null, base_version: 1 },
    });
    assert.deepEqual(request?.requested_by, { type: 'user', id: 'usr_ana', name: 'Ana Lima' });
    const own = await decideChange(ctx().store, ana, request!.id, approve, appliers);
    assert.deepEqual(own, { kind: 'forbidden', detail: 'Another person must approve this change: you asked for it.' });
    assert.equal((await ruleOf(id)).status, 'draft');
    // Rejecting one's own is withdrawing it: allowed. This one Ben approves instead.
    const byBen = await decideChange(ctx().store, ben, request!.id, approve, appliers);
    assert.equal(byBen.kind, 'decided');
    assert.equal((await ruleOf(id)).status, 'active');
  });

  test('a machine cannot approve; a missing scope is named; a decided change is a conflict', async () => {
    const change = await held('PATCH', `/api/v1/rules/${await newRule('machine')}`, { status: 'active' });
    const machine: Principal = { ...ben, kind: 'api_key', id: admin.id };
    assert.equal((await decideChange(ctx().store, machine, change, approve, appliers)).kind, 'forbidden');
    const lacking = await decideChange(ctx().store, ben, change, { ...approve, lacks: () => 'policy:write' }, appliers);
    assert.deepEqual(lacking, { kind: 'insufficient_scope', scope: 'policy:write' });
    const rejected = await decideChange(ctx().store, ben, change, reject, appliers);
    assert.equal(rejected.kind === 'decided' && rejected.change.status, 'rejected');
    for (const decision of [approve, reject])
      assert.equal((await decideChange(ctx().store, ana, change, decision, appliers)).kind, 'conflict');
  });

  test('expired after 72 hours: approving is a conflict and nothing is applied', async () => {
    const id = await newRule('too late');
    const change = await held('PATCH', `/api/v1/rules/${id}`, { status: 'active' });
    const later = Date.now() + 72 * 3600 * 1000 + 1;
    const outcome = await decideChange(ctx().store, ana, change, approve, appliers, later);
    assert.deepEqual(outcome, {
      kind: 'conflict',
      detail: 'This change is expired; only a pending change can be decided.',
    });
    assert.equal((await ruleOf(id)).status, 'draft');
  });

  test('checked again when approved: a rule changed since is 409 and the change stays pending', async () => {
    const id = await newRule('moved on');
    const change = await held('PATCH', `/api/v1/rules/${id}`, { status: 'active' });
    assert.equal((await call(operator, 'PATCH', `/api/v1/rules/${id}`, { name: 'renamed' })).statusCode, 200);
    await assert.rejects(
      decideChange(ctx().store, ana, change, approve, appliers),
      (err: unknown) => err instanceof Conflict,
    );
    const row = (await call(operator, 'GET', `/api/v1/changes/${change}`)).json();
    assert.equal(row.status, 'pending');
    assert.equal((await ruleOf(id)).status, 'draft');
  });

  test('an approved list deletion deletes the list, unless a live rule names it by then (409, still pending)', async () => {
    for (const name of ['gone-list', 'named-list'])
      assert.equal((await call(operator, 'POST', '/api/v1/lists', { name, kind: 'entity' })).statusCode, 201);
    const gone = await held('DELETE', '/api/v1/lists/gone-list');
    const named = await held('DELETE', '/api/v1/lists/named-list');
    assert.equal((await decideChange(ctx().store, ana, gone, approve, appliers)).kind, 'decided');
    assert.equal((await call(operator, 'GET', '/api/v1/lists/gone-list')).statusCode, 404);

    const rule = await call(operator, 'POST', '/api/v1/rules', {
      name: 'names it',
      condition: 'in_list("named-list", entity_id)',
      action: 'hold',
      status: 'shadow',
    });
    assert.equal(rule.statusCode, 201, rule.body);
    await assert.rejects(
      decideChange(ctx().store, ana, named, approve, appliers),
      (err: unknown) => err instanceof Conflict,
    );
    assert.equal((await call(operator, 'GET', '/api/v1/lists/named-list')).statusCode, 200);
  });

  test('an approved policy activation makes it the active policy', async () => {
    const upload = await call(operator, 'POST', '/api/v1/policies', { ...DEFAULT_POLICY, version: 'four-eyes-1' });
    assert.equal(upload.statusCode, 201, upload.body);
    const change = await held('POST', '/api/v1/policies/four-eyes-1/activate', {});
    assert.equal((await decideChange(ctx().store, ben, change, approve, appliers)).kind, 'decided');
    assert.equal((await call(operator, 'GET', '/api/v1/policies/four-eyes-1')).json().status, 'active');
  });
});
