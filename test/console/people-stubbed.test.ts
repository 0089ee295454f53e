// Four eyes and the audit log in chromium against responses the test controls exactly (shaped as
// docs/api.md, "Four eyes" and "Audit log", say), served by the browser's request interception: a
// pending policy activation with its weights and thresholds beside the active policy's, the
// requester's own change (no Approve, and why), a machine's view, the approval sent with the
// session's CSRF token; 202 answers to a policy activation and a list deletion shown as waiting for
// a second person; the audit log's filters and cursor. The session itself is a real person's.
import { test, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page, Route } from 'playwright-core';
import type { Person } from '../helpers/people.ts';
import {
  describeInBrowser,
  nav as navIn,
  openTab,
  shots,
  signIn,
  signInAsPerson,
  until,
  type Server,
} from './browser.ts';

const NOW = new Date().toISOString();
const LATER = new Date(Date.now() + 72 * 3600_000).toISOString();
const M = { roc_auc: 0.81, average_precision: 0.62, brier: 0.12, calibration_error: 0.04 };
const json = (route: Route, status: number, body: unknown) =>
  route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });

const SIGNALS = ['chargebacks', 'fraud_reports', 'dispute_rate', 'shared_identifier_entities', 'new_account'];
/** A policy document: the active one's weights, or the candidate's (moved by 0.2, 0.5, 0.1 and -0.4; one kept). */
const policyDoc = (candidate: boolean, high: number) => ({
  version: 'x',
  bias: -2,
  weights: Object.fromEntries(
    SIGNALS.map((s, i) => [s, candidate ? [0.2, 1.5, 2.1, 2.6, 0.5][i]! : [0, 1, 2, 3, 0.5][i]!]),
  ),
  thresholds: { medium: 30, high, critical: 85 },
});

