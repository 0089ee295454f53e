// A list's entries from a CSV file (issue 40, item 6), in chromium against a real server: a file with
// a `value` column previews its count (blank lines and repeats left out) and first rows, then goes
// in batches of 1,000; the batch the service refuses for one value goes again without it, and that
// row is listed with its line. A file of one value per line, into a country list, the same way.
// Screenshots (VOUCH_CONSOLE_SHOTS, or test-results/console): desk-csv-preview, desk-csv-done.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { describeInBrowser, openTab, shots, signIn, type Server } from './browser.ts';

describeInBrowser('a list from a CSV file, in chromium', (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin = '';
  let cspErrors: string[] = [];
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
  /** the values of every batch the page sent, in order, and the status each got */
  let sent: Array<{ values: string[]; status: number }> = [];

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    for (const [name, kind] of [
      ['desk_csv', 'string'],
      ['desk_countries', 'country'],
    ])
      assert.equal((await api('POST', '/api/v1/lists', { name, kind })).statusCode, 201);
    ({ page, cspErrors } = await openTab(browser, server.base));
    await page.route('**/api/v1/lists/*/entries', async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      const response = await route.fetch();
      sent.push({ values: (route.request().postDataJSON() as { values: string[] }).values, status: response.status() });
      await route.fulfill({ response });
    });
    await signIn(page, server.base);
  });

  const open = async (list: string) => {
    await page.evaluate(
      `history.pushState(null, '', '/console/rules/lists/${list}'); window.dispatchEvent(new PopStateEvent('popstate'))`,
    );
    // the list before stays on screen (its upload form too) until this one is read
    await page.getByRole('heading', { name: `List ${list}`, exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Add entries from a CSV file' }).waitFor();
  };

  test('a value column: previewed, sent 1,000 at a time, the refused row listed with its line', async () => {
    sent = [];
    await open('desk_csv');
    const values = Array.from({ length: 2300 }, (_, i) => `merchant-${String(i).padStart(4, '0')}`);
    // line 1 is the header; value i is on line i + 2. Value 1,500 holds a zero-width space; a blank
    // line and a repeat follow
    values[1500] = 'merchant-\u200b1500';
    const lines = ['reason,value', ...values.map((v, i) => `"from the ""audit"", ${i}",${v}`), '', ',merchant-0007'];
    await page.locator('input[name="csv"]').setInputFiles({
      name: 'merchants.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(lines.join('\r\n')),
    });
    const preview = page.locator('.csv-preview');
    await preview.waitFor();
    assert.equal(await preview.getAttribute('data-values'), '2300');
    assert.equal(await preview.getAttribute('data-batches'), '3');
    assert.match(
      await preview.getByRole('status').innerText(),
      /^2,300 values in merchants\.csv \(its value column\), 3 batches; 1 repeated left out\.$/,
    );
    assert.deepEqual(
      (await preview.locator('table.csv-first tbody tr').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()),
      ['2 merchant-0000', '3 merchant-0001', '4 merchant-0002', '5 merchant-0003', '6 merchant-0004'],
    );
    await shots(page, 'desk-csv-preview');
    await page.getByRole('button', { name: 'Add 2,300 values' }).click();
    const done = page.locator('[data-added]');
    await done.waitFor();
    // the second batch refused for its value 500, then sent without it
    assert.deepEqual(
      sent.map((s) => [s.values.length, s.status]),
      [
        [1000, 200],
        [1000, 400],
        [999, 200],
        [300, 200],
      ],
    );
    assert.deepEqual(sent[0]!.values.slice(0, 2), ['merchant-0000', 'merchant-0001']);
    assert.equal(sent[2]!.values.includes(values[1500]!), false);
    assert.equal(sent[3]!.values.at(-1), 'merchant-2299');
    assert.equal(await done.getAttribute('data-added'), '2299');
    assert.equal(await done.getAttribute('data-refused'), '1');
    assert.match(await done.locator('tr[data-line="1502"]').innerText(), /1502[\s\S]*zero-width/);
    await page.getByText('Added 2,299 entries from merchants.csv.').waitFor();
    assert.equal((await api('GET', '/api/v1/lists/desk_csv')).json().entries, 2299);
    await shots(page, 'desk-csv-done');
  });

  test('one value per line into a country list: the code it refuses listed with its line', async () => {
    sent = [];
    await open('desk_countries');
    await page.locator('input[name="csv"]').setInputFiles({
      name: 'countries.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('de\nFR\n\nXX\nit\n'),
    });
    await page.locator('.csv-preview[data-values="4"]').waitFor();
    await page.getByRole('button', { name: 'Add 4 values' }).click();
    const done = page.locator('[data-added]');
    await done.waitFor();
    assert.deepEqual(
      sent.map((s) => s.values),
      [
        ['de', 'FR', 'XX', 'it'],
        ['de', 'FR', 'it'],
      ],
    );
    assert.equal(await done.getAttribute('data-added'), '3');
    assert.match(await done.locator('tr[data-line="4"]').innerText(), /4[\s\S]*XX[\s\S]*ISO 3166-1/);
    const entries = (await api('GET', '/api/v1/lists/desk_countries/entries')).json().data as Array<{ value: string }>;
    assert.deepEqual(entries.map((e) => e.value).sort(), ['DE', 'FR', 'IT']);
    assert.deepEqual(cspErrors, []);
  });
});
