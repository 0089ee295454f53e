// The desk's day on the dashboard (issue 40, item 6), in chromium: from a contract-shaped answer of
// GET /api/v1/desk/day, every chart draws the route's figures (the canvas records what it drew) and
// has its table; then against a real server, the figures and the outcomes chart are the route's.
// Screenshots (VOUCH_CONSOLE_SHOTS, or test-results/console): desk-dashboard, desk-dashboard-real.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page, Route } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { seedReviews } from '../reviews/support.ts';
import { ADMIN_ID } from '../helpers/app.ts';
import { describeInBrowser, openTab, shots, signIn, until, type Server } from './browser.ts';

const DAY = 86_400_000;
const json = (route: Route, body: unknown) =>
  route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });

/** 30 days of a desk, every figure a function of the day's index so the test can say what was drawn. */
function deskDay() {
  const today = Math.floor(Date.now() / DAY) * DAY;
  const days = Array.from({ length: 30 }, (_, i) => ({
    day: new Date(today - (29 - i) * DAY).toISOString().slice(0, 10),
    approve: 100 + i,
    review: 10 + (i % 5),
    hold: i % 3,
    decline: 4 + (i % 4),
    fraud_caught: 2 + (i % 3),
    fraud_money_passed: i % 6 === 0 ? { EUR: 250.5 * (i + 1), USD: 40 } : {},
    legit_declined: i % 2,
    reviews_opened: 12 + (i % 5),
    reviews_resolved: 11 + (i % 4),
    resolved_late: i % 3,
    median_minutes_to_resolve: i % 7 === 0 ? null : 20 + i,
    open_at_end: 30 - i,
  }));
  return {
    since: `${days[0]!.day}T00:00:00.000Z`,
    until: new Date().toISOString(),
    days,
    backlog: { open: 7, overdue: 2, resolved: 420, median_minutes_to_resolve: 31.5, resolved_on_time_share: 0.9 },
    top_rules: [
      { rule_id: 'rul_1', name: 'first_trade_over_twice_the_tier_limit_by_card', hits: 212 },
      { rule_id: 'rul_2', name: 'velocity_burst', hits: 120 },
      { rule_id: 'rul_3', name: 'blocked_countries', hits: 14 },
    ],
    rules_truncated: false,
    analysts: [
      {
        id: 'usr_a1',
        name: 'Ada Lovelace',
        type: 'user',
        resolved: 180,
        median_minutes: 22,
        checked: 40,
        agreement: 0.925,
      },
      {
        id: 'key_x',
        name: 'night shift bot',
        type: 'client',
        resolved: 60,
        median_minutes: 5,
        checked: 0,
        agreement: null,
      },
    ],
  };
}

type Drawn = { labels: number; datasets: Array<{ label: string; data: Array<number | null> }> };

