// The console's Network page and a decision's contributing peers, in chromium against two real
// deployments on loopback: A flagged a phone, B (the console's) links it to an entity; "Sync now"
// at B shows A's flags pulled and matched, the unreachable peer's error and the budgets; B's score
// names A on its decision page; suspending A from the page changes its status. Screenshots go to
// test-results/console (40-network, 41-decision-network).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import type { Config } from '../../src/config/env.ts';
import { describeInBrowser, nav as navIn, openTab, shots, signIn, startServer, type Server } from './browser.ts';

const PHONE = hash('network-console-phone');
const ENTITY = hash('network-console-entity');

describeInBrowser('operator console: the Network page in chromium', { server: false }, (suite) => {
  let a: Server;
  let b: Server;
  let browser: Browser;
  let page: Page;
  const tokens = new Map<Server, string>();
  const api = (s: Server, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    s.inject({ method, url, headers: bearer(tokens.get(s)!), ...(payload ? { payload } : {}) });
  const descriptor = async (s: Server) =>
    (await s.inject({ method: 'GET', url: '/network/v1/descriptor' })).json() as { signing_key: string };
  const network = (name: string): Partial<Config> => ({
    network: { name, allowPrivate: true, syncSeconds: 86_400, commonEntityIds: false },
  });

  before(async () => {
    a = await startServer(network('market-a'));
    b = await startServer(network('market-b'));
    for (const s of [a, b]) tokens.set(s, await s.token());
    const at = new Date(Date.now() - 60_000).toISOString();
    assert.equal(
      (
        await api(a, 'POST', '/api/v1/trust/events', {
          events: [
            {
              event_id: 'na-1',
              type: 'fraud.reported',
              entity_id: hash('network-console-fraudster'),
              occurred_at: at,
              linked_identifiers: [{ type: 'phone', hash: PHONE }],
            },
          ],
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (
        await api(b, 'POST', '/api/v1/trust/events', {
          events: [
            {
              event_id: 'nb-1',
              type: 'identifier.linked',
              entity_id: ENTITY,
              occurred_at: at,
              linked_identifiers: [{ type: 'phone', hash: PHONE }],
            },
          ],
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (
        await api(a, 'POST', '/api/v1/network/peers', {
          name: 'market-b',
          url: b.base,
          signing_key: (await descriptor(b)).signing_key,
        })
      ).statusCode,
      201,
    );
    assert.equal(
      (
        await api(b, 'POST', '/api/v1/network/peers', {
          name: 'market-a',
          url: a.base,
          signing_key: (await descriptor(a)).signing_key,
          budget_per_day: 5000,
        })
      ).statusCode,
      201,
    );
    // The discard port: nothing listens, so every sync reports the connection refused.
    assert.equal(
      (
        await api(b, 'POST', '/api/v1/network/peers', {
          name: 'market-gone',
          url: 'http://127.0.0.1:9',
          signing_key: String(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x),
          weight: 0.5,
        })
      ).statusCode,
      201,
    );
    ({ browser } = suite());
    ({ page } = await openTab(browser, b.base));
    await signIn(page, b.base);
  });

  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('the dashboard, where sign-in lands, shows the network: peers active, the last sync, failing peers', async () => {
    const card = page.locator('[data-figure="network"]');
    await card.waitFor();
    assert.match(
      (await card.innerText()).replace(/\s+/g, ' '),
      /Peers active 2 of 2 Last sync never Last attempt failed none Flags matched 0/,
    );
  });

  test('Network: the identity, then after "Sync now" each peer\'s last sync, flags pulled and matched, error and budget; suspend from the page', async () => {
    await navIn(page, 'Network').click();
    await page.getByRole('heading', { name: 'Network', level: 1 }).waitFor();
    await page.getByText('market-b', { exact: true }).waitFor();
    const rowOf = (name: string) => page.getByRole('row').filter({ has: page.getByText(name, { exact: true }) });
    assert.match(await rowOf('market-a').innerText(), /never/);
    await page.getByRole('button', { name: 'Sync now' }).click();
    await page.getByRole('button', { name: 'Sync now' }).waitFor();
    await rowOf('market-gone')
      .getByText(/last attempt failed/)
      .waitFor();
    // The sync's own answer shows at once; the peers' state follows when the status is read again:
    // wait for market-a to lose its "never" before reading the row and the facts.
    await rowOf('market-a').getByText('never', { exact: true }).waitFor({ state: 'detached' });
    const rowA = await rowOf('market-a').innerText();
    assert.doesNotMatch(rowA, /never|failed/);
    // flags pulled 1, identifiers resolved 1, matched 1, budget used 0 of 5,000
    assert.match(rowA.replace(/\s+/g, ' '), /1 1 1 0 \/ 5,000/);
    const facts = await page.locator('dl.facts').innerText();
    assert.match(facts, /Flags matched\s+1/);
    assert.match(facts, /Peers\s+2/);
    await shots(page, '40-network');

    await rowOf('market-gone').getByRole('button', { name: 'Suspend' }).click();
    await rowOf('market-gone').getByRole('button', { name: 'Activate' }).waitFor();
    assert.match(await rowOf('market-gone').innerText(), /suspended/);
    const peers = (await api(b, 'GET', '/api/v1/network/peers')).json().data as Array<{ name: string; status: string }>;
    assert.equal(peers.find((p) => p.name === 'market-gone')?.status, 'suspended');
  });

  test('a decision names the peers that contributed to network_flags', async () => {
    const scored = await api(b, 'POST', '/api/v1/trust/score', { entity_id: ENTITY, amount: 250, currency: 'USD' });
    assert.equal(scored.statusCode, 200, scored.body);
    const id = scored.json().decision_id as string;
    // Within the page (a reload would sign out): pushState and the popstate the router listens to.
    await page.evaluate(
      `history.pushState(null, '', ${JSON.stringify(`/console/decisions/${id}`)}); window.dispatchEvent(new PopStateEvent('popstate'))`,
    );
    await page.getByRole('heading', { name: 'Flagged by other marketplaces' }).waitFor();
    // the peer's part of the signal's value (a lone peer reaches half at most), never more than the value itself
    assert.match(
      await page.locator('.peers-list').innerText(),
      /market-a: 0\.5 of the signal's 0\.5 \(\+[\d.]+ log-odds\)/,
    );
    await page
      .getByRole('cell', { name: /flagged by 1 other marketplace/ })
      .first()
      .waitFor();
    await shots(page, '41-decision-network');
    await page.getByRole('link', { name: 'market-a' }).click();
    await page.getByRole('heading', { name: 'Network', level: 1 }).waitFor();
  });
});
