// The console's Rules pages after issue 38 (item 11): one lifecycle change after another on a rule's
// page and in the rules list without reloading (the confirm button was left disabled after the
// first), the rules table's row actions whole at 1400×900 and 390×844 with long names and caps, and
// the rule editor's cap and a decision's label note showing their placeholders whole at every width.
// Screenshots (VOUCH_CONSOLE_SHOTS, or test-results/console): 56-rules-actions, 57-rule-lifecycle,
// 58-rule-editor-cap, 59-decision-note.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { hash, postEvents, tradeHistory } from '../helpers/trust.ts';
import {
  describeInBrowser,
  NARROW,
  WIDE,
  acrossWidths,
  clippedPlaceholders,
  nav as navIn,
  openTab,
  shots,
  signIn,
  sidewaysOverflow,
  type Server,
} from './browser.ts';

const TRADER = hash('rules-lifecycle-trader');
const LONG = 'first_card_trade_over_limit_for_new_accounts_of_the_eu_desk';
const RULES = [
  {
    name: LONG,
    condition: 'amount > 300.0',
    action: 'review',
    cap: 'safe_amount / 2',
    description: 'New accounts paying by card for more than twice their usual amount go to a reviewer first',
    status: 'shadow',
  },
  { name: 'known_mules', condition: 'in_list("mules", entity_id)', action: 'decline', final: true, status: 'active' },
  { name: 'stepper', condition: 'amount > 100000.0', cap: '200', status: 'draft' },
];

/** Buttons of the rules table reaching past their scrolling box or the window, as "rule: button". */
const CUT_ACTIONS = `[...document.querySelectorAll('.rules-table tbody button')].filter((b) => {
  const r = b.getBoundingClientRect();
  const w = b.closest('.table-wrap').getBoundingClientRect();
  return r.right > w.right + 0.5 || r.left < w.left - 0.5 || r.right > innerWidth;
}).map((b) => b.closest('tr').dataset.rule + ': ' + b.innerText)`;

describeInBrowser('operator console: rule lifecycle, the rules table and placeholders in chromium', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let decisionId: string;
  let cspErrors: string[] = [];
  const nav = (name: string) => navIn(page, name);
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
  const go = (path: string) =>
    page.evaluate(
      `history.pushState(null, '', ${JSON.stringify(`/console${path}`)}); window.dispatchEvent(new PopStateEvent('popstate'))`,
    );
  const statusOf = async (name: string) =>
    ((await api('GET', '/api/v1/rules?limit=100')).json().data as Array<{ name: string; status: string }>).find(
      (r) => r.name === name,
    )?.status;

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    await postEvents(server, admin, tradeHistory(TRADER, 6, 30));
    assert.equal((await api('POST', '/api/v1/lists', { name: 'mules', kind: 'entity' })).statusCode, 201);
    for (const rule of RULES) {
      const res = await api('POST', '/api/v1/rules', rule);
      assert.equal(res.statusCode, 201, res.body);
    }
    // matches to draw: the hit charts take their room in the table, as they do on a desk
    for (const amount of [50, 450, 900]) {
      const res = await api('POST', '/api/v1/trust/score', { entity_id: TRADER, amount, currency: 'USD' });
      assert.equal(res.statusCode, 200, res.body);
      decisionId = res.json().decision_id;
    }
    ({ page, cspErrors } = await openTab(browser, server.base));
    await signIn(page, server.base);
  });

  test("a rule's page takes one lifecycle change after another without a reload", async () => {
    await nav('Rules').click();
    await page.locator('tr[data-rule="stepper"]').getByRole('link', { name: 'stepper' }).click();
    await page.locator('h1 .badge', { hasText: 'draft' }).waitFor();
    const steps = [
      ['Start shadow', 'shadow'],
      ['Activate', 'active'],
      ['Back to shadow', 'shadow'],
      ['Activate', 'active'],
    ] as const;
    for (const [label, status] of steps) {
      await page.getByRole('button', { name: `${label}: stepper` }).click();
      const confirm = page.getByRole('dialog').getByRole('button', { name: label, exact: true });
      assert.equal(await confirm.isEnabled(), true, `${label}: the confirm button is enabled`);
      await confirm.click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await page.locator('h1 .badge', { hasText: status }).waitFor();
      assert.equal(await statusOf('stepper'), status);
    }
    await page.getByText('Rule stepper is now active.').waitFor();
    await page.locator('.hit-chart.large').waitFor();
    await shots(page, '57-rule-lifecycle');
  });

  test('the rules list: a row takes a second change without a reload', async () => {
    await nav('Rules').click();
    const row = page.locator('tr[data-rule="known_mules"]');
    await row.getByRole('button', { name: 'Back to shadow: known_mules' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Back to shadow' }).click();
    await row.locator('.badge', { hasText: 'shadow' }).waitFor();
    await row.getByRole('button', { name: 'Activate: known_mules' }).click();
    const confirm = page.getByRole('dialog').getByRole('button', { name: 'Activate', exact: true });
    assert.equal(await confirm.isEnabled(), true);
    await confirm.click();
    await row.locator('.badge', { hasText: 'active' }).waitFor();
    assert.equal(await statusOf('known_mules'), 'active');
  });

  test("the rules table's row actions are whole at 1400×900 and 390×844", async () => {
    await nav('Rules').click();
    await page.locator(`tr[data-rule="${LONG}"] .hit-chart`).waitFor();
    for (const size of [WIDE, NARROW]) {
      await page.setViewportSize(size);
      await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
      assert.deepEqual(await page.evaluate(CUT_ACTIONS), [], `at ${size.width} px`);
      assert.equal(await sidewaysOverflow(page), 0, `nothing scrolls sideways at ${size.width} px`);
    }
    await page.setViewportSize(WIDE);
    const retire = page.getByRole('button', { name: `Retire: ${LONG}` });
    assert.equal(await retire.isVisible(), true);
    await shots(page, '56-rules-actions');
  });

  test("the rule editor's cap and a decision's label note show their placeholders whole at every width", async () => {
    await go('/rules/new');
    const cap = page.getByLabel('Cap (optional)');
    await cap.waitFor();
    assert.equal(await cap.getAttribute('placeholder'), '200 or safe_amount / 2');
    await acrossWidths(page, async (width) =>
      assert.deepEqual(await clippedPlaceholders(page), [], `the rule editor at ${width} px`),
    );
    await shots(page, '58-rule-editor-cap');
    await go(`/decisions/${decisionId}`);
    const note = page.getByRole('group', { name: 'Label this decision' }).getByLabel('Note (optional)');
    await note.waitFor();
    await acrossWidths(page, async (width) =>
      assert.deepEqual(await clippedPlaceholders(page), [], `the decision page at ${width} px`),
    );
    await shots(page, '59-decision-note');
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