describeInBrowser('the desk on the dashboard, in chromium', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let cspErrors: string[] = [];

  before(async () => {
    ({ server, browser } = suite());
    ({ page, cspErrors } = await openTab(browser, server.base));
    await signIn(page, server.base);
  });

  /** What the chart named `name` drew, once it has drawn. */
  const drawn = (name: string) =>
    until(`the ${name} chart drawn`, async () => {
      const text = await page.locator(`[data-chart="${name}"] canvas`).getAttribute('data-drawn');
      return text ? (JSON.parse(text) as Drawn) : undefined;
    });
  const series = (d: Drawn) => Object.fromEntries(d.datasets.map((s) => [s.label, s.data]));

  test("every chart draws the route's figures, with a caption, a summary and a table", async () => {
    const body = deskDay();
    const asked: string[] = [];
    await page.route('**/api/v1/desk/day*', (route) => {
      asked.push(new URL(route.request().url()).search);
      return json(route, body);
    });
    await signIn(page, server.base);
    await page.getByRole('heading', { name: 'The desk' }).waitFor();
    const d = body.days;
    const outcomes = await drawn('outcomes');
    assert.equal(outcomes.labels, 30);
    assert.deepEqual(series(outcomes), {
      approve: d.map((x) => x.approve),
      review: d.map((x) => x.review),
      hold: d.map((x) => x.hold),
      decline: d.map((x) => x.decline),
    });
    assert.deepEqual(series(await drawn('reviews')), {
      'resolved by due time': d.map((x) => x.reviews_resolved - x.resolved_late),
      'resolved late': d.map((x) => x.resolved_late),
      'open at day’s end': d.map((x) => x.open_at_end),
      'median minutes to resolve': d.map((x) => x.median_minutes_to_resolve),
    });
    // EUR passed the most: drawn first; USD on choosing it
    assert.deepEqual(series(await drawn('fraud')), {
      'fraud caught': d.map((x) => x.fraud_caught),
      'legit declined': d.map((x) => x.legit_declined),
      // a point on the days some passed, none on the others
      'fraud money passed (EUR)': d.map((x) => (x.fraud_money_passed as Record<string, number>).EUR ?? null),
    });
    await page.locator('[data-chart="fraud"] select').selectOption('USD');
    await until('USD drawn', async () => (series(await drawn('fraud'))['fraud money passed (USD)'] ? true : undefined));
    const rules = await drawn('rules');
    assert.deepEqual(series(rules), { 'decisions matched': [212, 120, 14] });
    assert.equal(await page.locator('[data-chart="rules"] canvas').getAttribute('data-drawn-labels'), '3');
    assert.deepEqual(series(await drawn('analysts')), {
      resolved: [180, 60],
      'checked by later labels': [40, 0],
      agreed: [37, 0],
    });
    // each chart: a caption naming it, a canvas named by its summary, and its table
    for (const name of ['outcomes', 'reviews', 'fraud', 'rules', 'analysts']) {
      const figure = page.locator(`[data-chart="${name}"]`);
      assert.ok((await figure.locator('figcaption').innerText()).length > 10, name);
      assert.match((await figure.locator('canvas').getAttribute('aria-label')) ?? '', /\d/, name);
      assert.equal(await figure.locator('details table').count(), 1, name);
    }
    assert.match(
      (await page.locator('[data-chart="outcomes"] canvas').getAttribute('aria-label')) ?? '',
      new RegExp(`${d.reduce((n, x) => n + x.approve, 0).toLocaleString('en-GB')} approve`),
    );
    assert.equal(await page.locator('[data-figure="desk-open"]').innerText(), '7');
    assert.equal(await page.locator('[data-figure="desk-on-time"]').innerText(), '90%');
    await page.locator('[data-chart="analysts"] details summary').click();
    const row = page.locator('[data-chart="analysts"] tr[data-analyst="usr_a1"]');
    assert.match(await row.innerText(), /Ada Lovelace[\s\S]*person[\s\S]*180[\s\S]*22 min[\s\S]*40[\s\S]*92\.5%/);
    await page.locator('[data-chart="analysts"] details summary').click();
    await shots(page, 'desk-dashboard');
    // the window asks the route again
    await page.getByLabel('Window').selectOption('7');
    await until('days=7 asked', async () => (asked.includes('?days=7') ? true : undefined));
    assert.deepEqual(cspErrors, []);
    await page.unroute('**/api/v1/desk/day*');
  });

  test("against a real server: the figures and the outcomes chart are the route's", async () => {
    await page.unroute('**/api/v1/desk/day*');
    const admin = await server.token();
    await seedReviews(server.store.db, [
      { owner: ADMIN_ID, dueIn: -DAY / 24 },
      { owner: ADMIN_ID, outcome: 'hold' },
      { owner: ADMIN_ID, review: false },
    ]);
    const res = await server.inject({ method: 'GET', url: '/api/v1/desk/day?days=30', headers: bearer(admin) });
    assert.equal(res.statusCode, 200, res.body);
    const route = res.json() as ReturnType<typeof deskDay>;
    assert.equal(route.backlog.open, 2);
    await signIn(page, server.base);
    await until('the open reviews read', async () =>
      (await page.locator('[data-figure="desk-open"]').innerText()) === '2' ? true : undefined,
    );
    assert.equal(await page.locator('[data-figure="desk-overdue"]').innerText(), '1');
    const outcomes = await drawn('outcomes');
    assert.deepEqual(
      series(outcomes).review,
      route.days.map((x) => x.review),
    );
    assert.deepEqual(
      series(outcomes).hold,
      route.days.map((x) => x.hold),
    );
    assert.equal(route.days.at(-1)!.review, 2);
    assert.equal(route.days.at(-1)!.hold, 1);
    await drawn('reviews');
    await shots(page, 'desk-dashboard-real');
    assert.deepEqual(cspErrors, []);
  });
});
