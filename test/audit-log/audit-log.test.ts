// docs/api.md, "Audit log": every change made through the API goes to the log with its actor, in
// the change's transaction, naming the changed fields and never a secret, a list's values or a raw
// identifier in free text; GET /api/v1/audit-log filters and pages it; the chain checks out.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem, ADMIN_ID } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { verifyAuditLog } from '../../src/audit-log/verify.ts';
import { seedReviews } from '../reviews/support.ts';
import { caller, makeKey, readLog, type Entry, type Key } from './support.ts';

const policyDoc = (version: string) => ({ ...JSON.parse(JSON.stringify(DEFAULT_POLICY)), version }) as object;

describeEachBackend('the audit log', (ctx) => {
  const call = caller(ctx);
  let admin: Key;
  /** every secret the suite was handed: none may appear in the log */
  const secrets: string[] = [];
  const only = (entries: Entry[], action: string) => entries.filter((e) => e.action === action);

  before(async () => {
    admin = await makeKey(ctx(), 'desk admin key', 'admin');
    secrets.push(admin.key);
  });

  test('keys: created, rotated, deactivated, each with its actor and never the secret', async () => {
    const made = await call(admin, 'POST', '/api/v1/keys', { name: 'checkout', scopes: ['trust:read'] });
    assert.equal(made.statusCode, 201, made.body);
    const { id, key } = made.json() as { id: string; key: string };
    const rotated = await call(admin, 'POST', `/api/v1/keys/${id}/rotate`, { grace_period_seconds: 60 });
    assert.equal(rotated.statusCode, 201, rotated.body);
    const successor = rotated.json() as { id: string; key: string };
    assert.equal((await call(admin, 'DELETE', `/api/v1/keys/${successor.id}`)).statusCode, 200);
    secrets.push(key, successor.key);

    const log = await readLog(ctx(), admin, 'action=key.*');
    const created = only(log, 'key.created').find((e) => e.target === `key:${id}`);
    assert.deepEqual(created?.actor, { type: 'client', id: admin.id, name: 'desk admin key' });
    assert.deepEqual(created?.after, {
      name: 'checkout',
      role: 'service',
      scopes: ['trust:read'],
      environment: 'live',
      expires_at: null,
      owner_client_id: ADMIN_ID,
    });
    // The admin key itself was made by the bootstrap admin's token: a client, named.
    const adminMade = only(log, 'key.created').find((e) => e.target === `key:${admin.id}`);
    assert.deepEqual(adminMade?.actor, { type: 'client', id: ADMIN_ID, name: 'bootstrap admin' });
    const rotation = only(log, 'key.rotated').find((e) => e.target === `key:${id}`);
    assert.equal(rotation?.after?.successor, successor.id);
    assert.equal(rotation?.after?.grace_period_seconds, 60);
    const off = only(log, 'key.deactivated').find((e) => e.target === `key:${successor.id}`);
    assert.deepEqual([off?.before, off?.after], [{ status: 'active' }, { status: 'inactive' }]);
    // A repeated deactivation changes nothing and logs nothing.
    await call(admin, 'DELETE', `/api/v1/keys/${successor.id}`);
    assert.equal(only(await readLog(ctx(), admin, 'action=key.deactivated'), 'key.deactivated').length, 1);
  });

  test('policies: uploaded, derived, activated, shadowed, shadow ended', async () => {
    const ok = async (method: 'POST' | 'DELETE', url: string, payload?: unknown) => {
      const res = await call(admin, method, url, payload);
      assert.ok(res.statusCode < 300, res.body);
    };
    await ok('POST', '/api/v1/policies', policyDoc('audit-1'));
    await ok('POST', '/api/v1/policies/audit-1/derive', { version: 'audit-2', changes: {} });
    await ok('POST', '/api/v1/policies/audit-1/activate', {});
    await ok('POST', '/api/v1/policies/audit-2/shadow', {});
    await ok('DELETE', '/api/v1/policies/shadow');
    const log = await readLog(ctx(), admin, 'action=policy.*');
    const find = (action: string, target: string) => log.find((e) => e.action === action && e.target === target);
    assert.deepEqual(find('policy.uploaded', 'policy:audit-1')?.after, {
      status: 'candidate',
      source: 'upload',
      parent_version: null,
    });
    assert.equal(find('policy.derived', 'policy:audit-2')?.after?.parent_version, 'audit-1');
    const activated = find('policy.activated', 'policy:audit-1');
    assert.deepEqual(activated?.before, { active: DEFAULT_POLICY.version });
    assert.deepEqual(activated?.after, { active: 'audit-1' });
    assert.deepEqual(find('policy.shadowed', 'policy:audit-2')?.after, { shadow: 'audit-2' });
    assert.deepEqual(find('policy.shadow_cleared', 'policy:audit-2')?.after, { shadow: null });
    for (const e of log) assert.equal(e.actor.id, admin.id);
  });

  test('rules: created, updated, status changed, retired; a raw identifier in a reason is withheld', async () => {
    const made = await call(admin, 'POST', '/api/v1/rules', {
      name: 'big trade',
      condition: 'amount > 5000.0',
      action: 'hold',
    });
    assert.equal(made.statusCode, 201, made.body);
    const { id } = made.json() as { id: string };
    const patch = (payload: object) => call(admin, 'PATCH', `/api/v1/rules/${id}`, payload);
    assert.equal((await patch({ condition: 'amount > 6000.0', reason: 'asked by ana@example.com' })).statusCode, 200);
    assert.equal((await patch({ status: 'shadow' })).statusCode, 200);
    assert.equal((await call(admin, 'DELETE', `/api/v1/rules/${id}`)).statusCode, 200);

    const log = (await readLog(ctx(), admin, 'action=rule.*')).filter((e) => e.target === `rule:${id}`);
    assert.deepEqual(
      log.map((e) => e.action),
      ['rule.retired', 'rule.status_changed', 'rule.updated', 'rule.created'],
    );
    const [retired, status, updated, created] = log;
    assert.equal(created!.after?.condition, 'amount > 5000.0');
    assert.equal(created!.after?.version, 1);
    assert.deepEqual(updated!.before, { condition: 'amount > 5000.0', version: 1 });
    assert.equal(updated!.after?.condition, 'amount > 6000.0');
    assert.match(String(updated!.after?.reason), /withheld/);
    assert.deepEqual(
      [status!.before, status!.after],
      [
        { status: 'draft', version: 2 },
        { status: 'shadow', version: 3 },
      ],
    );
    assert.deepEqual(retired!.after, { status: 'retired', version: 4 });
    assert.ok(!JSON.stringify(log).includes('ana@example.com'));
  });

  test('lists: created, entries added and removed (counts, never values), deleted', async () => {
    const [x, y] = [hash('audit-x'), hash('audit-y')];
    assert.equal(
      (await call(admin, 'POST', '/api/v1/lists', { name: 'audit-blocked', kind: 'entity' })).statusCode,
      201,
    );
    const added = await call(admin, 'POST', '/api/v1/lists/audit-blocked/entries', { values: [x, y] });
    assert.equal(added.statusCode, 200, added.body);
    assert.equal((await call(admin, 'DELETE', `/api/v1/lists/audit-blocked/entries/${x}`)).statusCode, 204);
    assert.equal((await call(admin, 'DELETE', '/api/v1/lists/audit-blocked')).statusCode, 204);
    const log = (await readLog(ctx(), admin, 'action=list.*')).filter((e) => e.target === 'list:audit-blocked');
    assert.deepEqual(
      log.map((e) => [e.action, e.after]),
      [
        ['list.deleted', { deleted: true }],
        ['list.entry_removed', { kind: 'entity', removed: 1 }],
        ['list.entries_added', { kind: 'entity', added: 2, already_present: 0 }],
        ['list.created', { name: 'audit-blocked', kind: 'entity', description: null }],
      ],
    );
    assert.ok(!JSON.stringify(log).includes(x) && !JSON.stringify(log).includes(y));
  });

  test("webhooks: created and deleted, the URL's origin only and never the signing secret", async () => {
    const made = await call(admin, 'POST', '/api/v1/webhooks', {
      url: 'https://93.184.216.34/hooks/T0PATHTOKEN',
      events: ['rule.changed'],
    });
    assert.equal(made.statusCode, 201, made.body);
    const { id, secret } = made.json() as { id: string; secret: string };
    secrets.push(secret);
    assert.equal((await call(admin, 'DELETE', `/api/v1/webhooks/${id}`)).statusCode, 200);
    const log = (await readLog(ctx(), admin, 'action=webhook.*')).filter((e) => e.target === `webhook:${id}`);
    assert.deepEqual(
      log.map((e) => e.action),
      ['webhook.deleted', 'webhook.created'],
    );
    assert.deepEqual(log[1]!.after, {
      url_origin: 'https://93.184.216.34',
      events: ['rule.changed'],
      owner_client_id: ADMIN_ID,
    });
    assert.ok(!JSON.stringify(log).includes('T0PATHTOKEN'));
  });

  test('labels and review resolutions', async () => {
    const [labelled, reviewed] = await seedReviews(ctx().store.db, [
      { owner: ADMIN_ID, review: false },
      { owner: ADMIN_ID },
    ]);
    const label = await call(admin, 'POST', `/api/v1/decisions/${labelled!.id}/label`, { label: 'legit' });
    assert.equal(label.statusCode, 200, label.body);
    const resolved = await call(admin, 'POST', `/api/v1/reviews/${reviewed!.review!.id}/resolve`, {
      resolution: 'decline',
    });
    assert.equal(resolved.statusCode, 200, resolved.body);
    const [labelEntry] = await readLog(ctx(), admin, 'action=decision.labelled');
    assert.equal(labelEntry!.target, `decision:${labelled!.id}`);
    assert.deepEqual(
      [labelEntry!.before, labelEntry!.after],
      [
        { label: null, source: null },
        { label: 'legit', source: 'api' },
      ],
    );
    const [review] = await readLog(ctx(), admin, 'action=review.resolved');
    assert.equal(review!.target, `review:${reviewed!.review!.id}`);
    assert.deepEqual(review!.after, {
      status: 'resolved',
      resolution: 'decline',
      decision: reviewed!.id,
      label: 'fraud',
      added_to_list: null,
    });
  });

  test('bulk labels: one entry per label given, none for a refused item', async () => {
    const rows = await seedReviews(ctx().store.db, [
      { owner: ADMIN_ID, review: false },
      { owner: ADMIN_ID, review: false },
    ]);
    const res = await call(admin, 'POST', '/api/v1/labels', {
      labels: [
        { decision_id: rows[0]!.id, label: 'fraud' },
        { decision_id: 'dec_missing', label: 'fraud' },
        { decision_id: rows[1]!.id, label: 'legit', note: 'fine' },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const log = await readLog(ctx(), admin, 'action=decision.labelled');
    const targets = log.map((e) => e.target);
    assert.ok(targets.includes(`decision:${rows[0]!.id}`) && targets.includes(`decision:${rows[1]!.id}`));
    assert.ok(!targets.includes('decision:dec_missing'));
  });

  test('changes at once each take their own place in the chain', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(admin, 'POST', '/api/v1/lists', { name: `concurrent-${i}`, kind: 'string' }),
      ),
    );
    for (const r of results) assert.equal(r.statusCode, 201, r.body);
    const created = (await readLog(ctx(), admin, 'action=list.created')).filter((e) =>
      e.target?.startsWith('list:concurrent-'),
    );
    assert.equal(created.length, 12);
    assert.equal((await verifyAuditLog(ctx().store.db)).broken, undefined);
  });

  test('settings: a change of four eyes is logged, a PUT that changes nothing is not', async () => {
    const put = (four_eyes: string[]) => call(admin, 'PUT', '/api/v1/settings', { four_eyes });
    assert.equal((await put(['policies'])).statusCode, 200);
    assert.equal((await put(['policies'])).statusCode, 200);
    assert.equal((await put([])).statusCode, 200);
    const log = await readLog(ctx(), admin, 'action=settings.changed');
    assert.deepEqual(
      log.map((e) => [e.before, e.after]),
      [
        [{ four_eyes: ['policies'] }, { four_eyes: [] }],
        [{ four_eyes: [] }, { four_eyes: ['policies'] }],
      ],
    );
  });

  test('no entry holds a secret; the chain over everything checks out', async () => {
    const text = JSON.stringify(await readLog(ctx(), admin));
    for (const s of secrets) assert.ok(!text.includes(s), 'a secret reached the audit log');
    const rows = await ctx().store.db.selectFrom('audit_log').select(['before', 'after']).execute();
    for (const s of secrets) assert.ok(!JSON.stringify(rows).includes(s), 'a secret is stored in the audit log');
    const check = await verifyAuditLog(ctx().store.db, 7);
    assert.equal(check.broken, undefined);
    assert.equal(check.checked, rows.length);
  });

  test('filters: actor, action and a kind of actions, since and until; pages by cursor, newest first', async () => {
    const other = await makeKey(ctx(), 'other operator', 'operator', ['rules:write', 'rules:read']);
    const mine = await call(other, 'POST', '/api/v1/lists', { name: 'audit-other', kind: 'country' });
    assert.equal(mine.statusCode, 201, mine.body);
    const byOther = await readLog(ctx(), admin, `actor=${other.id}`);
    assert.deepEqual(
      byOther.map((e) => [e.action, e.target, e.actor.name]),
      [['list.created', 'list:audit-other', 'other operator']],
    );
    const all = await readLog(ctx(), admin);
    assert.ok(all.length > 20);
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.at >= all[i]!.at, 'newest first');
    const rules = await readLog(ctx(), admin, 'action=rule.*');
    assert.ok(rules.length >= 4 && rules.every((e) => e.action.startsWith('rule.')));
    assert.equal((await readLog(ctx(), admin, 'action=rule')).length, 0);

    // Pages of 3 give every entry once, in order.
    const paged: Entry[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/audit-log?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await call(admin, 'GET', url);
      const page = res.json() as { data: Entry[]; next_cursor: string | null };
      assert.ok(page.data.length <= 3);
      paged.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(
      paged.map((e) => e.id),
      all.map((e) => e.id),
    );

    const middle = all[Math.floor(all.length / 2)]!;
    const since = await readLog(ctx(), admin, `since=${encodeURIComponent(middle.at)}`);
    assert.ok(since.every((e) => e.at >= middle.at) && since.some((e) => e.id === middle.id));
    const until = await readLog(ctx(), admin, `until=${encodeURIComponent(middle.at)}`);
    assert.ok(until.every((e) => e.at < middle.at));
    assert.equal(since.length + until.length, all.length);
  });

  test('limit 1–200, a cursor of this listing, known query members only: else 400', async () => {
    for (const query of ['limit=0', 'limit=201', 'cursor=abc', 'action=Rule%20x', 'since=yesterday', 'who=me'])
      problem(await call(admin, 'GET', `/api/v1/audit-log?${query}`), 400, 'invalid_request');
  });

  test('admins only among machines (a viewer among people); the entries of the caller’s environment only', async () => {
    for (const role of ['service', 'operator'] as const) {
      const k = await makeKey(ctx(), `${role} auditor`, role, ['audit:read']);
      problem(await call(k, 'GET', '/api/v1/audit-log'), 403, 'insufficient_scope');
    }
    problem(
      await ctx().inject({
        method: 'GET',
        url: '/api/v1/audit-log',
        headers: bearer(await ctx().token(['rules:read'], 'admin')),
      }),
      403,
      'insufficient_scope',
    );
    const testAdmin = await makeKey(ctx(), 'test admin', 'admin', ['audit:read', 'rules:write', 'rules:read'], 'test');
    assert.deepEqual(await readLog(ctx(), testAdmin), []);
    assert.equal(
      (await call(testAdmin, 'POST', '/api/v1/lists', { name: 'test-list', kind: 'string' })).statusCode,
      201,
    );
    const testLog = await readLog(ctx(), testAdmin);
    assert.deepEqual(
      testLog.map((e) => e.action),
      ['list.created'],
    );
    assert.ok(!(await readLog(ctx(), admin)).some((e) => e.id === testLog[0]!.id));
  });
});
