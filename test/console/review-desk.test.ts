// The review desk after issue 38 (item 11): A and D, like the Approve and Decline buttons, only open a
// confirmation saying what the verdict will do (Escape goes back, nothing resolved; Enter resolves),
// a review shows its trade's context as the decision stored it (escaped), the ring of an entity
// never seen is a plain "no history yet" rather than an error, and the note's placeholder is whole
// at every width. Screenshots (VOUCH_CONSOLE_SHOTS, or test-results/console): 65-review-context,
// 66-review-confirm, 67-review-new-entity.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { hash, postEvents, tradeHistory } from '../helpers/trust.ts';
import {
  describeInBrowser,
  acrossWidths,
  clippedPlaceholders,
  openTab,
  shot,
  shots,
  signIn,
  type Server,
} from './browser.ts';

const KNOWN = hash('review-desk-known');
const NEWCOMER = hash('review-desk-never-seen');
// markup in a stored member: shown as text, never parsed
const TRADE = 'trade-<img src=x id=injected>-7';

interface ReviewJson {
  id: string;
  status: string;
  entity_id: string;
  resolution: string | null;
  label: string | null;
  note: string | null;
  added_to_list: string | null;
}

describeInBrowser('operator console: the review desk asks before it resolves, in chromium', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let known: ReviewJson;
  let newcomer: ReviewJson;
  let cspErrors: string[] = [];
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
  const review = async (id: string) => (await api('GET', `/api/v1/reviews/${id}`)).json() as ReviewJson;
  const go = (path: string) =>
    page.evaluate(
      `history.pushState(null, '', ${JSON.stringify(`/console${path}`)}); window.dispatchEvent(new PopStateEvent('popstate'))`,
    );
  const dialog = () => page.getByRole('dialog');
  const focused = () =>
    page.evaluate('document.activeElement?.closest("dialog") ? document.activeElement.innerText : null');

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    await postEvents(server, admin, tradeHistory(KNOWN, 12, 60, 300));
    const rule = { name: 'big_trade', condition: 'amount > 1000.0', action: 'review', status: 'active' };
    assert.equal((await api('POST', '/api/v1/rules', rule)).statusCode, 201);
    assert.equal((await api('POST', '/api/v1/lists', { name: 'desk_blocks', kind: 'entity' })).statusCode, 201);
    for (const [entity, context] of [
      [
        KNOWN,
        { payment_method: 'bank_transfer', side: 'buy', country: 'DE', counterparty_country: 'FR', trade_id: TRADE },
      ],
      [NEWCOMER, { payment_method: 'bank_transfer', country: 'GB' }],
    ] as const) {
      const res = await api('POST', '/api/v1/trust/score', {
        entity_id: entity,
        amount: 1200,
        currency: 'USD',
        context,
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const open = (await api('GET', '/api/v1/reviews')).json().data as ReviewJson[];
    known = open.find((r) => r.entity_id === KNOWN)!;
    newcomer = open.find((r) => r.entity_id === NEWCOMER)!;
    assert.ok(known && newcomer, 'both scores opened a review');
    ({ page, cspErrors } = await openTab(browser, server.base));
    // these tests read the queue after each verdict: the desk's auto-advance (on by default) is off here
    await page.addInitScript("localStorage.setItem('vouch.reviews.auto-advance', 'off')");
    await signIn(page, server.base);
  });

  test("a review shows the trade's context as its decision stored it, as text", async () => {
    await go(`/reviews/${known.id}`);
    await page.getByRole('heading', { name: 'Resolve' }).waitFor();
    const facts = page.locator('dl.review-facts');
    const fact = (name: string) => facts.locator(`[data-context="${name}"] dd`).innerText();
    assert.equal(await fact('payment_method'), 'bank transfer');
    assert.equal(await fact('side'), 'buy');
    assert.equal(await fact('country'), 'Germany (DE)');
    assert.equal(await fact('counterparty_country'), 'France (FR)');
    assert.match(await facts.innerText(), /Amount\s+1,200\.00 USD/);
    // the trade id has its own box; its markup is text
    assert.equal(
      await facts
        .locator('div', { hasText: /^Trade/ })
        .locator('dd')
        .innerText(),
      TRADE,
    );
    assert.equal(await page.locator('#injected').count(), 0);
    assert.equal(await facts.locator('[data-context="trade_id"]').count(), 0, 'the trade id is not shown twice');
    await shots(page, '65-review-context');
  });

  test('D and A only open the confirmation: Escape goes back with nothing resolved, Enter resolves', async () => {
    await page.locator('h1').click();
    await page.keyboard.press('d');
    await dialog().getByRole('heading', { name: 'Decline this trade?' }).waitFor();
    assert.match(await dialog().innerText(), /labelled\s+fraud/);
    assert.equal(await focused(), 'Decline', 'Enter is the explicit yes');
    // keys meant for the page do nothing while it asks
    await page.keyboard.press('a');
    assert.equal(await dialog().getByRole('heading', { name: 'Decline this trade?' }).count(), 1);
    await shot(page, '66-review-confirm-wide');
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
    assert.equal((await review(known.id)).status, 'open');

    await page.keyboard.press('a');
    await dialog().getByRole('heading', { name: 'Approve this trade?' }).waitFor();
    assert.match(await dialog().innerText(), /No label now/);
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached' });
    // the button asks the same question
    await page.getByRole('button', { name: /^Decline/ }).click();
    await dialog().getByRole('heading', { name: 'Decline this trade?' }).waitFor();
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
    assert.equal((await review(known.id)).status, 'open');

    // with a note and a list, the confirmation says both; Enter declines
    await page.getByLabel('Note (optional)').fill('the buyer disowned the payment');
    await page.getByLabel('Add the entity to a list (optional)').selectOption('desk_blocks');
    await page.locator('h1').click();
    await page.keyboard.press('d');
    await dialog().waitFor();
    const asked = await dialog().innerText();
    assert.match(asked, /added to the list desk_blocks/);
    assert.match(asked, /“the buyer disowned the payment”/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Reviews', level: 1 }).waitFor();
    await page
      .getByText(`Review ${known.id} declined: the decision is labelled fraud, the entity added to desk_blocks.`)
      .waitFor();
    const done = await review(known.id);
    assert.deepEqual(
      [done.status, done.resolution, done.label, done.note, done.added_to_list],
      ['resolved', 'decline', 'fraud', 'the buyer disowned the payment', 'desk_blocks'],
    );
  });

  test('the ring of an entity never seen before is "no history yet", not an error; the note placeholder is whole', async () => {
    // members a stored request may carry beyond today's summary are shown as text too
    const counterparty = hash('review-desk-counterparty');
    await page.route(`**/api/v1/reviews/${newcomer.id}`, async (route) => {
      const body = await (await route.fetch()).json();
      body.decision.request = {
        ...body.decision.request,
        counterparty_id: counterparty,
        channel: '<b id=injected>x</b>',
      };
      await route.fulfill({ json: body });
    });
    await go(`/reviews/${newcomer.id}`);
    await page.locator('[data-context="channel"]').waitFor();
    assert.equal(await page.locator('[data-context="channel"] dd').innerText(), '<b id=injected>x</b>');
    assert.equal(await page.locator('#injected').count(), 0);
    const link = page.locator('[data-context="counterparty_id"] a');
    assert.equal(await link.getAttribute('href'), `/console/entities/${counterparty}`);
    await page.unrouteAll();
    await page.getByRole('heading', { name: "The entity's ring" }).waitFor();
    await page.getByText('No history for this entity yet').waitFor();
    assert.equal(await page.locator('.error, [role="alert"]').count(), 0);
    assert.equal(await page.locator('[data-context="country"] dd').innerText(), 'United Kingdom (GB)');
    await acrossWidths(page, async (width) =>
      assert.deepEqual(await clippedPlaceholders(page), [], `the review page at ${width} px`),
    );
    await shots(page, '67-review-new-entity');
    assert.equal((await review(newcomer.id)).status, 'open');
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
