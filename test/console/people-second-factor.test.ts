// A person's own second factor on the console's "Your account" page (docs/api.md, "People"), in
// chromium against a real server: turned on with the key the page shows and a first code from it
// (a wrong one refused), the ten recovery codes shown once; signing in then asks for a code, and a
// recovery code works in its place; turned off with a current code; and an admin's "Reset second
// factor" on the users page for someone who lost their phone, after which they sign in with the
// password alone. Photographed as account-* and users-second-factor (VOUCH_CONSOLE_SHOTS).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../helpers/app.ts';
import { person, type Person } from '../helpers/people.ts';
import { describeInBrowser, openTab, shots, signInWithPassword, type Server } from './browser.ts';

const STEP_MS = 30_000;

describeInBrowser("a person's second factor in chromium", (suite) => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let cspErrors: string[] = [];
  let admin = '';
  let sam: Person;
  let samName = '';
  let boss: Person;
  let key = '';
  let recovery: string[] = [];

  /** The code of the key the page showed, for the time step `offset` steps from now. */
  const code = (offset = 0) =>
    new TOTP({ secret: Secret.fromBase32(key), digits: 6, period: 30 }).generate({
      timestamp: Date.now() + offset * STEP_MS,
    });
  const region = () => page.getByRole('region', { name: 'Second factor' });
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').waitFor();
  };
  const user = async (id: string) =>
    (await server.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers: bearer(admin) })).json() as {
      name: string;
      second_factor: boolean;
    };
  /** Turns it on from the account page: the key read from the page, confirmed with its current code. */
  const turnOn = async () => {
    await region().getByRole('button', { name: 'Turn on a second factor' }).click();
    key = (await region().getByLabel('Key').inputValue()).replace(/\s+/g, '');
    assert.match(key, /^[A-Z2-7]{32}$/);
    await region().getByLabel('Code from the app').fill(code());
    await region().getByRole('button', { name: 'Confirm and turn on' }).click();
    const codes = page.getByRole('region', { name: 'Recovery codes' });
    await codes.waitFor();
    return codes;
  };

  before(async () => {
    ({ server, browser } = suite());
    admin = await server.token();
    sam = await person(server, 'analyst', admin);
    samName = (await user(sam.id)).name;
    boss = await person(server, 'admin', admin);
    ({ page, cspErrors } = await openTab(browser, server.base));
  });

  test('turned on from "Your account": the key and link, a first code (a wrong one refused), the recovery codes once', async () => {
    await signInWithPassword(page, server.base, sam);
    await page.locator('header .who').getByRole('link', { name: samName }).click();
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    await region().getByText('You sign in with your password alone.').waitFor();
    await shots(page, 'account-off');

    await region().getByRole('button', { name: 'Turn on a second factor' }).click();
    key = (await region().getByLabel('Key').inputValue()).replace(/\s+/g, '');
    const link = await region().getByLabel('otpauth:// link').inputValue();
    assert.match(link, /^otpauth:\/\/totp\/Vouch:/);
    assert.equal(new URL(link).searchParams.get('secret'), key);
    await shots(page, 'account-enrol');
    // a code that matches no step near now
    const near = new Set([code(-1), code(), code(1)]);
    const wrong = ['000000', '111111', '222222', '333333'].find((c) => !near.has(c))!;
    await region().getByLabel('Code from the app').fill(wrong);
    await region().getByRole('button', { name: 'Confirm and turn on' }).click();
    await region().getByRole('alert').getByText('That code does not match').waitFor();
    assert.equal((await user(sam.id)).second_factor, false);

    await region().getByLabel('Code from the app').fill(code());
    await region().getByRole('button', { name: 'Confirm and turn on' }).click();
    const codes = page.getByRole('region', { name: 'Recovery codes' });
    await codes.waitFor();
    recovery = await codes.locator('li').allInnerTexts();
    assert.equal(recovery.length, 10);
    assert.equal(new Set(recovery).size, 10);
    assert.equal((await user(sam.id)).second_factor, true);
    await shots(page, 'account-recovery-codes');
    await codes.getByRole('button', { name: 'I have saved them' }).click();
    await region().getByText('10 of 10 recovery codes left').waitFor();
    assert.equal(await page.getByRole('region', { name: 'Recovery codes' }).count(), 0, 'shown once');
    await shots(page, 'account-on');
    await signOut();
  });

  test('signing in then asks for a code; a recovery code works once in its place', async () => {
    await page.goto(`${server.base}/console`);
    await page.getByLabel('E-mail').fill(sam.email);
    await page.getByLabel('Password', { exact: true }).fill(sam.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('status').getByText('This account has a second factor').waitFor();
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('Recovery code').fill(recovery[0]!);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto(`${server.base}/console/account`);
    await region().getByText('9 of 10 recovery codes left').waitFor();
  });

  test('turned off with a current code (a code of a step already used is refused), and on again', async () => {
    const off = region().getByRole('form', { name: 'Turn the second factor off' });
    await off.getByLabel('Current code').fill(code(1));
    await off.getByRole('button', { name: 'Turn off the second factor' }).click();
    await page.getByRole('status').getByText('The second factor is off').waitFor();
    await region().getByRole('button', { name: 'Turn on a second factor' }).waitFor();
    assert.equal((await user(sam.id)).second_factor, false);

    await (await turnOn()).getByRole('button', { name: 'I have saved them' }).click();
    await region().getByText('10 of 10 recovery codes left').waitFor();
    assert.equal((await user(sam.id)).second_factor, true);
    await signOut();
  });

  test("an admin resets someone's lost second factor on the users page; they sign in with the password alone", async () => {
    await signInWithPassword(page, server.base, boss, '/users');
    const row = page.locator(`tr[data-user="${sam.email}"]`);
    await row.locator('.badge.second-factor').waitFor();
    await row.getByRole('button', { name: `Reset second factor of ${samName}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: `Reset the second factor of ${samName}?` }).waitFor();
    await shots(page, 'users-second-factor');
    await dialog.getByRole('button', { name: 'Reset second factor' }).click();
    await page.getByRole('status').getByText(`${samName}'s second factor is off`).waitFor();
    // The status is said before the list is read again: wait for the row to lose its badge.
    await row.locator('.badge.second-factor').waitFor({ state: 'detached' });
    await row.getByText('active').waitFor();
    assert.equal((await user(sam.id)).second_factor, false);
    const log = await server.inject({
      method: 'GET',
      url: `/api/v1/audit-log?action=user.second_factor_reset`,
      headers: bearer(admin),
    });
    const entries = log.json().data as { actor: { id: string }; target: string }[];
    assert.deepEqual(
      entries.map((e) => [e.actor.id, e.target]),
      [[boss.id, `user:${sam.id}`]],
    );
    await signOut();

    await signInWithPassword(page, server.base, sam);
    assert.deepEqual(cspErrors, []);
  });
});
