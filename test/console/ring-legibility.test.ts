// The entity page's ring, legible (issue 29, item 21): edge labels at a readable size on screen,
// no link drawn across an account's label (the flagged ones included), a legend, and a drawing
// that fills its box rather than a third of it — at 1400 px and at 390 px wide.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { describeInBrowser, NARROW, WIDE, openTab, shot, signIn, until, type Server } from './browser.ts';

const [A, B, C, D, E] = ['a', 'b', 'c', 'd', 'e'].map((x) => hash(`legible-ring-${x}`)) as [
  string,
  string,
  string,
  string,
  string,
];
const link = (e: string, type: string, h: string) =>
  event('identifier.linked', e, { linked_identifiers: [{ type, hash: hash(h) }] });

describeInBrowser('the ring drawing is legible', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ({ server, browser } = suite());
    const admin = await server.token();
    // A shares a device with B and a phone with D; B a bank account with C and an email with E;
    // C (two hops out) and D are flagged; a hub of 30 accounts is not followed
    await postEvents(server, admin, [
      link(A, 'device', 'lr-dev'),
      link(B, 'device', 'lr-dev'),
      link(B, 'bank_account', 'lr-bank'),
      link(C, 'bank_account', 'lr-bank'),
      link(B, 'email', 'lr-mail'),
      link(E, 'email', 'lr-mail'),
      link(A, 'phone', 'lr-phone'),
      link(D, 'phone', 'lr-phone'),
      link(A, 'other', 'lr-hub'),
      ...Array.from({ length: 30 }, (_, i) => link(hash(`legible-ring-hub-${i}`), 'other', 'lr-hub')),
      event('fraud.reported', C, {}, 9 * 86_400_000),
      event('chargeback', D, { amount: 80, currency: 'USD' }),
    ]);
    ({ page } = await openTab(browser, server.base));
    await signIn(page, server.base, undefined, undefined, `/entities/${A}`);
    await page.getByRole('heading', { name: 'Ring' }).waitFor();
  });

  for (const size of [WIDE, NARROW]) {
    test(`at ${size.width} px: edge labels of at least 11 px, no link across a label and no label over another, most of the box used, a legend`, async () => {
      await page.setViewportSize(size);
      const drawing = page.locator('.ring-drawing');
      await until('the drawing measured at this size', async () => {
        const width = await drawing.evaluate((d) => d.clientWidth);
        return (await drawing.getAttribute('data-fill')) !== null &&
          (await drawing.getAttribute('data-width')) === String(width)
          ? true
          : undefined;
      });
      await shot(page, `70-ring-legible-${size.width}`);
      const figures = await drawing.evaluate((d) => ({
        font: Number(d.dataset.edgeFontPx),
        fill: Number(d.dataset.fill),
        crossings: Number(d.dataset.crossings),
        overlaps: Number(d.dataset.overlaps),
        nodes: Number(d.dataset.nodes),
      }));
      assert.equal(figures.nodes, 6, 'A, B, C, D, E and the hub');
      assert.ok(figures.font >= 11, `edge labels drawn at ${figures.font}px`);
      assert.equal(figures.crossings, 0, "no link crosses an account's label");
      assert.equal(figures.overlaps, 0, 'no two labels overlap');
      assert.ok(figures.fill >= 0.5, `the drawing covers ${Math.round(figures.fill * 100)} % of its box`);
      const legend = await page.getByRole('list', { name: 'Legend' }).innerText();
      for (const item of ['this entity', 'linked account', 'flagged', 'hub', 'shared identifier'])
        assert.match(legend, new RegExp(item));
    });
  }
});
