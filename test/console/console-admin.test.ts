// The operator console's administration pages in chromium against a real server and store:
// policies (summary, report, shadow, activation), keys and webhooks (deliveries with their last
// response). Screenshots at 1400×900 and 390 px wide go to test-results/console.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { hash, postEvents, tradeHistory } from '../helpers/trust.ts';
import type { Config } from '../../src/config/env.ts';
import { describeInBrowser, nav as navIn, openTab, shots, signIn, until, type Server } from './browser.ts';

const HOOK_URL = 'http://127.0.0.1:9/vouch-hook'; // the discard port: nothing listens, so the connection is refused

// VOUCH_WEBHOOK_ALLOW_PRIVATE=1, so a loopback URL can be registered without DNS
const SERVER = { webhookAllowPrivate: true } as Partial<Config>;

describeInBrowser('operator console administration pages in chromium', { server: SERVER }, (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let cspErrors: string[] = [];

  const api = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    server.inject({ method, url, headers: bearer(admin), ...(payload ? { payload: payload as object } : {}) });
  const nav = (name: string) => navIn(page, name);

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    await postEvents(server, admin, [
      ...tradeHistory(hash('admin-buyer'), 3, 10),
      ...tradeHistory(hash('admin-seller'), 5, 40),
    ]);
    ({ page, cspErrors } = await openTab(browser, server.base));
    await signIn(page, server.base);
  });

  test('Policies: each version with its summary; no report download for an unfitted policy; shadow ended after a confirmation; activation confirms with the backtest', async () => {
    await nav('Policies').click();
    await page.getByRole('heading', { name: 'Policies', level: 1 }).waitFor();
    const listed = (await api('GET', '/api/v1/policies')).json() as {
      data: { version: string; status: string; summary: string }[];
    };
    const active = listed.data.find((p) => p.status === 'active')!;
    const activeRow = page
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: active.version, exact: true }) });
    assert.match(
      await activeRow.innerText(),
      new RegExp(active.summary.slice(0, 30).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
    );
    // the built-in policy was not fitted: a report panel without a download button
    await page.getByRole('button', { name: `Report of ${active.version}` }).click();
    await page.getByText('This policy was not fitted, so it has no report.').waitFor();
    assert.equal(await page.getByRole('button', { name: /Download the HTML report/ }).count(), 0);
    await page.getByRole('button', { name: 'Close report' }).click();

    const doc = (await api('GET', `/api/v1/policies/${active.version}`)).json().document as Record<string, unknown>;
    const version = `${active.version}-console`;
    await page
      .getByLabel('Policy document (JSON)')
      .fill(JSON.stringify({ ...doc, version, bias: Number(doc.bias) + 0.5 }));
    await page.getByRole('button', { name: 'Upload as candidate' }).click();
    await page.getByText(`Policy ${version} stored as a candidate.`).waitFor();
    await page.getByRole('button', { name: `Shadow ${version}` }).click();
    await page.getByText(`Policy ${version} now runs in shadow beside the active one.`).waitFor();
    await shots(page, '20-policies-shadow');
    await page.getByRole('button', { name: `End shadow of ${version}` }).click();
    const confirm = page.getByRole('dialog');
    await confirm.getByText('The active policy is unchanged.').waitFor();
    await shots(page, '21-policy-end-shadow');
    await confirm.getByRole('button', { name: 'End shadow' }).click();
    await page.getByText(`Policy ${version} no longer runs in shadow.`).waitFor();
    assert.notEqual((await api('GET', `/api/v1/policies/${version}`)).json().status, 'shadow');
    // The list reloads after the message: wait for the button to go rather than reading it at once.
    await page.getByRole('button', { name: `End shadow of ${version}` }).waitFor({ state: 'detached' });

    await page.getByRole('button', { name: `Activate ${version}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(/Level changes/).waitFor();
    await shots(page, '22-policy-activate');
    await dialog.getByRole('button', { name: 'Activate' }).click();
    await page.getByText(`Policy ${version} is now active.`).waitFor();
    assert.equal((await api('GET', `/api/v1/policies/${version}`)).json().status, 'active');
  });

  test('Keys: create shows the secret once with a copy button; rotate; deactivate after a confirmation', async () => {
    await nav('Keys').click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('console-test');
    await page.getByLabel('trust:read').check();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const secretBox = page.getByRole('region', { name: /Secret of the new key/ });
    const secret = await secretBox.locator('input').inputValue();
    assert.match(secret, /^vch_live_[0-9A-Za-z]{49}$/);
    await secretBox.getByRole('button', { name: 'Copy' }).click();
    await secretBox.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
    await secretBox.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.getByText(secret).count(), 0, 'the secret is gone once dismissed');

    await page.getByRole('button', { name: 'Rotate console-test' }).click();
    await page.getByRole('dialog').getByLabel('Grace period (seconds)').fill('0');
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const rotated = await page
      .getByRole('region', { name: /Secret of the rotated key/ })
      .locator('input')
      .inputValue();
    assert.notEqual(rotated, secret);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.locator('tbody tr').nth(1).waitFor();
    const deactivatable = page.getByRole('button', { name: 'Deactivate console-test' });
    const before = await deactivatable.count();
    await deactivatable.first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('This cannot be undone').waitFor();
    await dialog.getByRole('button', { name: 'Deactivate' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('tbody .status-inactive').first().waitFor();
    assert.equal(await deactivatable.count(), before - 1);
    assert.equal(
      (
        await server.inject({
          method: 'GET',
          url: `/api/v1/trust/entities/${hash('admin-buyer')}`,
          headers: { 'x-api-key': rotated },
        })
      ).statusCode,
      401,
    );
    await shots(page, '23-keys');
  });

  test('Webhooks: create shows the secret once; a failed delivery shows its last response; delete confirms', async () => {
    await nav('Webhooks').click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByLabel('Endpoint URL').fill(HOOK_URL);
    await page.getByLabel('dispute.analyzed').check();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const secret = await page
      .getByRole('region', { name: /Signing secret/ })
      .locator('input')
      .inputValue();
    assert.match(secret, /^whsec_/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('cell', { name: HOOK_URL }).waitFor();
    const hook = ((await api('GET', '/api/v1/webhooks')).json() as { data: { id: string }[] }).data[0]!;
    const analysed = await api('POST', '/api/v1/dispute/analyze', {
      dispute_id: 'dsp_hook',
      trade: { trade_id: 'trade_hook', amount: 50, currency: 'USD' },
      buyer_id: hash('admin-buyer'),
      seller_id: hash('admin-seller'),
      opened_by: 'buyer',
      reason: 'payment_not_received',
    });
    assert.equal(analysed.statusCode, 200, analysed.body);
    // the worker's first attempt at the refused port
    const attempted = await until('a delivery attempt', async () => {
      const list = (await api('GET', `/api/v1/webhooks/${hook.id}/deliveries`)).json() as {
        data: { last_attempt_at: string | null; last_error: string | null }[];
      };
      return list.data.find((d) => d.last_attempt_at !== null);
    });
    assert.ok(attempted.last_error, 'a refused connection records an error');
    await page.getByRole('button', { name: 'Deliveries' }).first().click();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    const cell = page.locator('td.last-response').first();
    await cell.waitFor();
    const shown = await cell.innerText();
    assert.doesNotMatch(shown, /^—/, 'the last response is shown');
    assert.match(shown, /refused|connection|ECONNREFUSED/i);
    await shots(page, '24-webhook-deliveries');
    await page.getByRole('button', { name: 'Delete' }).first().click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('cell', { name: HOOK_URL }).waitFor({ state: 'detached' });
  });

  test('no page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
