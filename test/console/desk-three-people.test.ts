// The console used end to end by people of different roles (issue 40's "done when"), in chromium
// against a real server and store, every step through the pages and waiting on what they show: an
// admin turns four eyes on for rules in the settings; an operator writes a rule and asks to
// activate it, which waits; a second operator approves it; scores sent through the API (a machine
// client) then open reviews because of that rule; an analyst works them (Next claims the one due
// first; a verdict opens the next); a viewer sees the desk's dashboard and the queue with the
// analyst named, and is offered none of the operator's or the analyst's actions; the audit log
// names each person for what they did. Photographed as three-people-* (VOUCH_CONSOLE_SHOTS).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { describeInBrowser, nav as navIn, openTab, shots, signInWithPassword, until, type Server } from './browser.ts';

type Role = 'viewer' | 'analyst' | 'operator' | 'admin';
interface Someone {
  id: string;
  name: string;
  email: string;
  password: string;
}

const RULE = 'big_first_trade';

describeInBrowser('three people at the desk, end to end in chromium', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let cspErrors: string[] = [];
  let admin = '';
  const people = {} as Record<'ada' | 'otto' | 'pia' | 'ana' | 'vic', Someone>;
  let ruleId = '';
  /** the reviews the rule opened */
  let opened: string[] = [];
  /** the analyst's verdicts, in order, and the review left claimed */
  const worked: { id: string; resolution: 'decline' | 'approve' }[] = [];
  let leftClaimed = '';

  const nav = (name: string) => navIn(page, name);
  const api = (method: 'GET' | 'POST', url: string, token = admin, payload?: object) =>
    server.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').waitFor();
  };
  const header = async () => (await page.locator('header .who').innerText()).replace(/\s+/g, ' ');

  /** A person invited by the bootstrap admin with a name of their own, their password set (the invitation's link). */
  async function invite(role: Role, name: string): Promise<Someone> {
    const email = `${name.split(' ')[0]!.toLowerCase()}@desk.example`;
    const password = `${name.toLowerCase()} works the desk`;
    const invited = await api('POST', '/api/v1/users', admin, { email, name, role });
    assert.equal(invited.statusCode, 201, invited.body);
    const accepted = await server.inject({
      method: 'POST',
      url: '/api/v1/auth/invitations/accept',
      payload: { token: invited.json().invitation.token, password },
    });
    assert.equal(accepted.statusCode, 200, accepted.body);
    return { id: invited.json().id as string, name, email, password };
  }

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    people.ada = await invite('admin', 'Ada Admin');
    people.otto = await invite('operator', 'Otto Operator');
    people.pia = await invite('operator', 'Pia Approver');
    people.ana = await invite('analyst', 'Ana Analyst');
    people.vic = await invite('viewer', 'Vic Viewer');
    ({ page, cspErrors } = await openTab(browser, server.base));
  });

  test('an admin turns four eyes on for rules in the settings', async () => {
    // the page asks the service whether it has single sign-on; the answer is read before the check
    const asked = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/auth/sso');
    await page.goto(`${server.base}/console`);
    await page.getByLabel('E-mail').waitFor();
    await (await asked).finished();
    // this server has no single sign-on: the sign-in page does not offer it
    assert.equal(await page.getByRole('link', { name: 'Sign in with SSO' }).count(), 0);
    await signInWithPassword(page, server.base, people.ada, '/changes');
    assert.match(await header(), /Ada Admin · admin/);
    const settings = page.getByRole('region', { name: 'Four eyes' }).or(page.locator('section.four-eyes'));
    await settings.getByRole('checkbox', { name: 'rules' }).check();
    await settings.getByRole('button', { name: 'Save' }).click();
    await settings.getByRole('status').getByText('Saved: rules now needs a second person.').waitFor();
    assert.deepEqual((await api('GET', '/api/v1/settings')).json().four_eyes, ['rules']);
    await signOut();
  });

  test('an operator writes a rule and asks to activate it: the activation waits for a second person', async () => {
    await signInWithPassword(page, server.base, people.otto, '/rules');
    await page.getByRole('button', { name: 'New rule' }).click();
    await page.getByRole('heading', { name: 'New rule', level: 1 }).waitFor();
    await page.getByLabel('Name').fill(RULE);
    await page.locator('textarea[name="condition"]').fill('amount > 1000.0');
    await page.getByLabel('Action').selectOption('review');
    await page.getByLabel('Description (optional)').fill('first trades over 1000 go to the desk');
    await page.getByRole('button', { name: 'Save as draft' }).click();
    await page.getByRole('heading', { name: new RegExp(RULE) }).waitFor();
    ruleId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    assert.match(ruleId, /^rul_/);

    await page.getByRole('button', { name: `Start shadow: ${RULE}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Start shadow' }).click();
    await page.locator('h1 .badge', { hasText: 'shadow' }).waitFor();
    await page.getByRole('button', { name: `Activate: ${RULE}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Activate', exact: true }).click();
    const held = page.getByTestId('held-for-approval');
    await held.waitFor();
    assert.match(await held.innerText(), /Waiting for a second person's approval/);
    assert.equal(await page.locator('h1 .badge').innerText(), 'shadow', 'nothing changed yet');
    assert.equal((await api('GET', `/api/v1/rules/${ruleId}`)).json().status, 'shadow');
    await signOut();
  });

  test('a second operator approves the activation on the pending changes page', async () => {
    await signInWithPassword(page, server.base, people.pia);
    await nav('Pending changes').click();
    const card = page.locator('article.change').first();
    await card.waitFor();
    assert.match(await card.innerText(), /Asked by Otto Operator on/);
    await card
      .locator('.change-diff')
      .getByText(/shadow\s*→\s*active/)
      .waitFor();
    await shots(page, 'three-people-changes');
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog').getByLabel('Note (optional)').fill('checked the 30-day test');
    await page.getByRole('dialog').getByRole('button', { name: 'Approve and apply' }).click();
    await page.getByRole('status').getByText('Approved and applied').waitFor();
    assert.equal((await api('GET', `/api/v1/rules/${ruleId}`)).json().status, 'active');
    await signOut();
  });

  test('scores sent through the API open reviews because of the rule', async () => {
    const machine = await server.token(['trust:read'], 'service');
    for (const [i, amount] of [1500, 2500, 4000].entries()) {
      const scored = await api('POST', '/api/v1/trust/score', machine, {
        entity_id: hash(`three-people-${i}`),
        amount,
        currency: 'EUR',
      });
      assert.equal(scored.statusCode, 200, scored.body);
      assert.equal(scored.json().outcome, 'review', scored.body);
      assert.ok(
        (scored.json().rules as { name: string }[]).some((r) => r.name === RULE),
        `the rule decided it: ${scored.body}`,
      );
    }
    // under the rule's amount: no review for the rule
    const small = await api('POST', '/api/v1/trust/score', machine, {
      entity_id: hash('three-people-small'),
      amount: 40,
      currency: 'EUR',
    });
    assert.equal(small.statusCode, 200, small.body);
    assert.ok(!(small.json().rules as { name: string }[]).some((r) => r.name === RULE));
    const listed = await api('GET', '/api/v1/reviews?status=open&limit=100');
    opened = (listed.json().data as { id: string; rules: { name: string }[] }[])
      .filter((r) => r.rules.some((m) => m.name === RULE))
      .map((r) => r.id);
    assert.equal(opened.length, 3);
  });

  test('an analyst works the reviews: Next claims the one due first, and each verdict opens the next', async () => {
    await signInWithPassword(page, server.base, people.ana, '/reviews');
    assert.match(await header(), /Ana Analyst · analyst/);
    for (const id of opened) await page.locator(`tr[data-review="${id}"]`).waitFor();
    const heading = page.getByRole('heading', { name: /^Review rev_/ });
    const current = async () => (await heading.innerText()).replace(/^Review /, '').trim();

    await page.getByRole('button', { name: 'Next', exact: true }).click();
    await page.getByRole('heading', { name: 'Resolve' }).waitFor();
    const first = await current();
    assert.ok(opened.includes(first), first);
    assert.equal(await page.getByLabel('Open the next review after a verdict').isChecked(), true);
    await page.getByRole('button', { name: /^Decline/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Decline', exact: true }).click();
    worked.push({ id: first, resolution: 'decline' });
    await page.getByText(`Review ${first} declined`).waitFor();
    const second = await until('the next review opened', async () => {
      const id = await current();
      return id !== first ? id : undefined;
    });
    assert.ok(opened.includes(second), second);
    await page.getByText('claimed by you').first().waitFor();
    await page.getByRole('button', { name: /^Approve/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Approve', exact: true }).click();
    worked.push({ id: second, resolution: 'approve' });
    await page.getByText(`Review ${second} approved`).waitFor();
    leftClaimed = await until('the third review opened', async () => {
      const id = await current();
      return id !== second && id !== first ? id : undefined;
    });
    assert.deepEqual([...opened].sort(), [first, second, leftClaimed].sort());
    await shots(page, 'three-people-review');

    for (const w of worked) {
      const r = (await api('GET', `/api/v1/reviews/${w.id}`)).json();
      assert.equal(r.resolution, w.resolution);
      assert.equal(r.resolved_by, people.ana.id);
      assert.equal(r.assignee_name, 'Ana Analyst');
    }
    const third = (await api('GET', `/api/v1/reviews/${leftClaimed}`)).json();
    assert.equal(third.status, 'claimed');
    assert.equal(third.assignee, people.ana.id);
    await signOut();
  });

  test("a viewer sees the desk's dashboard and the queue with the analyst named, and none of the others' actions", async () => {
    await signInWithPassword(page, server.base, people.vic);
    assert.match(await header(), /Vic Viewer · viewer/);
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'The desk' }).waitFor();
    await page.locator('[data-chart="outcomes"] canvas').waitFor();
    await shots(page, 'three-people-dashboard');
    for (const name of ['Users', 'Keys', 'Webhooks', 'Network']) assert.equal(await nav(name).count(), 0, name);

    // the queue: the analyst's claim by name (not a principal id), and no Next
    // the link carries the queue's count ("Reviews 1")
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: /^Reviews/ })
      .click();
    const held = page.locator(`tr[data-review="${leftClaimed}"]`);
    await held.getByText('claimed by Ana Analyst').waitFor();
    assert.doesNotMatch(await held.innerText(), new RegExp(people.ana.id));
    assert.equal(await page.getByRole('button', { name: 'Next', exact: true }).count(), 0);
    await shots(page, 'three-people-queue');
    // a resolved one says who resolved it, by name; a viewer has no verdict buttons
    await page.goto(`${server.base}/console/reviews/${worked[0]!.id}`);
    const resolved = page.locator('.panel.resolved');
    await resolved.waitFor();
    assert.match(await resolved.innerText(), /declined[\s\S]*by Ana Analyst/);
    assert.equal(await page.getByRole('button', { name: /^(Approve|Decline|Claim)/ }).count(), 0);

    // the rule: readable, but no editing or lifecycle
    await nav('Rules').click();
    await page.getByRole('link', { name: RULE }).click();
    await page.getByRole('heading', { name: new RegExp(RULE) }).waitFor();
    assert.equal(await page.locator('h1 .badge').innerText(), 'active');
    for (const name of ['Edit', `Back to shadow: ${RULE}`, `Retire: ${RULE}`])
      assert.equal(await page.getByRole('button', { name }).count(), 0, name);
    await nav('Rules').click();
    await page.locator(`tr[data-rule="${RULE}"]`).waitFor();
    assert.equal(await page.getByRole('button', { name: 'New rule' }).count(), 0);
    // pending changes: nothing to approve, and no settings to change
    await nav('Pending changes').click();
    await page.getByText('Nothing waits for a second person.').waitFor();
    assert.equal(await page.getByRole('checkbox', { name: 'rules' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Save' }).count(), 0);
  });

  test('the audit log names each person for what they did', async () => {
    await nav('Audit log').click();
    const rows = page.locator('table.audit tbody tr');
    await rows.first().waitFor();
    const entries = await until('the desk’s entries', async () => {
      const actions = await page.locator('table.audit tbody td[data-label="Action"]').allInnerTexts();
      const who = await page.locator('table.audit tbody td[data-label="Who"] button').allInnerTexts();
      if (actions.length !== who.length) return undefined;
      const all = actions.map((action, i) => ({ action: action.trim(), who: who[i]!.trim() }));
      return all.some((e) => e.action === 'review.resolved') ? all : undefined;
    });
    const by = (action: string) => entries.filter((e) => e.action === action).map((e) => e.who);
    assert.deepEqual(by('settings.changed'), ['Ada Admin']);
    assert.ok(by('rule.created').includes('Otto Operator'), JSON.stringify(entries));
    assert.ok(by('change.requested').includes('Otto Operator'), JSON.stringify(entries));
    assert.deepEqual(by('change.approved'), ['Pia Approver']);
    assert.deepEqual(by('review.resolved'), ['Ana Analyst', 'Ana Analyst']);
    for (const p of Object.values(people))
      assert.ok(
        entries.some((e) => e.action === 'user.login' && e.who === p.name),
        `${p.name}'s sign-in is logged: ${JSON.stringify(entries)}`,
      );
    // nothing a person did is logged under a machine or without a name
    for (const e of entries.filter((e) => !e.action.startsWith('user.'))) assert.notEqual(e.who, '', e.action);
    await shots(page, 'three-people-audit-log');
    await signOut();
    assert.deepEqual(cspErrors, []);
  });
});
