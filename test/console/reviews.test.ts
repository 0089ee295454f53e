// The console's Reviews page in chromium against a real server and store: reviews opened by scores
// whose outcome active rules made review or hold (and one overdue row opened the way scores open
// them), the open count beside "Reviews" in the navigation, the queue due first with the overdue
// one in red, J/K/Enter, "Next" claiming the review due first, a decline with the D key and one
// with the form (label, note, add to list), each confirmed in a dialog, leaving the queue and
// lowering the count, the policy page's review labels (no fit yet), and a reviews:read principal's
// read-only queue. The confirmation itself: review-desk.test.ts.
// Screenshots at 1400×900 and 390 px wide: 60-reviews-queue, 61-review, 62-review-resolved-queue.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_ID, ADMIN_SECRET, bearer } from '../helpers/app.ts';
import { event, hash, postEvents, tradeHistory } from '../helpers/trust.ts';
import { HOUR, seedReviews } from '../reviews/support.ts';
import { describeInBrowser, openTab, shots, signIn as signInAt, until, type Server } from './browser.ts';

const BUYER = hash('reviews-console-buyer');
const MATE = hash('reviews-console-ring-mate');
const WHALE = hash('reviews-console-whale');
const SMALL = hash('reviews-console-small');

interface ReviewJson {
  id: string;
  status: string;
  resolution: string | null;
  label: string | null;
  note: string | null;
  added_to_list: string | null;
  entity_id: string;
  outcome: string;
  assignee: string | null;
}

