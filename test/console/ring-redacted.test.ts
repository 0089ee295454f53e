// The ring of a non-admin (docs/api.md, "Rings"): another client's account keeps its place in the
// graph as `redacted-<n>`, and the console shows it without a link to a page that cannot exist.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { describeInBrowser, WIDE, openTab, shot, signIn, type Server } from './browser.ts';

const [OWN, OTHER] = ['own', 'other'].map((x) => hash(`redacted-ring-${x}`)) as [string, string];
const link = (e: string, h: string) =>
  event('identifier.linked', e, { linked_identifiers: [{ type: 'device', hash: hash(h) }] });

describeInBrowser("a non-admin's ring in the console", (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let operator: { id: string; secret: string };

  before(async () => {
    ({ server, browser } = suite());
    operator = await server.client(['trust:read', 'trust:write'], 'operator');
    const res = await server.inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: operator.id, client_secret: operator.secret },
    });
    const own = res.json().access_token as string;
    // the operator's client sent OWN; the admin's client sent OTHER, which shares OWN's device
    await postEvents(server, own, [link(OWN, 'rr-device')]);
    await postEvents(server, await server.token(), [link(OTHER, 'rr-device')]);
    ({ page } = await openTab(browser, server.base));
    await page.setViewportSize(WIDE);
    await signIn(page, server.base, operator.id, operator.secret, `/entities/${OWN}`);
    await page.getByRole('heading', { name: 'Ring' }).waitFor();
  });

  test("another client's account is listed as redacted, with no link and no raw id", async () => {
    const row = page.locator('table.ring tbody tr');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    const cell = row.first().locator('td').first();
    assert.match(await cell.innerText(), /^redacted-\d+$/);
    assert.equal(await cell.locator('a').count(), 0, 'a redacted account is not a link');
    assert.ok(!(await page.content()).includes(OTHER), "the other client's entity id is nowhere on the page");
    await shot(page, '71-ring-redacted-1400');
  });
});
