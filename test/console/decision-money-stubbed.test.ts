// Decisions by money on a decision's page and at the review desk (issue 39; docs/api.md, "Decisions
// by money"), against contract-shaped responses: why the outcome is what it is in money (the costs
// weighed, the probability of fraud), and what money alone chose when a matched rule decided
// instead. Screenshots: VOUCH_CONSOLE_SHOTS or test-results/console.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page, Route } from 'playwright-core';
import { ADMIN_ID } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { describeInBrowser, openTab, shots, signIn, type Server } from './browser.ts';

const NOW = new Date().toISOString();
const json = (route: Route, status: number, body: unknown) =>
  route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });

describeInBrowser("console: a decision's reasons in money, against contract-shaped responses", (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let cspErrors: string[] = [];
  const go = (path: string) =>
    page.evaluate(
      `history.pushState(null, '', ${JSON.stringify(`/console${path}`)}); window.dispatchEvent(new PopStateEvent('popstate'))`,
    );

  before(async () => {
    ({ server, browser } = suite());
    ({ page, cspErrors } = await openTab(browser, server.base));
    await signIn(page, server.base);
  });

  /** A stored score decision with the money members, as GET /api/v1/decisions/{id} answers. */
  function decision(id: string, outcome: string, costs: object, p: number, rules: object[] = []) {
    return {
      id,
      kind: 'score',
      principal_id: ADMIN_ID,
      subject_id: hash(id),
      request_digest: 'x',
      policy_version: 'p2-cost',
      created_at: NOW,
      trade_id: 'trade-77',
      features: null,
      label: null,
      request: { amount: 1600, currency: 'USD' },
      outcome,
      rules,
      shadow_rules: [],
      result: {
        decision_id: id,
        entity_id: hash(id),
        score: 71,
        risk_level: 'high',
        safe_amount: 420,
        outcome,
        rules,
        fraud_probability: p,
        expected_costs: { ...costs, currency: 'USD' },
        policy_version: 'p2-cost',
        scored_at: NOW,
        cached: false,
        signals: [{ name: 'chargebacks', value: 1, weight: 2.2, description: '1 chargeback' }],
      },
    };
  }
  const RULE = { id: 'rule_1', name: 'burst_of_new_payees', version: 2, action: 'decline', reads: { payees_24h: 7 } };

  test('a decision says why in money, and what a rule decided instead', async () => {
    const decisions = {
      dec_money_decline: decision('dec_money_decline', 'decline', { approve: 412, review: 24.1, decline: 14 }, 0.2575),
      dec_money_review: decision('dec_money_review', 'review', { approve: 41.2, review: 5.06, decline: 19.59 }, 0.0412),
      dec_money_short: decision('dec_money_short', 'approve', { approve: 6, review: 5.5, decline: 30 }, 0.004),
      dec_money_rule: decision('dec_money_rule', 'decline', { approve: 3.1, review: 5.2, decline: 19.8 }, 0.0019, [
        RULE,
      ]),
    };
    await page.route(
      (u) => u.pathname.startsWith('/api/v1/decisions/dec_money_'),
      (route) => {
        const id = new URL(route.request().url()).pathname.split('/').pop()! as keyof typeof decisions;
        return json(route, 200, decisions[id]);
      },
    );
    const line = page.locator('.money-why .money-line');
    await go('/decisions/dec_money_decline');
    await page.getByRole('heading', { name: 'Why in money' }).waitFor();
    assert.equal(await line.innerText(), 'Declined: expected loss 412.00 USD if approved > 14.00 USD to turn away.');
    assert.match(await page.locator('.money-why').innerText(), /Probability of fraud 25\.8%/);
    await shots(page, '72-decision-money');

    await go('/decisions/dec_money_review');
    await page.getByText('Review: 5.06 USD').waitFor();
    assert.equal(
      await line.innerText(),
      'Review: 5.06 USD for a review saves more than approving (41.20) or declining (19.59).',
    );
    assert.match(await page.locator('.money-why').innerText(), /Probability of fraud 4\.1%/);

    await go('/decisions/dec_money_rule');
    await page.getByText('By money the policy would approve').waitFor();
    assert.equal(
      await line.innerText(),
      'By money the policy would approve: expected loss 3.10 USD if approved < 19.80 USD to turn away.',
    );
    assert.equal(
      await page.locator('.money-why .money-rule').innerText(),
      'Rule burst_of_new_payees (decline) decided the outcome instead: decline.',
    );
    assert.match(await page.locator('.money-why').innerText(), /Probability of fraud 0\.19%/);
    await shots(page, '73-decision-money-rule');

    // a review cheapest, yet short of the least saving the policy asks of one: the outcome says so
    await go('/decisions/dec_money_short');
    await page.getByText('would save only').waitFor();
    assert.equal(
      await line.innerText(),
      'Approved: expected loss 6.00 USD if approved < 30.00 USD to turn away; a review (5.50 USD) would save only 0.50 USD, less than the policy asks of one.',
    );
    assert.equal(await page.locator('.money-why .money-rule').count(), 0);
    await page.unrouteAll();
  });

  test('the review desk shows the same reasons beside the decision', async () => {
    const d = decision('dec_money_review', 'review', { approve: 41.2, review: 5.06, decline: 19.59 }, 0.0412);
    const review = {
      id: 'rev_money',
      decision_id: d.id,
      entity_id: d.result.entity_id,
      owner_client_id: ADMIN_ID,
      status: 'open',
      outcome: 'review',
      reason: 'outcome',
      sample_rate: null,
      score: 71,
      risk_level: 'high',
      amount: 1600,
      currency: 'USD',
      rules: [],
      assignee: null,
      claimed_at: null,
      claim_expires_at: null,
      opened_at: NOW,
      due_at: new Date(Date.now() + 3600_000).toISOString(),
      overdue: false,
      resolution: null,
      resolved_at: null,
      resolved_by: null,
      label: null,
      note: null,
      added_to_list: null,
      decision: { ...d, result: d.result },
      entity_labels: { fraud: 0, legit: 2 },
      other_open_reviews: [],
    };
    await page.route(
      (u) => u.pathname === '/api/v1/reviews/rev_money',
      (route) => json(route, 200, review),
    );
    await go('/reviews/rev_money');
    await page.getByRole('heading', { name: 'Why in money' }).waitFor();
    assert.equal(
      await page.locator('.money-why .money-line').innerText(),
      'Review: 5.06 USD for a review saves more than approving (41.20) or declining (19.59).',
    );
    await shots(page, '74-review-money');
    await page.unrouteAll();
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