describeInBrowser('operator console: Reviews in chromium', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let overdueId: string;
  let cspErrors: string[] = [];

  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
  const score = async (entity: string, amount: number) => {
    const res = await api('POST', '/api/v1/trust/score', {
      entity_id: entity,
      amount,
      currency: 'USD',
      context: { payment_method: 'bank_transfer', country: 'DE' },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { decision_id: string; outcome: string };
  };
  const reviews = async (query = '') => (await api('GET', `/api/v1/reviews${query}`)).json().data as ReviewJson[];
  const navLink = () => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Reviews/ });
  const navCount = async () => navLink().locator('.nav-count').getAttribute('data-open');
  const countIs = (n: number) =>
    until(`the navigation to say ${n} open`, async () => ((await navCount()) === String(n) ? true : undefined));
  const queueIds = async () =>
    page.locator('table.review-queue tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-review')));

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    await postEvents(server, admin, [
      ...tradeHistory(BUYER, 30, 200, 1000),
      ...tradeHistory(WHALE, 40, 300, 3000),
      ...tradeHistory(SMALL, 6, 30),
      ...tradeHistory(MATE, 2, 5),
      event('identifier.linked', BUYER, { linked_identifiers: [{ type: 'phone', hash: hash('reviews-phone') }] }),
      event('identifier.linked', MATE, { linked_identifiers: [{ type: 'phone', hash: hash('reviews-phone') }] }),
    ]);
    // active rules decide the outcomes: over 1,000 USD is reviewed, over 5,000 held
    for (const [name, condition, action] of [
      ['big_trade', 'amount > 1000.0', 'review'],
      ['very_big_trade', 'amount > 5000.0', 'hold'],
    ] as const) {
      const res = await api('POST', '/api/v1/rules', { name, condition, action, status: 'active' });
      assert.equal(res.statusCode, 201, res.body);
    }
    assert.equal(
      (await api('POST', '/api/v1/lists', { name: 'desk_blocks', kind: 'entity', description: 'declined at review' }))
        .statusCode,
      201,
    );
    assert.equal((await score(BUYER, 2000)).outcome, 'review');
    assert.equal((await score(BUYER, 1500)).outcome, 'review');
    assert.equal((await score(WHALE, 6000)).outcome, 'hold');
    assert.equal((await score(SMALL, 50)).outcome, 'approve');
    // one overdue review, opened the way a score opens one (a decision carrying its review), due an hour ago
    const [row] = await seedReviews(server.store.db, [
      { owner: ADMIN_ID, entity: SMALL, outcome: 'review', dueIn: -HOUR },
    ]);
    overdueId = row!.review!.id;
    ({ page, cspErrors } = await openTab(browser, server.base));
    // these tests read the queue after each verdict: the desk's auto-advance (on by default) is off here
    await page.addInitScript("localStorage.setItem('vouch.reviews.auto-advance', 'off')");
    await signInAt(page, server.base);
  });

  test('the navigation says how many are open; the queue lists them due first with the overdue one in red; J/K move, Enter opens', async () => {
    await countIs(4);
    await navLink().click();
    await page.getByRole('heading', { name: 'Reviews', level: 1 }).waitFor();
    await page.locator('table.review-queue tbody tr').nth(3).waitFor();
    const expected = (await reviews()).filter((r) => r.status !== 'resolved').map((r) => r.id);
    assert.equal(expected.length, 4);
    assert.equal(expected[0], overdueId);
    assert.deepEqual(await queueIds(), expected);
    const first = page.locator(`tr[data-review="${overdueId}"]`);
    assert.match((await first.getAttribute('class')) ?? '', /overdue-row/);
    const due = first.locator('.due.overdue');
    assert.match(await due.innerText(), /Overdue by (59|60) min|Overdue by 1 h/);
    assert.equal(
      await page.evaluate(
        `getComputedStyle(document.querySelector('tr[data-review="${overdueId}"] .due.overdue')).color`,
      ),
      'rgb(179, 38, 30)',
    );
    // the hold (due in 4 h) before the two reviews (24 h)
    assert.match(await page.locator('table.review-queue tbody tr').nth(1).innerText(), /hold[\s\S]*very_big_trade/);
    assert.equal(await page.locator('[data-figure="open"]').innerText(), '4');
    assert.equal(await page.locator('[data-figure="overdue"]').innerText(), '1');
    const legend = await page.getByRole('list', { name: 'Keyboard' }).innerText();
    for (const k of ['J', 'K', 'Enter', 'N']) assert.match(legend, new RegExp(`${k}\\s`));
    await shots(page, '60-reviews-queue');
    // keys: J twice, K once (the selected row's link takes the focus), Enter opens the second row
    await page.locator('h1').click();
    assert.equal(await page.locator('tr.selected').getAttribute('data-review'), expected[0]);
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    assert.equal(await page.locator('tr.selected').getAttribute('data-review'), expected[1]);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Review ${expected[1]}` }).waitFor();
    // J on a review's page moves to the next review of the queue
    await page.getByRole('heading', { name: 'Resolve' }).waitFor();
    await page.keyboard.press('j');
    await page.getByRole('heading', { name: `Review ${expected[2]}` }).waitFor();
    await page.getByRole('link', { name: '← Queue' }).click();
    await page.locator('table.review-queue tbody tr').nth(3).waitFor();
  });

  test('Next claims the review due first and opens it; D and Enter decline it: it leaves the queue and the count drops', async () => {
    await page.getByRole('button', { name: 'Next', exact: true }).click();
    await page.getByRole('heading', { name: `Review ${overdueId}` }).waitFor();
    await page.getByText('claimed by you').first().waitFor();
    assert.equal((await reviews()).find((r) => r.id === overdueId)?.assignee, ADMIN_ID);
    await page.keyboard.press('d');
    await page.getByRole('dialog').getByRole('heading', { name: 'Decline this trade?' }).waitFor();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Reviews', level: 1 }).waitFor();
    await page.getByText(`Review ${overdueId} declined: the decision is labelled fraud.`).waitFor();
    await countIs(3);
    assert.equal(await page.locator(`tr[data-review="${overdueId}"]`).count(), 0);
    const done = (await reviews('?status=resolved')).find((r) => r.id === overdueId);
    assert.deepEqual([done?.resolution, done?.label], ['decline', 'fraud']);
  });

  test("a review's page: matched rules with what they read, the waterfall, the ring, the entity's other reviews; the form declines with a label, note and list", async () => {
    await page.keyboard.press('n');
    const held = (await reviews()).find((r) => r.outcome === 'hold')!;
    await page.getByRole('heading', { name: `Review ${held.id}` }).waitFor();
    const rule = page.locator('.decision-rules li', { hasText: 'very_big_trade' });
    assert.match(await rule.innerText(), /hold[\s\S]*amount = 6000/);
    assert.match(
      await page.locator('.decision-rules li', { hasText: 'big_trade' }).first().innerText(),
      /amount = 6000/,
    );
    await page.locator('.waterfall canvas').waitFor();
    await page.getByRole('heading', { name: 'Flagged by other marketplaces' }).waitFor();
    await page.getByRole('heading', { name: "The entity's ring" }).waitFor();
    await page.getByRole('heading', { name: 'Resolve' }).waitFor();
    await page
      .getByLabel('Add the entity to a list (optional)')
      .locator('option[value="desk_blocks"]')
      .waitFor({ state: 'attached' });
    await shots(page, '61-review-whale');

    // the buyer's review: its other review and its ring (the account sharing its phone) in view
    await page.getByRole('link', { name: '← Queue' }).click();
    const buyer = (await reviews()).filter((r) => r.entity_id === BUYER);
    await page.locator(`tr[data-review="${buyer[0]!.id}"]`).getByRole('link').click();
    await page.locator(`tr[data-other-review="${buyer[1]!.id}"]`).waitFor();
    await until('the ring drawn', async () =>
      (await page.locator('.ring-drawing').getAttribute('data-nodes')) ? true : undefined,
    );
    assert.equal(await page.locator('table.ring tbody tr').count(), 1);
    assert.match(await page.locator('[data-figure="entity-labels"]').innerText(), /0 fraud\s+0 legit/);
    // L goes to the list; the form resolves
    await page.keyboard.press('l');
    assert.equal(await page.evaluate('document.activeElement.name'), 'add_to_list');
    await page.getByLabel('Add the entity to a list (optional)').selectOption('desk_blocks');
    await page.locator('select[name="label"]').selectOption('fraud');
    await page.getByLabel('Note (optional)').fill('shares a phone with a mule account');
    await shots(page, '61-review');
    await page.getByRole('button', { name: /^Decline/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Decline', exact: true }).click();
    await page
      .getByText(`Review ${buyer[0]!.id} declined: the decision is labelled fraud, the entity added to desk_blocks.`)
      .waitFor();
    await countIs(2);
    assert.equal(await page.locator(`tr[data-review="${buyer[0]!.id}"]`).count(), 0);
    const done = (await reviews('?status=resolved')).find((r) => r.id === buyer[0]!.id)!;
    assert.deepEqual(
      [done.resolution, done.label, done.note, done.added_to_list],
      ['decline', 'fraud', 'shares a phone with a mule account', 'desk_blocks'],
    );
    const entries = (await api('GET', '/api/v1/lists/desk_blocks/entries')).json().data as Array<{ value: string }>;
    assert.deepEqual(
      entries.map((e) => e.value),
      [BUYER],
    );
    await shots(page, '62-review-resolved-queue');
    // the remaining buyer review shows the resolved one among the entity's other reviews, and its label
    await page.locator(`tr[data-review="${buyer[1]!.id}"]`).getByRole('link').click();
    await page.locator(`tr[data-other-review="${buyer[0]!.id}"]`).getByText('declined').waitFor();
    assert.match(await page.locator('[data-figure="entity-labels"]').innerText(), /1 fraud/);
  });

  test('the policy page says how many review labels there are, and that no policy was fitted yet', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Policies', exact: true }).click();
    const note = page.locator('[data-review-labels]');
    await note.waitFor();
    assert.equal(await note.getAttribute('data-review-labels'), '2');
    assert.match(
      await note.innerText(),
      /^2 review labels so far, and no policy was fitted yet: a first fit learns from them\.$/,
    );
    await countIs(2);
  });

  test('reviews:read alone: the queue and a review read the same, with nothing that claims or resolves', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    const reader = await server.client(['reviews:read', 'audit:read', 'trust:read'], 'operator');
    await signInAt(page, server.base, reader.id, reader.secret);
    // a non-admin client sees its own client's reviews: none
    await navLink().click();
    await page.getByText('The queue is empty').waitFor();
    assert.equal(await navCount(), '0');
    assert.equal(await page.getByRole('button', { name: 'Next', exact: true }).count(), 0);
    assert.doesNotMatch(await page.getByRole('list', { name: 'Keyboard' }).innerText(), /\bN\s/);
    await page.getByRole('button', { name: 'Sign out' }).click();
    // an admin reader sees every client's, read-only
    const adminReader = await server.client(['reviews:read', 'audit:read'], 'admin');
    await signInAt(page, server.base, adminReader.id, adminReader.secret);
    await navLink().click();
    await page.locator('table.review-queue tbody tr').nth(1).waitFor();
    assert.equal(await navCount(), '2');
    assert.equal(await page.getByRole('button', { name: 'Next', exact: true }).count(), 0);
    await page.locator('h1').click();
    await page.keyboard.press('Enter');
    await page.getByText('This client may read reviews but not resolve them').waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Resolve' }).count(), 0);
    assert.doesNotMatch(await page.getByRole('list', { name: 'Keyboard' }).innerText(), /approve|decline/);
    await page.keyboard.press('d');
    assert.equal(await page.getByRole('dialog').count(), 0, 'no confirmation for a reader');
    assert.equal((await reviews()).filter((r) => r.status !== 'resolved').length, 2);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInAt(page, server.base, ADMIN_ID, ADMIN_SECRET);
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
