// Console pages against contract-shaped responses (issue 29, item 21): a fitted policy's shaped
// signals drawn as curves, the fit form's operating-point target, the activation showing the
// active policy beside the candidate, tables at 390 px neither cut off nor broken mid-word, a
// webhook's URL whole, a safe amount of 0 explained, and network peers' parts adding up to the
// signal. Screenshots: VOUCH_CONSOLE_SHOTS or test-results/console.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page, Route } from 'playwright-core';
import { ADMIN_ID } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import {
  describeInBrowser,
  NARROW,
  WIDE,
  brokenHeaders,
  nav as navIn,
  openTab,
  shot,
  shots,
  sidewaysOverflow,
  signIn,
  until,
  type Server,
} from './browser.ts';

const NOW = new Date().toISOString();
const M = { roc_auc: 0.81, average_precision: 0.62, brier: 0.12, calibration_error: 0.04 };
const json = (route: Route, status: number, body: unknown) =>
  route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
const level = (risk_level: string, min_score: number, flagged: number, precision: number, recall: number) => ({
  risk_level,
  min_score,
  flagged,
  share_flagged: flagged / 400,
  frauds_caught: Math.round(flagged * precision),
  recall,
  false_positives: 0,
  false_positive_rate: 0.05,
  precision,
  volume_caught: {},
  volume_held: {},
});

/** Tables inside the open dialog reaching past the window or past their scrolling box. */
const DIALOG_CUT = `[...document.querySelectorAll('dialog[open] .table-wrap')].filter((w) => w.scrollWidth > w.clientWidth || w.getBoundingClientRect().right > innerWidth).length
  + [...document.querySelectorAll('dialog[open]')].filter((d) => d.getBoundingClientRect().right > innerWidth || d.scrollWidth > d.clientWidth).length`;

