// The operator console in a real browser (Debian's chromium through playwright-core) against a real
// server and store: sign-in, decisions, disputes and entities, scopes, test mode, a phone-sized
// window and the keyboard. Policies, keys and webhooks: console-admin.test.ts. Every page is
// photographed at 1400×900 and at 390 px wide (test-results/console).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_ID, ADMIN_SECRET, bearer } from '../helpers/app.ts';
import { createClient } from '../../src/auth/clients.ts';
import { person } from '../helpers/people.ts';
import { event, hash, postEvents, tradeHistory } from '../helpers/trust.ts';
import {
  describeInBrowser,
  NARROW,
  WIDE,
  nav as navIn,
  openClientSignIn,
  openTab,
  shots,
  sidewaysOverflow,
  signIn as signInAt,
  type Server,
  until,
} from './browser.ts';

// In CI a missing browser is a failure (the browser tests must run there); elsewhere it is said plainly.
const NAV = ['Dashboard', 'Decisions', 'Disputes', 'Entities', 'Policies', 'Keys', 'Webhooks'];
const RISKY = hash('console-risky-entity');
const BUSY = hash('console-busy-entity');
const BUYER = hash('console-buyer');
const SELLER = hash('console-seller');

describeInBrowser('operator console in chromium', { server: { tokenTtlSeconds: 8 } }, (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let decisionId: string;
  let notedId: string;
  let analysisId: string;
  let cspErrors: string[] = [];

  const api = async (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload: payload as object } : {}) });
  const analyse = (disputeId: string, extra: Record<string, unknown> = {}) =>
    api('POST', '/api/v1/dispute/analyze', {
      dispute_id: disputeId,
      trade: { trade_id: `trade_${disputeId}`, amount: 500, currency: 'USD' },
      buyer_id: BUYER,
      seller_id: SELLER,
      opened_by: 'buyer',
      reason: 'asset_not_released',
      evidence: {
        payment_proof_submitted: true,
        bank_reference_matches: true,
        seller_confirmed_receipt: false,
        seller_response_minutes: 20,
      },
      ...extra,
    });

  before(async () => {
    // A short token lifetime, so the suite also sees the console renew its token.
    ({ server, browser } = suite());
    admin = await server.token();
    await postEvents(server, admin, [
      ...tradeHistory(RISKY, 6, 30),
      event('chargeback', RISKY, { amount: 300, currency: 'USD' }),
      event('identifier.linked', RISKY, { linked_identifiers: [{ type: 'phone', hash: hash('phone-1') }] }),
      // a second holder of the same phone, for the Entities page's sharing count
      event('identifier.linked', hash('console-ring-mate'), {
        linked_identifiers: [{ type: 'phone', hash: hash('phone-1') }],
      }),
      // more events than the timeline's first page (50)
      ...Array.from({ length: 53 }, (_, i) => event('trade.cancelled', BUSY, {}, (i + 1) * 60_000)),
      ...tradeHistory(BUYER, 3, 10),
      ...tradeHistory(SELLER, 12, 60),
    ]);
    const scored = await api('POST', '/api/v1/trust/score', {
      entity_id: RISKY,
      amount: 400,
      currency: 'USD',
      context: { payment_method: 'card', country: 'DE', counterparty_country: 'NG', trade_id: 'trade_console_risky' },
    });
    assert.equal(scored.statusCode, 200, scored.body);
    decisionId = scored.json().decision_id;
    notedId = (await api('POST', '/api/v1/trust/score', { entity_id: BUYER, amount: 100, currency: 'EUR' })).json()
      .decision_id;
    assert.equal(
      (await api('POST', `/api/v1/decisions/${notedId}/label`, { label: 'legit', note: 'paid out, bank confirmed' }))
        .statusCode,
      200,
    );
    // the same dispute analysed twice: the list shows it once
    assert.equal((await analyse('dsp_console_1', { evidence: { payment_proof_submitted: true } })).statusCode, 200);
    const analysed = await analyse('dsp_console_1');
    assert.equal(analysed.statusCode, 200, analysed.body);
    analysisId = analysed.json().analysis_id;
    assert.equal(analysed.json().recommendation, 'manual_review');
    await analyse('dsp_console_2', {
      opened_by: 'seller',
      reason: 'payment_reversed',
      trade: { trade_id: 'trade_console_2', amount: 80, currency: 'USD' },
      evidence: { payment_reversed: true },
    });

    ({ page, cspErrors } = await openTab(browser, server.base));
  });

  const signIn = (id = ADMIN_ID, secret = ADMIN_SECRET, path = '') => signInAt(page, server.base, id, secret, path);
  const nav = (name: string) => navIn(page, name);
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').waitFor();
  };

  test("sign-in: a wrong secret shows the problem detail; the right one shows every page link, the client's name, and stores nothing", async () => {
    await page.goto(`${server.base}/console`);
    await shots(page, '00-sign-in');
    await openClientSignIn(page);
    await page.getByLabel('Client ID').fill(ADMIN_ID);
    await page.getByLabel('Client secret').fill('wrong-secret');
    await page.getByRole('button', { name: 'Sign in as this client' }).click();
    await page.getByRole('alert').getByText('Sign-in failed').waitFor();
    await signIn();
    for (const name of NAV) assert.equal(await nav(name).count(), 1, name);
    // the name given to the client, not its id
    assert.equal(await page.locator('header .client-name').innerText(), 'bootstrap admin');
    assert.doesNotMatch(await page.locator('header').innerText(), new RegExp(ADMIN_ID));
    const stored = await page.evaluate('localStorage.length + sessionStorage.length + document.cookie.length');
    assert.equal(stored, 0);
  });

  test('the token is renewed before it expires, with the credentials kept in memory', async () => {
    // 80% of the 8 s lifetime after the last token; waited for as an event, not slept for
    const renewal = await page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/api/v1/auth/token'), {
      timeout: 30_000,
    });
    assert.equal((await renewal.response())?.status(), 200);
  });

  test('Decisions: the list; a decision shows score, safe amount, trade id and the label with its note', async () => {
    await nav('Decisions').click();
    await page.getByRole('heading', { name: 'Decisions', level: 1 }).waitFor();
    await page.locator('tbody tr').nth(1).waitFor();
    // an admin sees every client's decisions: no per-client note
    assert.equal(await page.getByRole('note').count(), 0);
    await shots(page, '01-decisions');
    await page.getByLabel('Decision ID').fill(decisionId);
    await page.getByRole('button', { name: 'Open decision' }).click();
    await page.getByRole('heading', { name: 'Why this score' }).waitFor();
    const facts = await page.locator('dl.facts').innerText();
    assert.match(facts, /Score/);
    assert.match(facts, /Level/);
    assert.match(facts, /Amount\s+400\.00 USD/);
    assert.match(facts, /Safe amount\s+(no limit|[\d.,]+ USD)/);
    assert.match(facts, /Payment\s+card/);
    assert.match(facts, /Trade\s+trade_console_risky/);
    const canvas = page.locator('figure.waterfall canvas');
    assert.equal(await canvas.count(), 1);
    // every signal, the bias and the total are named on the chart's axis
    const signals = await page.locator('table tbody tr').count();
    // the chart records its axis once drawn, after the page has rendered: wait for it
    const labels = String(signals + 2);
    await until(`the waterfall drawn with ${labels} names`, async () =>
      (await canvas.getAttribute('data-drawn-labels')) === labels ? true : undefined,
    );
    assert.equal(await canvas.getAttribute('data-drawn-labels'), labels);
    assert.ok((await page.getByRole('cell', { name: /chargeback/ }).count()) > 0, 'chargeback signal listed');
    await page.getByRole('button', { name: 'Fraud' }).waitFor();
    await page.getByRole('button', { name: 'Legit' }).waitFor();
    await shots(page, '02-decision');
    await page.goto(`${server.base}/console`);
    await signIn(ADMIN_ID, ADMIN_SECRET, `/decisions/${notedId}`);
    await page.locator('dl.facts').getByText('“paid out, bank confirmed”').waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /Trade\s+none given/);
  });

  test('Decisions: labelling as Fraud with a note shows in the list filtered by label', async () => {
    await nav('Decisions').click();
    await page.getByLabel('Decision ID').fill(decisionId);
    await page.getByRole('button', { name: 'Open decision' }).click();
    await page.getByLabel('Note (optional)').fill('card owner disputed the payment');
    await page.getByRole('button', { name: 'Fraud' }).click();
    await page.locator('dl.facts').getByText('fraud', { exact: true }).waitFor();
    await page.locator('dl.facts').getByText('“card owner disputed the payment”').waitFor();
    assert.equal(
      (await api('GET', `/api/v1/decisions/${decisionId}`)).json().label.note,
      'card owner disputed the payment',
    );
    // straight on to another decision, in the page: its own label, never the one just given
    await page.evaluate(
      `history.pushState(null, '', '/console/decisions/${notedId}'); window.dispatchEvent(new PopStateEvent('popstate'))`,
    );
    await page.locator('dl.facts').getByText('“paid out, bank confirmed”').waitFor();
    await page.locator('dl.facts').getByText('legit', { exact: true }).waitFor();
    assert.equal(await page.locator('dl.facts').getByText('fraud', { exact: true }).count(), 0);
    await nav('Decisions').click();
    await page.getByLabel('Label').selectOption('fraud');
    const filtered = page.waitForResponse((r) => r.url().includes('label=fraud'));
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await filtered;
    // Polled from here: a string predicate would be evaluated in the page, which the console's CSP forbids.
    await until('one row', async () => ((await page.locator('tbody tr').count()) === 1 ? true : undefined));
    await page.locator(`a[href="/console/decisions/${decisionId}"]`).waitFor();
    await page.getByLabel('Label').selectOption('legit');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.locator(`a[href="/console/decisions/${notedId}"]`).waitFor();
  });

  test('Disputes: one row per dispute with its analysis count, manual reviews first; the resolution is recorded and stays marked', async () => {
    await nav('Disputes').click();
    await page.getByRole('heading', { name: 'Disputes', level: 1 }).waitFor();
    await page.locator('tbody tr').nth(1).waitFor();
    const rows = page.locator('tbody tr');
    assert.equal(await rows.count(), 2, 'dsp_console_1 (twice) and dsp_console_2');
    const first = await rows.first().innerText();
    assert.match(first, /dsp_console_1[\s\S]*manual review/);
    assert.equal(await rows.first().locator('td[data-label="Analyses"]').innerText(), '2');
    // the row opens the latest analysis
    assert.equal(await rows.first().getByRole('link').getAttribute('href'), `/console/disputes/${analysisId}`);
    await shots(page, '03-disputes');
    await page.getByLabel('Analysis ID').fill(analysisId);
    await page.getByRole('button', { name: 'Open analysis' }).click();
    await page.getByRole('heading', { name: 'Risk flags' }).waitFor();
    assert.match(
      await page.locator('.cards').innerText(),
      /Buyer[\s\S]*Score[\s\S]*Safe amount:? (no limit|[\d.,]+ USD)[\s\S]*Seller[\s\S]*Score/,
    );
    const disputeFacts = await page.locator('dl.facts').innerText();
    assert.match(disputeFacts, /Trade\s+trade_dsp_console_1 · 500\.00 USD/);
    assert.match(disputeFacts, /Reason\s+asset not released/);
    assert.match(disputeFacts, /Opened by\s+the buyer/);
    assert.match(
      await page.locator('ul.evidence').innerText(),
      /payment proof submitted: yes[\s\S]*seller confirmed receipt: no[\s\S]*seller response minutes: 20/,
    );
    assert.ok((await page.locator('ul.flags li').count()) >= 1);
    await page.getByRole('heading', { name: 'Missing evidence' }).waitFor();
    await page.locator('dl.facts').getByText('open', { exact: true }).waitFor();
    await shots(page, '04-dispute');
    await page.getByLabel('Seller').check();
    await page.getByLabel('Trade ID (optional)').fill('trade_dsp_console_1');
    await page.getByRole('button', { name: 'Record resolution' }).click();
    await page.getByText('Resolution recorded.').waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /Status\s+resolved in favour of the seller/);
    assert.equal(await page.getByRole('button', { name: 'Record resolution' }).count(), 0);
    const seller = (await api('GET', `/api/v1/trust/entities/${SELLER}`)).json();
    const buyer = (await api('GET', `/api/v1/trust/entities/${BUYER}`)).json();
    assert.equal(seller.disputes_won, 1);
    assert.equal(buyer.disputes_lost, 1);
    // opened afresh, the analysis is still marked resolved
    await nav('Disputes').click();
    await page.locator(`a[href="/console/disputes/${analysisId}"]`).click();
    await page
      .locator('dl.facts')
      .getByText(/resolved in favour of the seller/)
      .waitFor();
    assert.match(await page.locator('.cards').innerText(), /Buyer lost[\s\S]*Seller won/);
    await shots(page, '04-dispute-resolved');
  });

  test('Entities: a lookup shows aggregates, linked identifiers with their sharing counts and the event timeline; an unknown id says what to do', async () => {
    await nav('Entities').click();
    await page.getByLabel('Entity ID').fill(hash('never-seen'));
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('No events were ever recorded for this entity').waitFor();
    await page.getByLabel('Entity ID').fill(RISKY);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: /Aggregates/ }).waitFor();
    const facts = await page.locator('dl.facts').innerText();
    assert.match(facts, /Trades completed\s+6/);
    assert.match(facts, /Chargebacks\s+1/);
    const phoneRow = page.getByRole('row').filter({ has: page.getByRole('cell', { name: hash('phone-1') }) });
    assert.equal(await phoneRow.getByRole('cell').last().innerText(), '2');
    const timeline = page.locator('table.timeline');
    const chargeback = timeline.getByRole('row').filter({ hasText: 'chargeback' });
    await chargeback.waitFor();
    assert.match(await chargeback.innerText(), /300\.00 USD/);
    assert.equal(await timeline.locator('tbody tr').count(), 8); // 6 trades, the chargeback, the link
    await shots(page, '05-entity');
    await page.getByLabel('Entity ID').fill(BUSY);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('50 shown').waitFor();
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByText('53 shown').waitFor();
    assert.equal(await page.locator('table.timeline tbody tr').count(), 53);
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);
  });

  test('an operator client sees only the pages of its scopes, and is told decisions are per client', async () => {
    await signOut();
    const reader = await server.client(['audit:read', 'keys:read'], 'operator');
    await signIn(reader.id, reader.secret);
    const shown = [];
    for (const name of NAV) if ((await nav(name).count()) > 0) shown.push(name);
    assert.deepEqual(shown, ['Dashboard', 'Decisions', 'Disputes', 'Keys']);
    // sign-in lands on the dashboard
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await nav('Decisions').click();
    await page.getByRole('heading', { name: 'Decisions', level: 1 }).waitFor();
    assert.match(
      await page.getByRole('note').innerText(),
      /Decisions are recorded per client: test sees only the decisions made with its own credentials/,
    );
    await page.getByText(/No decisions yet\. .* made with this client's credentials/).waitFor();
    await shots(page, '06-operator-decisions');
    await nav('Disputes').click();
    assert.match(await page.getByRole('note').innerText(), /only the dispute analyses made with its own credentials/);
    await nav('Keys').click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
    // a reload forgets the session; the URL of a hidden page then lands on a visible one
    await page.goto(`${server.base}/console/entities`);
    await page.getByLabel('E-mail').waitFor(); // a reload forgets a client's session: the sign-in page
    await signIn(reader.id, reader.secret, '/entities');
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    assert.match(page.url(), /\/console\/$/);
  });

  test('a test-mode client: the header says "Test data", and a live decision cannot be opened', async () => {
    await signOut();
    const { client, secret } = await createClient(server.store.db, {
      name: 'console-test-mode',
      role: 'operator',
      scopes: ['audit:read', 'trust:read'],
      environment: 'test',
    });
    await signIn(client.client_id, secret);
    await page.getByText('Test data', { exact: true }).waitFor();
    assert.equal(await page.locator('header .client-name').innerText(), 'console-test-mode');
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await nav('Decisions').click();
    await page.getByRole('heading', { name: 'Decisions', level: 1 }).waitFor();
    assert.equal(
      await page.locator(`a[href="/console/decisions/${decisionId}"]`).count(),
      0,
      'the live decision is not listed',
    );
    await page.getByLabel('Decision ID').fill(decisionId);
    await page.getByRole('button', { name: 'Open decision' }).click();
    await page.getByText('No decision with this id is visible to this client').waitFor();
    await shots(page, '07-test-mode-live-decision');
    await signOut();
    await signIn();
    assert.equal(await page.getByText('Test data', { exact: true }).count(), 0, 'a live client sees no badge');
  });

  test('390 px wide: nothing is cut off sideways on the decision list (the Label column included), a decision, or the disputes', async () => {
    await page.setViewportSize(NARROW);
    await nav('Decisions').click();
    await page.locator('tbody tr').nth(1).waitFor();
    assert.equal(await sidewaysOverflow(page), 0);
    const label = page.locator('tbody tr').first().locator('td[data-label="Label"]');
    const box = (await label.boundingBox())!;
    assert.ok(box.x >= 0 && box.x + box.width <= NARROW.width, `the Label cell spans ${box.x}…${box.x + box.width}px`);
    assert.match(await label.innerText(), /^(fraud|legit|none)$/);
    await page.goto(`${server.base}/console`);
    await signIn(ADMIN_ID, ADMIN_SECRET, `/decisions/${decisionId}`);
    await page.getByRole('heading', { name: 'Why this score' }).waitFor();
    assert.equal(await sidewaysOverflow(page), 0);
    await nav('Disputes').click();
    await page.locator('tbody tr').nth(1).waitFor();
    assert.equal(await sidewaysOverflow(page), 0);
    await page.setViewportSize(WIDE);
  });

  test('keyboard alone: sign in, reach a page link, follow it; the focused control has a visible outline', async () => {
    await signOut();
    // a person signs in with e-mail and password (the first fields of the sign-in page)
    const who = await person(server, 'admin');
    await page.keyboard.press('Tab');
    await page.keyboard.type(who.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(who.password);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    let focused = '';
    for (let i = 0; i < 10 && focused !== 'Disputes'; i++) {
      await page.keyboard.press('Tab');
      focused = (await page.evaluate('document.activeElement && document.activeElement.textContent')) as string;
    }
    assert.equal(focused, 'Disputes');
    assert.notEqual(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle'), 'none');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Disputes', level: 1 }).waitFor();
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
