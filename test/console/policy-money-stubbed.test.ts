// Decisions by money on the Policies page (issue 39; docs/api.md, "Decisions by money"), against
// contract-shaped responses: a cost fit's report shows base beside candidate and draws the frontier,
// whose point (clicked, or chosen from the list) derives a candidate with that point's economics; the
// economics form derives one too, its field errors beside their fields. A decision's reasons in money:
// decision-money-stubbed.test.ts. Screenshots: VOUCH_CONSOLE_SHOTS or test-results/console.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import { ADMIN_ID } from '../helpers/app.ts';
import {
  describeInBrowser,
  NARROW,
  SHOTS,
  WIDE,
  nav as navIn,
  openTab,
  shots,
  signIn,
  until,
  type Server,
} from './browser.ts';

const NOW = new Date().toISOString();
const M = { roc_auc: 0.81, average_precision: 0.62, brier: 0.12, calibration_error: 0.04 };
const json = (route: Route, status: number, body: unknown) =>
  route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
const go = (page: Page, path: string) =>
  page.evaluate(
    `history.pushState(null, '', ${JSON.stringify(`/console${path}`)}); window.dispatchEvent(new PopStateEvent('popstate'))`,
  );

interface Outcomes {
  decisions: number;
  stopped_fraud: number;
  legit_friction: number;
  legit_not_approved: number;
  legit_declined: number;
  fraud_money_passed: number;
  reviews_per_1k: number;
  decline_precision: number;
  expected_cost: number;
  currency: string;
}
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
/** A desk's figures at decline-cost scale k and `reviews` a day of 4,000 decisions: dearer declines, fewer of them. */
function outcomes(k: number, reviews: number | null): Outcomes {
  const room = reviews === null ? 400 : reviews;
  return {
    decisions: 2400,
    stopped_fraud: r4(0.8 - 0.05 * Math.log2(k) + room / 4000),
    legit_friction: r4((0.035 / Math.sqrt(k)) * (1 - room / 1200)),
    legit_not_approved: r4((0.05 / Math.sqrt(k)) * (1 + room / 2000)),
    legit_declined: r4((0.03 / Math.sqrt(k)) * (1 - room / 1000)),
    fraud_money_passed: r4(0.12 + 0.03 * Math.log2(k) - room / 8000),
    reviews_per_1k: Math.round((room / 4) * 100) / 100,
    decline_precision: r4(0.55 + 0.08 * Math.log2(k)),
    expected_cost: Math.round((4.2 + Math.abs(Math.log2(k)) * 0.6 - room / 1000) * 100) / 100,
    currency: 'USD',
  };
}
const SCALES = [0.25, 0.5, 1, 2, 4];
function frontier(capacities: Array<number | null>) {
  return SCALES.flatMap((k) =>
    capacities.map((reviews) => ({
      decline_cost: { rate: r4(0.01 * k), fixed: 20 * k },
      reviews_per_day: reviews,
      review_gain_min: reviews === null ? 0 : Math.round((600 / (reviews + 10)) * 100) / 100,
      outcomes: outcomes(k, reviews),
    })),
  );
}
const ECONOMICS = {
  currency: 'USD',
  lossRate: 1,
  declineCost: { rate: 0.01, fixed: 20 },
  reviewCost: 3,
  reviewerAccuracy: 0.93,
  reviewsPerDay: 150,
  reviewGainMin: 3.75,
};
/** Without a stated capacity the fit tries reviews per 1,000 decisions, and no limit. */
const UNCAPPED = { ...ECONOMICS, reviewsPerDay: undefined, reviewGainMin: 0 };
const base = {
  ...outcomes(1, 0),
  stopped_fraud: 0.71,
  legit_friction: 0.052,
  legit_declined: 0.031,
  fraud_money_passed: 0.21,
  expected_cost: 6.85,
  reviews_per_1k: 61.5,
  decline_precision: 0.48,
};
function costReport(economics: typeof ECONOMICS | typeof UNCAPPED, capacities: Array<number | null>) {
  return {
    labels: { fraud: 310, legit: 5200 },
    holdout: { decisions: 2400, fraud: 130 },
    metrics: { base: M, candidate: { ...M, roc_auc: 0.87 } },
    weights: { chargebacks: { base: 2, candidate: 1.6 }, new_account: { base: 1, candidate: 1.4 } },
    objective: 'cost',
    economics: JSON.parse(JSON.stringify(economics)),
    capacity: {
      reviews_per_day: economics.reviewsPerDay ?? null,
      decisions_per_day: 4000,
      review_share: economics.reviewsPerDay ? economics.reviewsPerDay / 4000 : null,
    },
    reviewer_accuracy: { reviews: 120, measured: 0.93, used: 0.93 },
    outcomes: { base, candidate: outcomes(1, economics.reviewsPerDay ?? null) },
    frontier: frontier(capacities),
  };
}
const record = (version: string, status: string, source: string, parent: string | null) => ({
  version,
  status,
  source,
  parent_version: parent,
  created_at: NOW,
  created_by: ADMIN_ID,
  summary: `${source} policy`,
});

