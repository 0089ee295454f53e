// The entity page's ring (docs/api.md, "Rings") in chromium: drawn with Cytoscape.js from the graph
// endpoint, flagged accounts marked, hubs listed as not followed, each account a link to its page;
// a service-role client is not shown the section. Screenshots in test-results/console/.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { describeInBrowser, openTab, shots, signIn, until, type Server } from './browser.ts';

const [A, B, C, D] = ['a', 'b', 'c', 'd'].map((x) => hash(`console-ring-${x}`)) as [string, string, string, string];
const link = (e: string, type: string, h: string) =>
  event('identifier.linked', e, { linked_identifiers: [{ type, hash: hash(h) }] });

describeInBrowser('the entity page draws the ring', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let cspErrors: string[] = [];

  before(async () => {
    ({ server, browser } = suite());
    const admin = await server.token();
    await postEvents(server, admin, [
      link(A, 'device', 'ring-dev'),
      link(B, 'device', 'ring-dev'),
      link(B, 'bank_account', 'ring-bank'),
      link(C, 'bank_account', 'ring-bank'),
      link(A, 'phone', 'ring-phone'),
      link(D, 'phone', 'ring-phone'),
      link(A, 'other', 'ring-hub'),
      ...Array.from({ length: 30 }, (_, i) => link(hash(`console-ring-hub-${i}`), 'other', 'ring-hub')),
      event('fraud.reported', C, {}, 9 * 86_400_000),
      event('chargeback', D, { amount: 80, currency: 'USD' }),
    ]);
    ({ page, cspErrors } = await openTab(browser, server.base));
  });

  test('an admin sees the ring drawn and listed; a click on an account opens its page', async () => {
    await signIn(page, server.base, undefined, undefined, `/entities/${A}`);
    await page.getByRole('heading', { name: 'Ring' }).waitFor();
    const drawn = await until(
      'the drawing',
      async () => (await page.locator('.ring-drawing').getAttribute('data-nodes')) ?? undefined,
    );
    assert.equal(drawn, '5', 'A, B, C, D and one hub satellite');
    const rows = page.locator('table.ring tbody tr');
    assert.equal(await rows.count(), 3);
    const c = rows.filter({ has: page.locator(`a[title="${C}"]`) });
    assert.match(await c.innerText(), /2\s+fraud report/);
    assert.match(await rows.filter({ has: page.locator(`a[title="${D}"]`) }).innerText(), /1\s+chargeback/);
    assert.match(await page.getByText(/Hubs, not followed/).innerText(), /other shared by 31 accounts/);
    assert.deepEqual(cspErrors, []);
    await shots(page, '20-entity-ring');
    await page.locator(`table.ring a[title="${B}"]`).click();
    await page.waitForURL(new RegExp(`/console/entities/${B}$`));
    await page.getByRole('heading', { name: 'Ring' }).waitFor();
    // A's ring (three rows too) stays on screen until B's is read: wait for A listed in it
    await page.locator(`table.ring a[title="${A}"]`).waitFor();
    await until("B's ring: A and C one hop away, D two", async () =>
      (await page.locator('table.ring tbody tr').count()) === 3 ? true : undefined,
    );
  });

  test('a service-role client is not shown the ring', async () => {
    const svc = await server.client(['trust:read'], 'service');
    const { page: other } = await openTab(browser, server.base);
    await signIn(other, server.base, svc.id, svc.secret, `/entities/${A}`);
    await other.getByRole('heading', { name: /Aggregates/ }).waitFor();
    assert.equal(await other.getByRole('heading', { name: 'Ring' }).count(), 0);
    await other.close();
  });
});
