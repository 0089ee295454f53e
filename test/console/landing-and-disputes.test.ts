// The console against a real server (issue 29, item 21): sign-in lands on a dashboard of today's
// decisions; both lists show what was asked (amount, currency, reason); the decision-id field names
// both id prefixes; a dispute whose buyer has no history opens without a failed request; and the
// resolution form starts from the disputed trade. Screenshots: VOUCH_CONSOLE_SHOTS or test-results/console.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { event, hash, postEvents, tradeHistory } from '../helpers/trust.ts';
import { describeInBrowser, nav as navIn, openTab, shots, signIn, type Server } from './browser.ts';

const RISKY = hash('landing-risky');
const CLEAN = hash('landing-clean');
const NEW_BUYER = hash('landing-buyer-without-history');
const SELLER = hash('landing-seller');

describeInBrowser('console landing page, lists and a dispute of a buyer without history', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let analysisId: string;
  const failed: string[] = [];
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
  const nav = (name: string) => navIn(page, name);

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    await postEvents(server, admin, [
      ...tradeHistory(RISKY, 2, 5),
      event('chargeback', RISKY, { amount: 300, currency: 'USD' }),
      event('fraud.reported', RISKY, {}),
      ...tradeHistory(CLEAN, 20, 200),
      ...tradeHistory(SELLER, 12, 120),
    ]);
    const scores = [
      {
        entity_id: RISKY,
        amount: 400,
        currency: 'USD',
        context: { payment_method: 'card', country: 'DE', counterparty_country: 'NG' },
      },
      { entity_id: CLEAN, amount: 120, currency: 'EUR' },
      { entity_id: CLEAN, amount: 80, currency: 'EUR' },
    ];
    for (const body of scores) assert.equal((await api('POST', '/api/v1/trust/score', body)).statusCode, 200);
    // the README's dispute: a buyer the service has never seen, a 750 USDT transfer
    const analysed = await api('POST', '/api/v1/dispute/analyze', {
      dispute_id: 'dsp_landing_1',
      trade: { trade_id: 'trade_landing_1', amount: 750, currency: 'USDT' },
      buyer_id: NEW_BUYER,
      seller_id: SELLER,
      opened_by: 'buyer',
      reason: 'asset_not_released',
      evidence: { payment_proof_submitted: true },
    });
    assert.equal(analysed.statusCode, 200, analysed.body);
    analysisId = analysed.json().analysis_id;
    ({ page } = await openTab(browser, server.base));
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
  });

  test('sign-in lands on the dashboard: scores and dispute analyses today, the share scored high or critical', async () => {
    const listed = (await api('GET', '/api/v1/decisions?kind=score')).json().data as {
      result: { risk_level: string };
    }[];
    const high = listed.filter((d) => ['high', 'critical'].includes(d.result.risk_level)).length;
    assert.ok(high >= 1 && high < listed.length, `a mix of levels (${high} of ${listed.length} high+)`);
    await signIn(page, server.base);
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    assert.match(page.url(), /\/console\/?$/);
    assert.equal(await nav('Dashboard').getAttribute('aria-current'), 'page');
    await page.locator('[data-figure="scores-today"]').waitFor();
    assert.equal(await page.locator('[data-figure="scores-today"]').innerText(), '3');
    const share = new Intl.NumberFormat('en-GB', { style: 'percent', maximumFractionDigits: 1 }).format(high / 3);
    assert.equal(await page.locator('[data-figure="high-share"]').innerText(), share);
    assert.equal(await page.locator('[data-figure="disputes-today"]').innerText(), '1');
    assert.match(await page.locator('[data-figure="manual-review"]').innerText(), /^[01]$/);
    await shots(page, '50-dashboard');
  });

  test("Decisions: the id field names both prefixes (dec_ and dan_); the list shows amount, currency and a dispute's reason", async () => {
    await nav('Decisions').click();
    assert.equal(await page.getByLabel('Decision ID').getAttribute('placeholder'), 'dec_… or dan_…');
    await page.locator('tbody tr').nth(3).waitFor();
    const amounts = await page.locator('td[data-label="Amount"]').allInnerTexts();
    assert.deepEqual(amounts.map((a) => a.trim()).sort(), ['120.00 EUR', '400.00 USD', '750.00 USDT', '80.00 EUR']);
    const dispute = page.locator('tbody tr').filter({ hasText: '750.00 USDT' });
    assert.equal((await dispute.locator('td[data-label="Reason"]').innerText()).trim(), 'asset not released');
    await shots(page, '51-decisions-amounts');
  });

  test("Disputes: amount, currency and reason on the row; each party's score and level badge stay on one line", async () => {
    await nav('Disputes').click();
    const row = page.locator('tbody tr').first();
    await row.waitFor();
    assert.equal((await row.locator('td[data-label="Amount"]').innerText()).trim(), '750.00 USDT');
    assert.match(await row.locator('td[data-label="Reason"]').innerText(), /^asset not released · by the buyer$/);
    const badges = row.locator('td[data-label="Buyer / seller"] .badge');
    assert.equal(await badges.count(), 2);
    const [b1, b2] = [(await badges.nth(0).boundingBox())!, (await badges.nth(1).boundingBox())!];
    assert.equal(Math.round(b1.y), Math.round(b2.y), 'both badges on one line');
    const cell = (await row.locator('td[data-label="Buyer / seller"]').boundingBox())!;
    assert.ok(cell.height < 2.5 * b1.height + 20, `the parties cell is one line high (${cell.height}px)`);
    await shots(page, '52-disputes-amounts');
  });

  test('a dispute whose buyer has no history opens without a failed request; the resolution form starts with the disputed trade', async () => {
    failed.length = 0;
    await page.locator(`a[href="/console/disputes/${analysisId}"]`).click();
    await page.locator('dl.facts').getByText('open', { exact: true }).waitFor();
    assert.deepEqual(failed, [], 'no request of the page failed');
    assert.equal(await page.getByLabel('Trade ID (optional)').inputValue(), 'trade_landing_1');
    // the buyer loses: the event lands on the timeline of the entity that had none
    await page.getByLabel('Seller').check();
    await page.getByRole('button', { name: 'Record resolution' }).click();
    await page.getByText('Resolution recorded.').waitFor();
    await nav('Disputes').click();
    await page.locator(`a[href="/console/disputes/${analysisId}"]`).click();
    await page
      .locator('dl.facts')
      .getByText(/resolved in favour of the seller/)
      .waitFor();
    assert.deepEqual(failed, [], 'no request of the page failed');
    const events = (await api('GET', `/api/v1/trust/entities/${NEW_BUYER}/events`)).json().data as {
      type: string;
      trade_id?: string;
    }[];
    assert.deepEqual(
      events.map((e) => [e.type, e.trade_id]),
      [['dispute.resolved', 'trade_landing_1']],
    );
    await shots(page, '53-dispute-new-buyer');
  });
});
