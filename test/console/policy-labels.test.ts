// The Policies page after issue 38 (item 11), against a real fit: the fit report shows its labels by
// source (`label_sources`: api, event, review, assumed) as the HTML report does, and the line on
// review labels says something true before a fit (so far, none fitted), right after it (none since
// that fit, which learned from the desk's labels) and after one more verdict. Screenshots
// (VOUCH_CONSOLE_SHOTS, or test-results/console): 68-policy-label-sources, 69-policy-review-labels.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { event, hash, postEvents, tradeHistory } from '../helpers/trust.ts';
import { describeInBrowser, nav as navIn, openTab, shots, signIn, until, type Server } from './browser.ts';

const FRAUD = Array.from({ length: 32 }, (_, i) => hash(`policy-labels-fraud-${i}`));
const LEGIT = Array.from({ length: 32 }, (_, i) => hash(`policy-labels-legit-${i}`));
// traders whose big trade a rule sends to review, and the desk declines
const REVIEWED = Array.from({ length: 6 }, (_, i) => hash(`policy-labels-reviewed-${i}`));

describeInBrowser('operator console: a fit report by label source, and review labels since the last fit', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let cspErrors: string[] = [];
  const nav = (name: string) => navIn(page, name);
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
  const scoreAndLabel = async (entity: string, label: 'fraud' | 'legit') => {
    const res = await api('POST', '/api/v1/trust/score', { entity_id: entity, amount: 80, currency: 'USD' });
    assert.equal(res.statusCode, 200, res.body);
    const labelled = await api('POST', `/api/v1/decisions/${res.json().decision_id}/label`, { label });
    assert.equal(labelled.statusCode, 200, labelled.body);
  };
  /** A big trade of `entity`: the rule opens a review, which the desk declines (a review label, fraud). */
  const decline = async (entity: string) => {
    const res = await api('POST', '/api/v1/trust/score', { entity_id: entity, amount: 1500, currency: 'USD' });
    assert.equal(res.json().outcome, 'review', res.body);
    const [review] = (await api('GET', `/api/v1/reviews?entity_id=${entity}`)).json().data as { id: string }[];
    const resolved = await api('POST', `/api/v1/reviews/${review!.id}/resolve`, { resolution: 'decline' });
    assert.equal(resolved.statusCode, 200, resolved.body);
  };
  const note = () => page.locator('[data-review-labels]');
  const noteSays = async (n: number) => {
    await until(`the line to count ${n}`, async () =>
      (await note().getAttribute('data-review-labels')) === String(n) ? true : undefined,
    );
    return note().innerText();
  };

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    await postEvents(server, admin, [
      ...FRAUD.flatMap((e) => [...tradeHistory(e, 2, 10), event('chargeback', e, { amount: 80, currency: 'USD' })]),
      ...LEGIT.flatMap((e) => tradeHistory(e, 10, 60)),
      ...REVIEWED.flatMap((e) => tradeHistory(e, 12, 60, 300)),
    ]);
    const rule = { name: 'big_trade', condition: 'amount > 1000.0', action: 'review', status: 'active' };
    assert.equal((await api('POST', '/api/v1/rules', rule)).statusCode, 201);
    for (const e of FRAUD) await scoreAndLabel(e, 'fraud');
    for (const e of LEGIT) await scoreAndLabel(e, 'legit');
    for (const e of REVIEWED.slice(0, 5)) await decline(e);
    ({ page, cspErrors } = await openTab(browser, server.base));
    await signIn(page, server.base);
  });

  test('before any fit: the review labels so far, and that no policy was fitted', async () => {
    await nav('Policies').click();
    assert.equal(
      await noteSays(5),
      '5 review labels so far, and no policy was fitted yet: a first fit learns from them.',
    );
  });

  test("a fit's report counts its labels by source; right after it the line says none since that fit, which had the desk's 5", async () => {
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    const message = page.getByText(/^Fitted policy \S+ stored as a candidate/);
    await message.waitFor({ timeout: 60_000 });
    const version = /Fitted policy (\S+) stored/.exec(await message.innerText())![1]!;
    const sources = page.locator('dl.label-sources');
    await sources.waitFor();
    const count = (source: string) => sources.locator(`dd[data-source="${source}"]`).innerText();
    assert.deepEqual(
      [await count('api'), await count('event'), await count('review'), await count('assumed')],
      ['64', '0', '5', '0'],
    );
    assert.match(await sources.innerText(), /From reviews\s+5\s+a reviewer's verdict/);
    // the same figures as the stored report
    const stored = (await api('GET', `/api/v1/policies/${version}`)).json().report.label_sources;
    assert.deepEqual(stored, { api: 64, event: 0, review: 5, assumed: 0 });
    const text = await noteSays(0);
    assert.match(text, new RegExp(`^No review label since the last fit, ${version} on .+\\. `));
    assert.match(text, /That fit learned from 5 review labels\.$/);
    await shots(page, '68-policy-label-sources');
  });

  test('one more verdict after the fit: the line counts it as one the next fit learns from', async () => {
    await decline(REVIEWED[5]!);
    await nav('Decisions').click();
    await nav('Policies').click();
    const text = await noteSays(1);
    assert.match(
      text,
      /^1 review label since the last fit, \S+ on .+: the next fit learns from it, the last one did not\./,
    );
    assert.match(text, /That fit learned from 5 review labels\.$/);
    await shots(page, '69-policy-review-labels');
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