describeInBrowser('console policy figures, narrow tables and details against contract-shaped responses', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let cspErrors: string[] = [];
  const nav = (name: string) => navIn(page, name);

  before(async () => {
    ({ server, browser } = suite());
    ({ page, cspErrors } = await openTab(browser, server.base));
    await signIn(page, server.base);
  });

  test('Policies: shaped signals drawn as curves; the fit sends an operating-point target; the activation shows the active policy beside the candidate, whole at 390 px', async () => {
    const policies = [
      {
        version: 'p1',
        status: 'active',
        source: 'builtin',
        parent_version: null,
        created_at: NOW,
        created_by: null,
        summary: 'the built-in policy',
      },
      {
        version: 'p2-fit',
        status: 'candidate',
        source: 'fit',
        parent_version: 'p1',
        created_at: NOW,
        created_by: ADMIN_ID,
        summary: 'fitted on 120 fraud and 220 legit decisions',
      },
    ];
    const backtest = (version: string, auc: number, high: number) => ({
      version,
      decisions: 1200,
      labelled: 340,
      metrics: { ...M, roc_auc: auc },
      levels: {
        low: { low: 700, medium: 40, high: 0, critical: 0 },
        medium: { low: 12, medium: 200, high: 8, critical: 0 },
        high: { low: 0, medium: 0, high: 150, critical: 5 },
        critical: { low: 0, medium: 0, high: 0, critical: 85 },
      },
      thresholds: [
        level('low', 0, 400, 0.3, 1),
        level('medium', 30, 200, 0.5, 0.9),
        level('high', high, 90, 0.7, 0.6),
        level('critical', 85, 30, 0.9, 0.25),
      ],
    });
    const fitted: unknown[] = [];
    let running = 0;
    let overlapped = false;
    await page.route(
      (url) => url.pathname.startsWith('/api/v1/policies'),
      async (route) => {
        const { pathname } = new URL(route.request().url());
        const method = route.request().method();
        if (pathname === '/api/v1/policies' && method === 'GET')
          return json(route, 200, { data: policies, next_cursor: null });
        if (pathname.endsWith('/backtest')) {
          // one job at a time per environment: a second backtest at once would get 409
          overlapped ||= running > 0;
          running += 1;
          await new Promise((resolve) => setTimeout(resolve, 50));
          running -= 1;
          return json(
            route,
            200,
            pathname.includes('p2-fit') ? backtest('p2-fit', 0.86, 58) : backtest('p1', 0.79, 60),
          );
        }
        if (pathname === '/api/v1/policies/fit') {
          fitted.push(route.request().postDataJSON());
          return json(route, 201, { ...policies[1], version: 'p3-fit', document: {}, report: null });
        }
        if (pathname === '/api/v1/policies/p2-fit') {
          return json(route, 200, {
            ...policies[1],
            document: { bias: -2.1 },
            report: {
              labels: { fraud: 120, legit: 220 },
              holdout: { decisions: 100, fraud: 35 },
              metrics: { base: M, candidate: { ...M, roc_auc: 0.86 } },
              thresholds: [level('high', 58, 40, 0.7, 0.55)],
              target: {
                target: { level: 'high', max_share_flagged: 0.1 },
                source: 'request',
                met: true,
                min_score: 58,
              },
              weights: {
                velocity_trades: { base: 1, candidate: 0 },
                chargebacks: { base: 2, candidate: 0.4 },
                fraud_reports: { base: 2.5, candidate: 2.2 },
              },
              shapes: {
                base: {},
                candidate: {
                  velocity_trades: { knots: [0.5, 1.5], slopes: [1.2, 3] },
                  chargebacks: { knots: [1], slopes: [2] },
                },
              },
            },
          });
        }
        return json(route, 404, { code: 'not_found', detail: 'No such policy.' });
      },
    );
    await nav('Policies').click();
    await page.getByRole('button', { name: 'Report of p2-fit' }).click();
    await page.getByRole('heading', { name: 'Shaped signals' }).waitFor();
    // a shaped signal is not "weight 0": it is named shaped, with its slopes, and drawn
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'velocity_trades', exact: true }) });
    assert.match(await row.locator('td[data-label="Candidate"]').innerText(), /shaped\s+0 → 1\.2 → 3/);
    assert.equal(await page.locator('figure.shape canvas').count(), 2);
    assert.deepEqual(
      await page.locator('figure.shape').evaluateAll((fs) => fs.map((f) => f.getAttribute('data-signal'))),
      ['velocity_trades', 'chargebacks'],
    );
    assert.match(
      await page.locator('figure.shape[data-signal="velocity_trades"]').innerText(),
      /rises to 3\.45 log-odds at value 2\.25/,
    );
    assert.match(await page.locator('.target-outcome').innerText(), /high at max share flagged 10%; met/);
    await shots(page, '60-policy-shapes');
    await page.getByRole('button', { name: 'Close report' }).click();

    await page.getByLabel('Target').selectOption('max_share_flagged');
    await page.getByLabel('Percent').fill('4');
    await page.getByLabel('Level').selectOption('critical');
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    await page.getByText('Fitted policy p3-fit stored as a candidate').waitFor();
    assert.deepEqual((fitted[0] as { target: unknown }).target, { level: 'critical', max_share_flagged: 0.04 });
    await page.getByRole('button', { name: 'Close report' }).click();
    await page.getByLabel('Target').selectOption('');
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    await until('the second fit request', async () => (fitted.length === 2 ? true : undefined));
    assert.equal((fitted[1] as { target?: unknown }).target, undefined, 'no target: the server keeps the base share');

    await page.getByRole('button', { name: 'Backtest p2-fit' }).click();
    await page.getByText(/decisions change level/).waitFor();
    await page.setViewportSize(NARROW);
    assert.equal(await sidewaysOverflow(page), 0);
    assert.deepEqual(await brokenHeaders(page), []);
    await shot(page, '61-backtest-390');
    await page.setViewportSize(WIDE);

    await page.getByRole('button', { name: 'Activate p2-fit' }).click();
    const dialog = page.getByRole('dialog');
    const metrics = dialog.locator('table.compare-metrics');
    await metrics.waitFor();
    assert.match(await metrics.innerText(), /p1 \(active\)[\s\S]*0\.79[\s\S]*p2-fit \(candidate\)[\s\S]*0\.86/);
    const high = dialog.locator('table.compare-levels tbody tr').filter({ hasText: 'high' });
    assert.equal(await high.locator('td[data-label="Active: from score"]').innerText(), '60');
    assert.equal(await high.locator('td[data-label="Candidate: from score"]').innerText(), '58');
    assert.equal(overlapped, false, 'the two backtests ran one after the other');
    await shot(page, '62-activate-both-wide');
    await page.setViewportSize(NARROW);
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    assert.equal(await page.evaluate(DIALOG_CUT), 0, 'nothing in the dialog is cut off at 390 px');
    assert.deepEqual(await brokenHeaders(page), []);
    await shot(page, '62-activate-both-390');
    await page.setViewportSize(WIDE);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.unrouteAll();
  });

  test('Webhooks: a long URL is shown whole, an empty description says so', async () => {
    const url =
      'https://hooks.example-marketplace.com/integrations/vouch/v2/endpoints/production-eu-west/high-risk-decisions';
    await page.route(
      (u) => u.pathname.startsWith('/api/v1/webhooks'),
      (route) =>
        json(route, 200, {
          data: [
            { id: 'wh_1', url, events: ['decision.high_risk', 'dispute.analyzed'], description: null, created_at: NOW },
          ],
          next_cursor: null,
        }),
    );
    await nav('Webhooks').click();
    const cell = page.getByRole('cell', { name: url });
    await cell.waitFor();
    for (const size of [WIDE, NARROW]) {
      await page.setViewportSize(size);
      // a string: evaluated in the page, whose DOM globals this (Node) project does not type
      const clipped = await page.evaluate(`(() => {
        const td = document.querySelector('td[data-label="URL"]');
        return td.scrollWidth > td.clientWidth || getComputedStyle(td).textOverflow === 'ellipsis';
      })()`);
      assert.equal(clipped, false, `the URL is whole at ${size.width} px`);
    }
    await page.setViewportSize(WIDE);
    assert.equal(await page.locator('td[data-label="Description"]').innerText(), 'none');
    await shots(page, '63-webhooks-long-url');
    await page.unrouteAll();
  });

  test("a decision: a safe amount of 0 is explained; a lone peer's part is the signal's value, not more", async () => {
    const id = 'dec_stubbed_zero';
    await page.route(
      (u) => u.pathname === `/api/v1/decisions/${id}`,
      (route) =>
        json(route, 200, {
          id,
          kind: 'score',
          principal_id: ADMIN_ID,
          subject_id: hash('zero'),
          request_digest: 'x',
          policy_version: 'p1',
          created_at: NOW,
          trade_id: null,
          features: null,
          label: null,
          request: { amount: 400, currency: 'USD' },
          // as the decision record stored it before the peers' parts were scaled to the value
          network_peers: [{ id: 'peer_1', name: 'market-b', contribution: 1 }],
          result: {
            decision_id: id,
            entity_id: hash('zero'),
            score: 91,
            risk_level: 'critical',
            safe_amount: 0,
            policy_version: 'p1',
            scored_at: NOW,
            cached: false,
            signals: [
              {
                name: 'network_flags',
                value: 0.5,
                weight: 1.9,
                description: 'an identifier it uses was flagged by 1 other marketplace',
              },
              { name: 'chargebacks', value: 1, weight: 2.2, description: '1 chargeback' },
            ],
          },
        }),
    );
    await page.evaluate(
      `history.pushState(null, '', '/console/decisions/${id}'); window.dispatchEvent(new PopStateEvent('popstate'))`,
    );
    await page.getByRole('heading', { name: 'Flagged by other marketplaces' }).waitFor();
    assert.match(
      await page.locator('dl.facts').innerText(),
      /Safe amount\s+0\.00 USD\s+no amount would score below high/,
    );
    assert.equal(await page.locator('.peers-list').innerText(), "market-b: 0.5 of the signal's 0.5 (+0.95 log-odds)");
    assert.match(
      await page.locator('#h-decision-network + p').innerText(),
      /network_flags = 0\.5, × weight 1\.9 = \+0\.95 log-odds/,
    );
    await shots(page, '64-decision-zero-safe-amount');
    await page.unrouteAll();
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