describeInBrowser('console: policies decided by money, against contract-shaped responses', (suite) => {
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

  /** The policies: a hand-set active one, two cost fits; derived candidates appear as they are posted. */
  async function stubPolicies(): Promise<Array<{ from: string; body: { version: string; changes: unknown } }>> {
    const derived: Array<{ from: string; body: { version: string; changes: { economics: object } } }> = [];
    const details: Record<string, { document: object; report: unknown }> = {
      p1: { document: { version: 'p1' }, report: null },
      'p2-cost': {
        document: { version: 'p2-cost', economics: ECONOMICS },
        report: costReport(ECONOMICS, [0, 75, 150, 300]),
      },
      'p3-cost': {
        document: { version: 'p3-cost', economics: UNCAPPED },
        report: costReport(UNCAPPED, [0, 100, 200, 400, null]),
      },
    };
    const list = [
      record('p1', 'active', 'builtin', null),
      record('p2-cost', 'candidate', 'fit', 'p1'),
      record('p3-cost', 'candidate', 'fit', 'p1'),
    ];
    await page.route(
      (url) => url.pathname.startsWith('/api/v1/policies'),
      async (route) => {
        const { pathname } = new URL(route.request().url());
        const method = route.request().method();
        if (pathname === '/api/v1/policies' && method === 'GET')
          return json(route, 200, { data: [...list].reverse(), next_cursor: null });
        const derive = /^\/api\/v1\/policies\/([^/]+)\/derive$/.exec(pathname);
        if (derive && method === 'POST') {
          const from = decodeURIComponent(derive[1]!);
          const body = route.request().postDataJSON() as (typeof derived)[number]['body'];
          derived.push({ from, body });
          const e = body.changes.economics as { reviewerAccuracy?: number };
          if (typeof e.reviewerAccuracy === 'number' && e.reviewerAccuracy < 0.5)
            return json(route, 400, {
              code: 'validation_failed',
              detail: 'The derived policy document is invalid.',
              errors: [{ field: 'changes.economics.reviewerAccuracy', message: 'must be >= 0.5' }],
            });
          if (details[body.version])
            return json(route, 409, { code: 'conflict', detail: `policy version ${body.version} already exists` });
          const parent = details[from]!.document as { economics?: object };
          // a JSON merge patch of the economics, as the service applies it (null removes a member)
          const economics = Object.fromEntries(
            Object.entries({ ...(parent.economics ?? {}), ...body.changes.economics }).filter(([, v]) => v !== null),
          );
          details[body.version] = { document: { version: body.version, economics }, report: null };
          list.push(record(body.version, 'candidate', 'derived', from));
          return json(route, 201, { ...list.at(-1), ...details[body.version] });
        }
        const one = /^\/api\/v1\/policies\/([^/]+)$/.exec(pathname);
        const detail = one && details[decodeURIComponent(one[1]!)];
        if (detail && method === 'GET')
          return json(route, 200, { ...list.find((p) => p.version === decodeURIComponent(one[1]!)), ...detail });
        return json(route, 404, { code: 'not_found', detail: 'No such policy.' });
      },
    );
    return derived;
  }

  /** Where the chart drew each frontier point: [frontier index, x, y] in CSS pixels of the canvas. */
  const drawnPoints = (page: Page) =>
    until('the frontier drawn', async () => {
      const raw = await page.locator('.frontier canvas').getAttribute('data-points');
      const points = raw ? (JSON.parse(raw) as Array<[number, number, number]>) : [];
      return points.length > 0 ? points : undefined;
    });

  test("a cost fit's report: base beside candidate, the frontier drawn; a clicked point derives a candidate", async () => {
    const derived = await stubPolicies();
    await nav('Policies').click();
    await page.getByRole('button', { name: 'Report of p2-cost' }).click();
    await page.getByRole('heading', { name: 'Decisions by money' }).waitFor();
    const row = (name: string) => page.locator('table.outcomes tbody tr').filter({ hasText: name });
    assert.equal(await row('Fraud stopped').locator('td[data-label="Base"]').innerText(), '71%');
    assert.equal(await row('Fraud stopped').locator('td[data-label="Candidate"]').innerText(), '83.8%');
    assert.equal(await row('Fraud stopped').locator('td[data-label="Change"]').innerText(), '+12.75 pts');
    assert.equal(await row('Expected cost / decision').locator('td[data-label="Candidate"]').innerText(), '4.05 USD');
    for (const name of ['Honest friction', 'Honest declined', 'Fraud money passed', 'Reviews per 1,000'])
      assert.equal(await row(name).count(), 1, name);
    assert.equal(await row('Decline precision').count(), 1);
    assert.match(await page.locator('.money-report').innerText(), /Reviewer accuracy used: 93% \(measured 93% on 120/);

    const report = costReport(ECONOMICS, [0, 75, 150, 300]);
    const points = await drawnPoints(page);
    assert.deepEqual(
      points.map((p) => p[0]).sort((a, b) => a - b),
      [...report.frontier.keys()],
      'every point drawn',
    );
    const ownPoint = report.frontier.findIndex((p) => p.decline_cost.fixed === 20 && p.reviews_per_day === 150);
    assert.match(
      (await page.locator('.frontier canvas').getAttribute('aria-label')) ?? '',
      /this candidate stops 83\.8% of fraud at 3\.1% honest friction/,
    );
    assert.match(
      await page.locator(`#frontier-point option[value="${ownPoint}"]`).innerText(),
      /1%\+20 USD, 150 reviews a day: stops 83\.8%, friction 3\.1% \(this candidate\)/,
    );

    // a click on the point of twice the decline cost at 300 reviews a day chooses it
    const target = report.frontier.findIndex((p) => p.decline_cost.fixed === 40 && p.reviews_per_day === 300);
    const [, x, y] = points.find((p) => p[0] === target)!;
    // the mouse reaches only what the window shows
    await page.locator('.frontier canvas').scrollIntoViewIfNeeded();
    const box = (await page.locator('.frontier canvas').boundingBox())!;
    await page.mouse.move(box.x + x, box.y + y);
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    mkdirSync(SHOTS, { recursive: true });
    await page.locator('.frontier-figure').screenshot({ path: join(SHOTS, '70-policy-frontier-tooltip.png') });
    await page.mouse.click(box.x + x, box.y + y);
    await page.getByText('decline cost 2% of the amount + 40.00 USD; 300 reviews a day').waitFor();
    assert.equal(await page.locator('#frontier-point').inputValue(), String(target));
    assert.match(await page.locator('.frontier-point').innerText(), /least a review must save 1\.94 USD/);
    await shots(page, '70-policy-frontier');
    mkdirSync(SHOTS, { recursive: true });
    // the chart and its list alone, at both widths: the full page at 390 px is too long to read them
    for (const [size, name] of [
      [WIDE, 'wide'],
      [NARROW, '390'],
    ] as const) {
      await page.setViewportSize(size);
      // Chart.js redraws on a resize it observes: wait until the canvas fills its box again
      await until('the chart redrawn at the new width', async () =>
        (await page.evaluate(
          "(() => { const c = document.querySelector('.frontier canvas'); return Math.abs(c.clientWidth - c.parentElement.clientWidth) < 2; })()",
        ))
          ? true
          : undefined,
      );
      await page.locator('.frontier').screenshot({ path: join(SHOTS, `70-policy-frontier-chart-${name}.png`) });
    }
    await page.setViewportSize(WIDE);

    await page.getByLabel('New version').fill('p2-cost-point');
    await page.getByRole('button', { name: 'Use this point' }).click();
    await page.getByRole('heading', { name: 'Economics of p2-cost-point' }).waitFor();
    assert.deepEqual(derived, [
      {
        from: 'p2-cost',
        body: {
          version: 'p2-cost-point',
          changes: {
            economics: {
              ...ECONOMICS,
              declineCost: { rate: 0.02, fixed: 40 },
              reviewsPerDay: 300,
              reviewGainMin: 1.94,
            },
          },
        },
      },
    ]);
    assert.equal(new URL(page.url()).pathname, '/console/policies/p2-cost-point');
    const panel = page.locator('section.economics');
    await panel.locator('.economics-words').waitFor();
    assert.match(await panel.innerText(), /Candidate p2-cost-point derived from p2-cost at the frontier point chosen/);
    assert.match(await panel.innerText(), /Turning an honest trade away costs 2% of the amount \+ 40\.00 USD/);
    assert.match(await panel.innerText(), /Capacity: 300 reviews a day/);
    await page.getByRole('cell', { name: 'p2-cost-point', exact: true }).waitFor();

    // from the keyboard: the list beside the chart; a point without a review limit omits reviewsPerDay
    await page.getByRole('button', { name: 'Report of p3-cost' }).click();
    await page.getByRole('heading', { name: 'Decisions by money' }).waitFor();
    await drawnPoints(page);
    const uncapped = costReport(UNCAPPED, [0, 100, 200, 400, null]);
    const free = uncapped.frontier.findIndex((p) => p.decline_cost.fixed === 10 && p.reviews_per_day === null);
    await page.locator('#frontier-point').focus();
    await page.locator('#frontier-point').selectOption(String(free));
    await page.getByText('decline cost 0.5% of the amount + 10.00 USD; no limit on reviews').waitFor();
    await page.getByLabel('New version').fill('p3-cost-free');
    await page.getByLabel('New version').press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Economics of p3-cost-free' }).waitFor();
    const { reviewsPerDay: _none, ...rest } = UNCAPPED;
    assert.deepEqual(derived[1], {
      from: 'p3-cost',
      body: {
        version: 'p3-cost-free',
        changes: { economics: { ...rest, declineCost: { rate: 0.005, fixed: 10 }, reviewGainMin: 0 } },
      },
    });
    await page.unrouteAll();
  });

  test('the economics form derives a candidate; a refused figure is named beside its field', async () => {
    const derived = await stubPolicies();
    // the previous test's derive reloads the list as it ends: leave the page and come back, so the
    // list is read again from this test's stubs whatever that reload answered
    await go(page, '/rules');
    await page.getByRole('heading', { name: 'Rules' }).first().waitFor();
    await go(page, '/policies');
    await page.getByRole('button', { name: 'Economics of p1' }).click();
    await page.getByRole('heading', { name: 'Economics of p1' }).waitFor();
    await page.getByText('This policy has no economics').waitFor();
    await page.getByRole('button', { name: 'Add economics' }).click();
    await page.getByLabel('Currency').fill('eur');
    await page.getByLabel('Loss rate (optional)').fill('');
    await page.getByLabel('Reviewer accuracy (optional)').fill('0.3');
    await page.getByLabel('Reviews per day (optional)').fill('80');
    await page.getByLabel('New version').fill('p1-money');
    await page.getByRole('button', { name: 'Derive a candidate with these economics' }).click();
    const accuracy = page.getByLabel('Reviewer accuracy (optional)');
    await page.locator('#econ-reviewerAccuracy-error').waitFor();
    assert.equal(await page.locator('#econ-reviewerAccuracy-error').innerText(), 'must be >= 0.5');
    assert.equal(await accuracy.getAttribute('aria-invalid'), 'true');
    assert.match((await accuracy.getAttribute('aria-describedby')) ?? '', /econ-reviewerAccuracy-error/);
    await shots(page, '71-policy-economics-form');

    await accuracy.fill('0.9');
    await page.getByRole('button', { name: 'Derive a candidate with these economics' }).click();
    await page.getByRole('heading', { name: 'Economics of p1-money' }).waitFor();
    assert.equal(derived.length, 2);
    assert.deepEqual(derived[1], {
      from: 'p1',
      body: {
        version: 'p1-money',
        changes: {
          economics: {
            currency: 'EUR',
            lossRate: null,
            declineCost: { rate: 0.01, fixed: 20 },
            reviewCost: 3,
            reviewerAccuracy: 0.9,
            reviewsPerDay: 80,
          },
        },
      },
    });
    const panel = page.locator('section.economics');
    await panel.locator('.economics-words').waitFor();
    assert.match(await panel.innerText(), /Candidate p1-money derived from p1 with these economics/);
    assert.match(await panel.innerText(), /An approved fraud loses 100% of its amount/);
    assert.match(await panel.innerText(), /reviewers are right 90% of the time/);

    // a version that exists already: said beside the version field
    await page.getByRole('button', { name: 'Edit economics' }).click();
    await page.getByLabel('New version').fill('p2-cost');
    await page.getByRole('button', { name: 'Derive a candidate with these economics' }).click();
    await page.locator('#econ-version-error').getByText('policy version p2-cost already exists').waitFor();
    await page.getByRole('button', { name: 'Close economics' }).click();
    await page.getByRole('heading', { name: 'Economics of p1-money' }).waitFor({ state: 'detached' });
    await page.unrouteAll();
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