describeInBrowser('four eyes and the audit log against contract-shaped responses', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let me: Person;
  let cspErrors: string[] = [];
  const nav = (name: string) => navIn(page, name);

  before(async () => {
    ({ server, browser } = suite());
    ({ page, cspErrors } = await openTab(browser, server.base));
  });

  beforeEach(async () => {
    await page.unrouteAll({ behavior: 'wait' });
  });

  test("pending changes: a policy activation shows its thresholds and weights against the active policy's; another person's is approved with the CSRF token, one's own has no Approve and says why", async () => {
    me = await signInAsPerson(page, server, 'admin');
    const other = { type: 'user', id: 'usr_01OTHERPERSON0000000000000', name: 'Grace Hopper' };
    const changes = [
      {
        id: 'chg_01J0000000000000000000000A',
        kind: 'policy_activation',
        status: 'pending',
        target: 'policy:p2-fit',
        payload: { version: 'p2-fit' },
        requested_by: other,
        created_at: NOW,
        expires_at: LATER,
        decided_by: null,
        decided_at: null,
        note: null,
      },
      {
        id: 'chg_01J0000000000000000000000B',
        kind: 'rule_activation',
        status: 'pending',
        target: 'rule:rul_01J00000000000000000000RUL',
        payload: { patch: { status: 'active', condition: 'amount > 900.0' }, reason: 'tighter', base_version: 3 },
        requested_by: { type: 'user', id: me.id, name: 'me' },
        created_at: NOW,
        expires_at: LATER,
        decided_by: null,
        decided_at: null,
        note: null,
      },
      {
        id: 'chg_01J0000000000000000000000C',
        kind: 'list_deletion',
        status: 'pending',
        target: 'list:mules',
        payload: { name: 'mules' },
        requested_by: { type: 'client', id: 'ci-bot', name: 'CI bot' },
        created_at: NOW,
        expires_at: LATER,
        decided_by: null,
        decided_at: null,
        note: null,
      },
    ];
    let approval: { body: unknown; csrf: string | undefined } | undefined;
    await page.route(
      (url) => url.pathname.startsWith('/api/v1/changes'),
      (route) => {
        const req = route.request();
        const { pathname, searchParams } = new URL(req.url());
        if (pathname === '/api/v1/changes') {
          const status = searchParams.get('status');
          return json(route, 200, { data: changes.filter((c) => !status || c.status === status), next_cursor: null });
        }
        if (pathname.endsWith('/approve') && req.method() === 'POST') {
          approval = { body: req.postDataJSON(), csrf: req.headers()['x-csrf-token'] };
          const c = changes[0]!;
          Object.assign(c, {
            status: 'approved',
            decided_by: { type: 'user', id: me.id, name: 'me' },
            decided_at: NOW,
          });
          return json(route, 200, c);
        }
        return json(route, 404, { code: 'not_found', detail: 'No such change.' });
      },
    );
    await page.route(
      (url) => url.pathname.startsWith('/api/v1/policies'),
      (route) => {
        const { pathname } = new URL(route.request().url());
        const row = (version: string, status: string) => ({
          version,
          status,
          source: 'fit',
          parent_version: null,
          created_at: NOW,
          created_by: null,
          summary: `${version}, thresholds 30/${status === 'active' ? 60 : 55}/85`,
        });
        if (pathname === '/api/v1/policies')
          return json(route, 200, { data: [row('p1', 'active'), row('p2-fit', 'candidate')], next_cursor: null });
        if (pathname === '/api/v1/policies/p1')
          return json(route, 200, { ...row('p1', 'active'), document: policyDoc(false, 60) });
        if (pathname === '/api/v1/policies/p2-fit')
          return json(route, 200, { ...row('p2-fit', 'candidate'), document: policyDoc(true, 55) });
        return json(route, 404, { code: 'not_found', detail: 'No such policy.' });
      },
    );
    await page.route(
      (url) => url.pathname.startsWith('/api/v1/rules/rul_'),
      (route) =>
        json(route, 200, {
          id: 'rul_01J00000000000000000000RUL',
          name: 'big_card_trades',
          condition: 'amount > 500.0',
          action: 'review',
          status: 'shadow',
          version: 4,
          override: false,
          final: false,
          cap: null,
          description: null,
        }),
    );
    await page.route(
      (url) => url.pathname === '/api/v1/lists/mules',
      (route) => json(route, 200, { name: 'mules', kind: 'entity', entries: 12, created_at: NOW, created_by: 'x' }),
    );
    await page.route(
      (url) => url.pathname === '/api/v1/settings',
      (route) =>
        route.request().method() === 'PUT'
          ? json(route, 200, route.request().postDataJSON())
          : json(route, 200, { four_eyes: ['rules', 'policies', 'lists'] }),
    );

    await nav('Pending changes').click();
    const cards = page.locator('article.change');
    await until('three changes', async () => ((await cards.count()) === 3 ? true : undefined));
    const policy = cards.nth(0);
    // thresholds: high moves 60 → 55, the row marked; weights: the four that move, largest first
    await policy.locator('table.policy-thresholds').waitFor();
    assert.match(await policy.locator('table.policy-thresholds tbody tr.attention').innerText(), /high\s+60\s+55/);
    const weights = await policy.locator('table.policy-weights tbody tr').allInnerTexts();
    assert.equal(weights.length, 4, 'new_account keeps its weight and is not listed');
    assert.match(weights[0]!, /fraud_reports\s+1\s+1\.5\s+\+0\.5/);
    assert.match(weights[1]!, /shared_identifier_entities\s+3\s+2\.6\s+-0\.4/);
    assert.match(await policy.innerText(), /would replace the active p1/);
    // the rule change: its old and new condition, and a warning that the rule moved on since (v3 asked, v4 now)
    const rule = cards.nth(1);
    assert.equal(await rule.locator('pre.old').innerText(), 'amount > 500.0');
    assert.equal(await rule.locator('pre.new').innerText(), 'amount > 900.0');
    assert.match(await rule.getByRole('note').innerText(), /version 3 then, 4 now/);
    assert.match(await rule.getByTestId('why-no-approve').innerText(), /You asked for this change/);
    assert.equal(await rule.getByRole('button', { name: 'Approve' }).count(), 0);
    assert.equal(await rule.getByRole('button', { name: 'Withdraw (reject)' }).count(), 1);
    // a list deletion a machine asked for: approvable by a person
    // the list's kind and size are read after the card renders: wait for them
    const deletion = /Deletes the list mules \(entity, 12 entries\)/;
    await cards.nth(2).filter({ hasText: deletion }).waitFor();
    assert.match(await cards.nth(2).innerText(), deletion);
    assert.equal(await cards.nth(2).getByRole('button', { name: 'Approve' }).count(), 1);
    // an admin sets what four eyes holds
    assert.equal(await page.getByRole('checkbox', { name: 'policies' }).isChecked(), true);
    await shots(page, 'people-changes');

    await policy.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog').getByRole('heading', { name: 'Approve activating policy p2-fit?' }).waitFor();
    await page.getByRole('dialog').getByLabel('Note (optional)').fill('backtest checked');
    await page.getByRole('dialog').getByRole('button', { name: 'Approve and apply' }).click();
    await page.getByRole('status').getByText('Approved and applied: activating policy p2-fit.').waitFor();
    assert.deepEqual(approval?.body, { note: 'backtest checked' });
    assert.ok(approval?.csrf, 'the approval carries the X-CSRF-Token header');
    await until('two left', async () => ((await cards.count()) === 2 ? true : undefined));

    // a machine may reject but never approve
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, server.base, undefined, undefined, '/changes');
    await until('two changes', async () => ((await cards.count()) === 2 ? true : undefined));
    assert.match(await cards.nth(1).getByTestId('why-no-approve').innerText(), /Only a person can approve/);
    assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();
  });

  test("a 202 to activating a policy or deleting a list shows it waiting for a second person's approval, not an error", async () => {
    await signInAsPerson(page, server, 'operator');
    const held = (kind: string, target: string) => ({
      id: 'chg_01J0000000000000000000000D',
      kind,
      status: 'pending',
      target,
      payload: {},
      requested_by: { type: 'user', id: 'x', name: 'me' },
      created_at: NOW,
      expires_at: LATER,
      decided_by: null,
      decided_at: null,
      note: null,
    });
    const backtest = (version: string) => ({ version, decisions: 100, labelled: 40, metrics: M, levels: {} });
    await page.route(
      (url) => url.pathname.startsWith('/api/v1/policies'),
      (route) => {
        const { pathname } = new URL(route.request().url());
        const row = (version: string, status: string) => ({
          version,
          status,
          source: 'fit',
          parent_version: null,
          created_at: NOW,
          created_by: null,
          summary: version,
        });
        if (pathname === '/api/v1/policies')
          return json(route, 200, { data: [row('p1', 'active'), row('p2-fit', 'candidate')], next_cursor: null });
        if (pathname.endsWith('/backtest')) return json(route, 200, backtest(pathname.split('/')[4]!));
        if (pathname.endsWith('/activate')) return json(route, 202, held('policy_activation', 'policy:p2-fit'));
        return json(route, 404, { code: 'not_found', detail: 'No such policy.' });
      },
    );
    await nav('Policies').click();
    await page.getByRole('button', { name: 'Activate p2-fit' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('100 stored score decisions replayed').waitFor();
    await dialog.getByRole('button', { name: 'Activate', exact: true }).click();
    const notice = page.getByTestId('held-for-approval');
    await notice.waitFor();
    assert.match(
      await notice.innerText(),
      /Waiting for a second person's approval\. Nothing has changed yet: activating policy p2-fit/,
    );
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.equal(await page.getByText('is now active').count(), 0);
    await shots(page, 'people-held-policy');

    await page.route(
      (url) => url.pathname.startsWith('/api/v1/lists/mules'),
      (route) => {
        const { pathname } = new URL(route.request().url());
        if (route.request().method() === 'DELETE') return json(route, 202, held('list_deletion', 'list:mules'));
        if (pathname.endsWith('/entries')) return json(route, 200, { data: [], next_cursor: null });
        return json(route, 200, { name: 'mules', kind: 'entity', entries: 0, created_at: NOW, created_by: 'x' });
      },
    );
    await page.goto(`${server.base}/console/rules/lists/mules`);
    await page.getByRole('button', { name: 'Delete list' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete list' }).click();
    await notice.waitFor();
    assert.match(await notice.innerText(), /deleting list mules is pending/);
    // still on the list's page: it was not deleted
    await page.getByRole('heading', { name: 'List mules' }).waitFor();
    await notice.getByRole('link', { name: 'Pending changes' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
  });

  test('the audit log sends its filters and follows next_cursor; a change that is not an object diffs as values', async () => {
    await signInAsPerson(page, server, 'viewer');
    const seen: URLSearchParams[] = [];
    const entry = (i: number, extra: object = {}) => ({
      id: `aud_${String(i).padStart(26, '0')}`,
      at: NOW,
      actor: { type: 'user', id: 'usr_1', name: 'Ada Lovelace' },
      action: 'rule.updated',
      target: `rule:rul_${i}`,
      hash: 'a'.repeat(64),
      prev_hash: 'b'.repeat(64),
      ...extra,
    });
    await page.route(
      (url) => url.pathname === '/api/v1/audit-log',
      (route) => {
        const q = new URL(route.request().url()).searchParams;
        seen.push(q);
        if (q.get('cursor') === '40')
          return json(route, 200, { data: [entry(39, { before: 'shadow', after: 'active' })], next_cursor: null });
        return json(route, 200, {
          data: [
            entry(41, {
              before: { condition: 'amount > 300.0', cap: null, tags: ['a'] },
              after: { condition: 'amount > 500.0', cap: 200, tags: ['a'] },
            }),
            entry(40, { action: 'settings.changed', target: 'settings:four_eyes', after: { four_eyes: ['rules'] } }),
          ],
          next_cursor: '40',
        });
      },
    );
    await nav('Audit log').click();
    const rows = page.locator('table.audit tbody tr');
    await rows.nth(1).waitFor();
    const first = await rows.nth(0).locator('td.change').innerText();
    assert.match(first, /condition\s+before:\s+amount > 300\.0\s+→\s+after:\s+amount > 500\.0/);
    assert.match(first, /cap\s+before:\s+null\s+→\s+after:\s+200/);
    assert.doesNotMatch(first, /tags/, 'an unchanged field is left out');
    assert.match(await rows.nth(1).locator('td.change').innerText(), /four_eyes\s+after:\s+\["rules"\]/);
    await page.getByLabel('Actor').fill('usr_1');
    await page.getByLabel('Action').fill('rule.*');
    await page.getByLabel('Since').fill('2026-01-02T03:04');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await until('the filtered request', async () =>
      seen.some((q) => q.get('action') === 'rule.*') ? true : undefined,
    );
    const filtered = seen.find((q) => q.get('action') === 'rule.*')!;
    assert.equal(filtered.get('actor'), 'usr_1');
    assert.match(filtered.get('since') ?? '', /^2026-01-0[12]T\d\d:04:00\.000Z$/);
    assert.equal(filtered.get('limit'), '50');
    await page.getByRole('button', { name: 'Older entries' }).click();
    await until('three rows', async () => ((await rows.count()) === 3 ? true : undefined));
    assert.equal(seen.at(-1)?.get('cursor'), '40');
    assert.equal(seen.at(-1)?.get('action'), 'rule.*', 'the next page keeps the filters');
    assert.match(await rows.nth(2).locator('td.change').innerText(), /before:\s+shadow\s+→\s+after:\s+active/);
    assert.equal(await page.getByRole('button', { name: 'Older entries' }).count(), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
