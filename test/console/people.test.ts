// People at the desk (docs/api.md, "People") in a real browser against a real server and store: an
// invitation accepted on its page, sign-in by e-mail and password that outlives a reload, sign-out,
// a wrong password and a locked account; the users page; the audit log; what each role is offered;
// and four eyes end to end (one operator's activation waits, another approves it). Photographed at
// 1400×900 and 390 px wide as people-* (VOUCH_CONSOLE_SHOTS, else test-results/console).
import { test, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { person } from '../helpers/people.ts';
import { hash } from '../helpers/trust.ts';
import {
  describeInBrowser,
  nav as navIn,
  openTab,
  shots,
  signInAsPerson,
  signInWithPassword,
  until,
  type Server,
} from './browser.ts';

describeInBrowser('people at the desk in chromium', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let decisionId: string;
  let ruleId: string;
  let cspErrors: string[] = [];

  const nav = (name: string) => navIn(page, name);
  const api = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').waitFor();
  };
  const header = async () => (await page.locator('header .who').innerText()).replace(/\s+/g, ' ');

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    const scored = await api('POST', '/api/v1/trust/score', {
      entity_id: hash('people-entity'),
      amount: 120,
      currency: 'EUR',
    });
    assert.equal(scored.statusCode, 200, scored.body);
    decisionId = scored.json().decision_id;
    const rule = await api('POST', '/api/v1/rules', {
      name: 'large_first_trade',
      condition: 'amount > 300.0',
      action: 'review',
      status: 'shadow',
    });
    assert.equal(rule.statusCode, 201, rule.body);
    ruleId = rule.json().id;
    ({ page, cspErrors } = await openTab(browser, server.base));
  });

  // each test starts signed out, whatever the one before left behind
  beforeEach(async () => {
    await page?.context().clearCookies();
  });

  test('an invited person sets a password on the invitation page, is signed in, stays so across a reload, and signs out', async () => {
    const invited = await api('POST', '/api/v1/users', {
      email: 'ada@desk.example',
      name: 'Ada Lovelace',
      role: 'analyst',
    });
    assert.equal(invited.statusCode, 201, invited.body);
    const token = invited.json().invitation.token as string;
    await page.goto(`${server.base}/console/?invitation=${encodeURIComponent(token)}`);
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    await shots(page, 'people-invitation');
    await page.getByLabel('New password').fill('a long first password');
    await page.getByLabel('Repeat the password').fill('a long other password');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('alert').getByText('The two passwords differ').waitFor();
    await page.getByLabel('Repeat the password').fill('a long first password');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.match(await header(), /Ada Lovelace · analyst/);
    assert.doesNotMatch(page.url(), /invitation/, 'the spent token leaves the address bar');
    // the session is an HttpOnly cookie the page cannot read; the CSRF token is in this tab's sessionStorage
    assert.equal(await page.evaluate('document.cookie'), '');
    assert.ok(await page.evaluate("sessionStorage.getItem('vouch.console.csrf')"));

    // a reload keeps the session (and fetches a fresh CSRF token): a label, a change, still goes through
    await page.goto(`${server.base}/console/decisions/${decisionId}`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.match(await header(), /Ada Lovelace · analyst/);
    const labelled = page.waitForResponse((r) => r.url().endsWith('/label') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Fraud' }).click();
    assert.equal((await labelled).status(), 200);
    assert.equal((await labelled).request().headers()['x-csrf-token'] !== undefined, true);
    await page.locator('dl.facts').getByText('fraud').first().waitFor();

    await signOut();
    assert.equal(await page.evaluate("sessionStorage.getItem('vouch.console.csrf')"), null);
    // ended at the service too: the cookie no longer opens a session
    const after = (await page.evaluate(
      "fetch('/api/v1/auth/session', { credentials: 'same-origin' }).then((r) => r.status)",
    )) as number;
    assert.equal(after, 401);
    await page.reload();
    await page.getByLabel('E-mail').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
    // and back in with the e-mail and the password just set
    await signInWithPassword(page, server.base, { email: 'ada@desk.example', password: 'a long first password' });
    assert.match(await header(), /Ada Lovelace · analyst/);
    await signOut();

    // the link works once
    await page.goto(`${server.base}/console/?invitation=${encodeURIComponent(token)}`);
    await page.getByLabel('New password').fill('yet another password');
    await page.getByLabel('Repeat the password').fill('yet another password');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('alert').getByText('This invitation link cannot be used').waitFor();
  });

  test('a wrong password says so; five in a row lock the account, and the lock says for how long', async () => {
    const who = await person(server, 'viewer');
    await page.goto(`${server.base}/console`);
    await page.getByLabel('E-mail').waitFor();
    await shots(page, 'people-signin');
    const attempt = async (password: string) => {
      await page.getByLabel('E-mail').fill(who.email);
      await page.getByLabel('Password', { exact: true }).fill(password);
      const answered = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/login'));
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      return (await answered).status();
    };
    assert.equal(await attempt('not the password'), 401);
    await page.getByRole('alert').getByText('Wrong e-mail or password.').waitFor();
    await shots(page, 'people-signin-wrong');
    for (let i = 0; i < 4; i++) assert.equal(await attempt(`wrong ${i}`), 401);
    // locked now, even for the right password
    assert.equal(await attempt(who.password), 429);
    const alert = page.getByRole('alert');
    await alert.getByText('Locked:').waitFor();
    assert.match(await alert.innerText(), /too many failed sign-ins\. Try again in 15 minutes\./);
    await shots(page, 'people-signin-locked');
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
  });

  test('the users page: an admin invites a person (the link shown once), changes a role, and deactivates after a confirmation', async () => {
    const me = await signInAsPerson(page, server, 'admin', '/users');
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await page.locator(`tr[data-user="${me.email}"]`).getByText('(you)').waitFor();
    await page.getByRole('button', { name: 'Invite a person' }).click();
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Invite a person' }) });
    await form.getByLabel('E-mail').fill('grace@desk.example');
    await form.getByLabel('Name').fill('Grace Hopper');
    await form.getByLabel('Role').selectOption('operator');
    await form.getByRole('button', { name: 'Create invitation' }).click();
    const link = page.getByRole('region', { name: 'Invitation link for Grace Hopper' });
    const url = await link.getByRole('textbox').inputValue();
    assert.match(url, /\/console\/\?invitation=[\w-]+$/);
    const row = page.locator('tr[data-user="grace@desk.example"]');
    assert.match(await row.innerText(), /operator\s+invited/);
    await shots(page, 'people-users');
    await link.getByRole('button', { name: 'Done' }).click();
    assert.equal(await link.count(), 0, 'the link is shown once');

    // Grace accepts (through the API), then her role changes
    const accepted = await server.inject({
      method: 'POST',
      url: '/api/v1/auth/invitations/accept',
      payload: { token: new URL(url).searchParams.get('invitation'), password: 'grace hopper compiles' },
    });
    assert.equal(accepted.statusCode, 200, accepted.body);
    await page.reload();
    await row.getByText('active').waitFor();
    await page.getByRole('button', { name: 'Change role of Grace Hopper' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('New role').selectOption('analyst');
    await dialog.getByRole('button', { name: 'Change role' }).click();
    await page.getByRole('status').getByText('Grace Hopper is now analyst').waitFor();
    await until('the new role listed', async () => (/analyst\s+active/.test(await row.innerText()) ? true : undefined));

    await page.getByRole('button', { name: 'Deactivate Grace Hopper' }).click();
    await page.getByRole('dialog').getByRole('heading', { name: 'Deactivate Grace Hopper?' }).waitFor();
    await shots(page, 'people-users-deactivate');
    await page.getByRole('dialog').getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('status').getByText('Grace Hopper is deactivated').waitFor();
    await row.locator('.badge', { hasText: 'deactivated' }).waitFor();
    const login = await server.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'grace@desk.example', password: 'grace hopper compiles' },
    });
    assert.equal(login.statusCode, 401, 'a deactivated person cannot sign in');
    await signOut();
  });

  test('the audit log lists who did what, filters by action and by actor, pages by cursor, and shows each change compactly', async () => {
    await signInAsPerson(page, server, 'viewer', '/audit-log');
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    // every person reads it: a viewer too; and a viewer has no Users page
    assert.equal(await nav('Users').count(), 0);
    const rows = page.locator('table.audit tbody tr');
    await rows.first().waitFor();
    // the role change of the test before: role operator → analyst, struck through and inserted
    const changed = rows.filter({ hasText: 'user.role_changed' }).first();
    assert.match(await changed.locator('td.change').innerText(), /role\s+before:\s+operator\s+→\s+after:\s+analyst/);
    await shots(page, 'people-audit-log');

    // more sign-ins than one page holds (50)
    const busy = await person(server, 'viewer');
    for (let i = 0; i < 52; i++) {
      const res = await server.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: busy.email, password: busy.password },
      });
      assert.equal(res.statusCode, 200);
    }

    await page.getByLabel('Action').fill('user.login');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await until('only sign-ins', async () => {
      const actions = await page.locator('table.audit tbody td[data-label="Action"]').allInnerTexts();
      return actions.length === 50 && actions.every((a) => a === 'user.login') ? true : undefined;
    });
    await page.getByRole('button', { name: 'Older entries' }).click();
    await until('a second page', async () => ((await rows.count()) > 50 ? true : undefined));
    // a name filters by its actor
    const busyName = (
      (await server.inject({ method: 'GET', url: `/api/v1/users/${busy.id}`, headers: bearer(admin) })).json() as {
        name: string;
      }
    ).name;
    await page.locator('table.audit').getByRole('button', { name: busyName, exact: true }).first().click();
    await until('one actor', async () => {
      const who = await page.locator('table.audit tbody td[data-label="Who"] button').allInnerTexts();
      return who.length > 0 && who.every((w) => w === busyName) ? true : undefined;
    });
    assert.equal(await page.getByLabel('Actor').inputValue(), busy.id);
    await signOut();
  });

  test("what a role is offered: a viewer no Label buttons or rule editing, an analyst labels but doesn't edit rules, an operator edits", async () => {
    await signInAsPerson(page, server, 'viewer', `/decisions/${decisionId}`);
    await page.getByRole('heading', { name: 'Why this score' }).waitFor();
    assert.equal(await page.getByRole('group', { name: 'Label this decision' }).count(), 0);
    for (const name of ['Dashboard', 'Decisions', 'Rules', 'Pending changes', 'Audit log'])
      assert.equal(await nav(name).count(), 1, name);
    for (const name of ['Users', 'Keys', 'Webhooks', 'Network']) assert.equal(await nav(name).count(), 0, name);
    await nav('Rules').click();
    await page.locator(`tr[data-rule="large_first_trade"]`).waitFor();
    assert.equal(await page.getByRole('button', { name: 'New rule' }).count(), 0);
    await page.getByRole('link', { name: 'large_first_trade' }).click();
    await page.getByRole('heading', { name: /large_first_trade/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Edit' }).count(), 0);
    // a viewer's Policies page offers no backtest (an operator's act)
    await nav('Policies').click();
    await page.locator('tbody tr').first().waitFor();
    assert.equal(await page.getByRole('button', { name: /^Backtest/ }).count(), 0);
    await signOut();

    await signInAsPerson(page, server, 'analyst', `/decisions/${decisionId}`);
    await page.getByRole('group', { name: 'Label this decision' }).getByRole('button', { name: 'Fraud' }).waitFor();
    await nav('Rules').click();
    await page.getByRole('link', { name: 'large_first_trade' }).click();
    await page.getByRole('heading', { name: /large_first_trade/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Edit' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Activate/ }).count(), 0);
    await signOut();

    await signInAsPerson(page, server, 'operator', `/rules/${ruleId}`);
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    await page.getByRole('button', { name: 'Activate: large_first_trade' }).waitFor();
    await signOut();
  });

  test("four eyes: an operator's activation waits for a second person, who approves it; an edit of the active rule is rejected", async () => {
    assert.equal((await api('PUT', '/api/v1/settings', { four_eyes: ['rules'] })).statusCode, 200);
    const asker = await signInAsPerson(page, server, 'operator', `/rules/${ruleId}`);
    await page.getByRole('button', { name: 'Activate: large_first_trade' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Activate' }).click();
    const held = page.getByTestId('held-for-approval');
    await held.waitFor();
    assert.match(await held.innerText(), /Waiting for a second person's approval/);
    assert.equal(await page.getByRole('alert').count(), 0, 'a held change is no error');
    assert.equal(await page.locator('h1 .badge').innerText(), 'shadow', 'nothing changed yet');
    await held.getByRole('link', { name: 'Pending changes' }).click();
    const own = page.locator('article.change');
    await own.waitFor();
    assert.match(await own.getByTestId('why-no-approve').innerText(), /You asked for this change/);
    assert.equal(await own.getByRole('button', { name: 'Approve' }).count(), 0);
    await signOut();

    const approver = await signInAsPerson(page, server, 'operator');
    await nav('Pending changes').click();
    let card = page.locator('article.change').first();
    await card.waitFor();
    assert.match(await card.innerText(), /Asked by Person \d+ on/);
    // the diff's "before" comes from the rule as it is now, read after the card renders: wait for it
    await card
      .locator('.change-diff')
      .getByText(/shadow\s*→\s*active/)
      .waitFor();
    assert.match(await card.locator('.change-diff').innerText(), /shadow\s*→\s*active/);
    assert.match(await card.locator('.condition-diff').innerText(), /Condition \(unchanged\)\s+amount > 300\.0/);
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog').getByLabel('Note (optional)').fill('checked with the desk');
    await page.getByRole('dialog').getByRole('button', { name: 'Approve and apply' }).click();
    await page.getByRole('status').getByText('Approved and applied').waitFor();
    assert.equal((await api('GET', `/api/v1/rules/${ruleId}`)).json().status, 'active');
    await signOut();

    // editing the active rule's condition waits too; the second person sees the old and new condition
    await signInWithPassword(page, server.base, asker, `/rules/${ruleId}`);
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.locator('textarea[name="condition"]').fill('amount > 500.0');
    await page.getByRole('button', { name: 'Save new version' }).click();
    await held.waitFor();
    assert.equal(await page.locator('form.rule-editor').count(), 0, 'the editor closes on a held change');
    await signOut();

    await signInWithPassword(page, server.base, approver, '/changes');
    card = page.locator('article.change').first();
    await card.locator('.condition-diff pre.new').waitFor();
    assert.equal(await card.locator('.condition-diff pre.old').innerText(), 'amount > 300.0');
    assert.equal(await card.locator('.condition-diff pre.new').innerText(), 'amount > 500.0');
    await shots(page, 'people-changes-live');
    await card.getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('status').getByText('Rejected').waitFor();
    assert.equal((await api('GET', `/api/v1/rules/${ruleId}`)).json().condition, 'amount > 300.0');
    await page.getByText('Nothing waits for a second person.').waitFor();
    assert.equal((await api('PUT', '/api/v1/settings', { four_eyes: [] })).statusCode, 200);
    await signOut();
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
