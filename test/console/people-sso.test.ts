// "Sign in with SSO" (docs/api.md, "People", "Single sign-on") in chromium: a real server with
// VOUCH_OIDC_ISSUER pointing at a real OpenID provider (oidc-provider, test/people/oidc-provider.ts)
// on another loopback port. The sign-in page offers the button because GET /api/v1/auth/sso says
// so; clicking it runs the whole round of redirects in the browser and lands signed in, with the
// role from the provider's claim. A refused round comes back as ?sso_error=<code>, said in the
// console's own words; an unknown code, or markup in it, gets a fixed sentence and never reaches
// the page as markup. Photographed as people-sso-* (VOUCH_CONSOLE_SHOTS).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestContext } from '../helpers/app.ts';
import { loadConfig } from '../../src/config/env.ts';
import { startProvider, type TestProvider } from '../people/oidc-provider.ts';
import { describeInBrowser, openTab, shots } from './browser.ts';

/** A free loopback port: the redirect URI registered at the provider must name the server's before it starts. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describeInBrowser('single sign-on in chromium', { server: false }, (suite) => {
  let provider: TestProvider;
  let server: TestContext & { close(): Promise<void> };
  let base = '';
  let browser: Browser;
  let page: Page;
  let cspErrors: string[] = [];

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    provider = await startProvider(`${base}/api/v1/auth/sso/callback`);
    const { oidc, publicUrl } = loadConfig({
      VOUCH_PUBLIC_URL: base,
      VOUCH_OIDC_ISSUER: provider.issuer,
      VOUCH_OIDC_CLIENT_ID: provider.clientId,
      VOUCH_OIDC_CLIENT_SECRET: provider.clientSecret,
      VOUCH_OIDC_ALLOWED_DOMAINS: 'desk.example',
    });
    server = await startApp('sqlite', { oidc, publicUrl });
    await server.app.listen({ host: '127.0.0.1', port });
    provider.accounts.set('sam', {
      email: 'sam@desk.example',
      email_verified: true,
      name: 'Sam Single',
      vouch_role: 'analyst',
    });
    provider.accounts.set('eve', {
      email: 'eve@elsewhere.example',
      email_verified: true,
      name: 'Eve Elsewhere',
      vouch_role: 'admin',
    });
    ({ browser } = suite());
    ({ page, cspErrors } = await openTab(browser, base));
  });

  after(async () => {
    await server?.close();
    await provider?.close();
  });

  test('the button runs the round with the provider in the browser and lands signed in with the claimed role', async () => {
    await page.goto(`${base}/console/`);
    const button = page.getByRole('link', { name: 'Sign in with SSO' });
    await button.waitFor();
    assert.equal(await button.getAttribute('href'), '/api/v1/auth/sso/start');
    await shots(page, 'people-sso-signin');
    provider.signInAs('sam');
    await button.click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.match((await page.locator('header .who').innerText()).replace(/\s+/g, ' '), /Sam Single · analyst/);
    // the marker of the round leaves the address bar
    assert.doesNotMatch(page.url(), /sso=/);
    const user = await server.store.db
      .selectFrom('users')
      .select(['role', 'status'])
      .where('email', '=', 'sam@desk.example')
      .executeTakeFirstOrThrow();
    assert.deepEqual(user, { role: 'analyst', status: 'active' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').waitFor();
  });

  test('a refused round comes back to the sign-in page, said in words, with the code gone from the address', async () => {
    // a fresh browser: the provider's own session (Sam's) would sign Sam in again without asking
    await page.context().clearCookies();
    await page.goto(`${base}/console/`);
    provider.signInAs('eve');
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('Single sign-on failed:').waitFor();
    assert.match(await alert.innerText(), /not of a domain this console accepts/);
    assert.doesNotMatch(page.url(), /sso_error/);
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
    await shots(page, 'people-sso-refused');
  });

  test('an unknown code, or markup in the address, gets a fixed sentence and never becomes markup', async () => {
    await page.context().clearCookies();
    const hostile = '<img src=x onerror="document.title=1">';
    await page.goto(`${base}/console/?sso_error=${encodeURIComponent(hostile)}`);
    const alert = page.getByRole('alert');
    await alert.getByText('Single sign-on failed:').waitFor();
    assert.equal(
      (await alert.innerText()).replace(/\s+/g, ' ').trim(),
      'Single sign-on failed: the sign-in could not be completed. Try again.',
    );
    assert.equal(await page.locator('main img').count(), 0);
    assert.doesNotMatch(await page.locator('main').innerText(), /onerror|<img/);
    assert.notEqual(await page.title(), '1');
    assert.deepEqual(cspErrors, []);
  });
});
