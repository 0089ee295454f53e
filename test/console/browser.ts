// Browser-test harness for the operator console: builds the console once when its build is missing
// or older than its sources, starts a real server on a loopback port, and drives Debian's chromium.
import { describe, before, after } from 'node:test';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN_ID, ADMIN_SECRET, startApp, type TestContext } from '../helpers/app.ts';
import { person, type Person } from '../helpers/people.ts';
import type { Config } from '../../src/config/env.ts';
import { REPO_ROOT } from '../helpers/repo-root.ts';

const CHROMIUM = '/usr/bin/chromium';

/**
 * `skip` for a browser suite: in CI a missing browser is a failure (the browser tests must run
 * there); elsewhere it is said plainly.
 */
const BROWSER_SKIP: string | false =
  existsSync(CHROMIUM) || process.env.CI
    ? false
    : `${CHROMIUM} is missing: install Debian's chromium package to run the console's browser tests`;
const ROOT = REPO_ROOT;
/** Where screenshots go: VOUCH_CONSOLE_SHOTS, or test-results/console. */
export const SHOTS = process.env.VOUCH_CONSOLE_SHOTS ?? join(ROOT, 'test-results', 'console');

function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((f) => newest(join(path, f))));
}

/** Runs the Vite build unless console/dist is newer than every source file. */
export function ensureConsoleBuilt(): void {
  const built = join(ROOT, 'console', 'dist', 'index.html');
  const sources = Math.max(
    newest(join(ROOT, 'console', 'src')),
    newest(join(ROOT, 'console', 'index.html')),
    newest(join(ROOT, 'console', 'vite.config.ts')),
  );
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--config',
      join(ROOT, 'console', 'vite.config.ts'),
    ],
    { cwd: ROOT, stdio: 'pipe' },
  );
}

export type Server = TestContext & { close(): Promise<void>; base: string };

/** A real server (SQLite temp store) listening on 127.0.0.1 on a free port. */
export async function startServer(overrides: Partial<Config> = {}): Promise<Server> {
  const ctx = await startApp('sqlite', overrides);
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = ctx.app.server.address() as AddressInfo;
  return Object.assign(ctx, { base: `http://127.0.0.1:${port}` });
}

/** What a browser suite's tests get: Chromium, and the server the suite asked for. */
export interface BrowserSuite {
  browser: Browser;
  /** the suite's server (throws for a suite that starts its own: `server: false`) */
  server: Server;
}

/**
 * A suite of console tests in Chromium: skipped, saying why, where Chromium is missing (never in CI);
 * the console built once; a real server (`options.server`: its configuration, or false for a suite
 * that starts its own) and Chromium started before the suite's own `before` hooks, and both closed
 * after its own `after` hooks (node:test runs hooks in the order they are registered).
 */
export function describeInBrowser(name: string, body: (suite: () => BrowserSuite) => void): void;
export function describeInBrowser(
  name: string,
  options: { server?: Partial<Config> | false },
  body: (suite: () => BrowserSuite) => void,
): void;
export function describeInBrowser(
  name: string,
  second: { server?: Partial<Config> | false } | ((suite: () => BrowserSuite) => void),
  third?: (suite: () => BrowserSuite) => void,
): void {
  const [options, body] = typeof second === 'function' ? [{}, second] : [second, third!];
  let browser: Browser | undefined;
  let server: Server | undefined;
  const suite = (): BrowserSuite => ({
    browser: browser!,
    get server() {
      if (!server) throw new Error(`${name}: this suite starts its own server (server: false)`);
      return server;
    },
  });
  describe(name, { skip: BROWSER_SKIP }, () => {
    before(async () => {
      ensureConsoleBuilt();
      if (options.server !== false) server = await startServer(options.server);
      browser = await sharedChromium();
    });
    body(suite);
    after(async () => {
      // The suite's tabs, not the browser: the next file of the process uses it (sharedChromium).
      for (const context of browser?.contexts() ?? []) await context.close();
      await server?.close();
    });
  });
}

let shared: Promise<Browser> | undefined;

/**
 * One Chromium a process: the files of a group (scripts/test-groups.ts) share it, each suite in
 * contexts of its own, and Playwright ends it when the process exits. A browser that went away
 * (a crash) is launched again for the next suite.
 */
export async function sharedChromium(): Promise<Browser> {
  const current = await shared?.catch(() => undefined);
  if (current?.isConnected()) return current;
  const { chromium } = await import('playwright-core');
  shared = chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  return shared;
}

/** The desktop size every page is checked at, and the phone width. */
export const WIDE = { width: 1400, height: 900 };
export const NARROW = { width: 390, height: 844 };

/** A tab at the desktop size that collects every Content-Security-Policy violation it reports. */
export async function openTab(
  browser: Browser,
  base: string,
  locale = 'en-GB',
): Promise<{ context: BrowserContext; page: Page; cspErrors: string[] }> {
  const context = await browser.newContext({ viewport: WIDE, locale });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const cspErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
  });
  return { context, page, cspErrors };
}

/**
 * Signs in as an API client on the page at `path` (a full load: a client's session lives in the tab's
 * memory only), through the sign-in page's folded "Sign in as an API client (machines)".
 */
export async function signIn(page: Page, base: string, id = ADMIN_ID, secret = ADMIN_SECRET, path = ''): Promise<void> {
  await page.goto(`${base}/console${path}`);
  await openClientSignIn(page);
  await page.getByLabel('Client ID').fill(id);
  await page.getByLabel('Client secret').fill(secret);
  await page.getByRole('button', { name: 'Sign in as this client' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Unfolds the machines' sign-in form (once the sign-in page is up). */
export async function openClientSignIn(page: Page): Promise<void> {
  const folded = page.locator('details.client-signin');
  await folded.waitFor();
  if ((await folded.getAttribute('open')) === null) await folded.locator('summary').click();
  await page.getByLabel('Client ID').waitFor();
}

/** Signs a person in with e-mail and password on the page at `path`, and waits for the console. */
export async function signInWithPassword(
  page: Page,
  base: string,
  who: { email: string; password: string },
  path = '',
): Promise<void> {
  await page.goto(`${base}/console${path}`);
  // a person still signed in in this browser (the session outlives a reload) signs out first
  const signOut = page.getByRole('button', { name: 'Sign out' });
  await page.getByLabel('E-mail').or(signOut).waitFor();
  if (await signOut.isVisible()) {
    await signOut.click();
    await page.goto(`${base}/console${path}`);
  }
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/**
 * A person of `role`, invited through the API by the bootstrap admin and with their password set
 * (test/helpers/people.ts), signed in on the page at `path`: what a person at the desk does.
 */
export async function signInAsPerson(
  page: Page,
  server: Server,
  role: 'viewer' | 'analyst' | 'operator' | 'admin',
  path = '',
): Promise<Person> {
  const who = await person(server, role);
  await signInWithPassword(page, server.base, who, path);
  return who;
}

export const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

/**
 * Polls `probe` until it returns a value (not undefined): waiting for a condition, never for a fixed
 * time. The deadline only turns a condition that never comes into a failure naming it.
 */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 30_000): Promise<T> {
  const stop = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > stop) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How far the page, or any scrolling table in it, extends past its box sideways (0: nothing is cut off). */
export async function sidewaysOverflow(page: Page): Promise<number> {
  // a string: evaluated in the page, whose DOM types this (Node) project does not load
  return page.evaluate(
    "Math.max(...[document.documentElement, ...document.querySelectorAll('.table-wrap')].map((b) => b.scrollWidth - b.clientWidth))",
  ) as Promise<number>;
}

/**
 * The visible table headers with a word wider than the header's box, i.e. broken inside the word
 * ("Confi-dence"): headers may wrap between words only. Each run of text is measured in its own
 * element's font (an id in a small monospace line is narrower than the header's bold label), and a
 * run that an element of the header cuts short with an ellipsis (.trunc) cannot break, so it is left out.
 */
export async function brokenHeaders(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('th')].filter((th) => th.getClientRects().length > 0 && th.offsetParent !== null).filter((th) => {
    const style = getComputedStyle(th);
    const room = th.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const ctx = document.createElement('canvas').getContext('2d');
    // text-overflow is not inherited: the element that cuts the run short may be an ancestor.
    const cutShort = (el) => {
      for (; el && el !== th; el = el.parentElement) {
        const s = getComputedStyle(el);
        if (s.textOverflow === 'ellipsis' && s.whiteSpace === 'nowrap' && s.overflowX !== 'visible') return true;
      }
      return false;
    };
    const texts = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = texts.nextNode(); node; node = texts.nextNode()) {
      if (cutShort(node.parentElement)) continue;
      ctx.font = getComputedStyle(node.parentElement).font;
      if (node.textContent.split(/\\s+/).some((w) => ctx.measureText(w).width > room + 1)) return true;
    }
    return false;
  }).map((th) => th.innerText)`) as Promise<string[]>;
}

/**
 * Full-page screenshots at the desktop size and at 390 px wide, then back to the desktop size.
 * At 390 px nothing may be cut off sideways (no column hidden past a scroll edge) and no table
 * header broken inside a word.
 */
export async function shots(page: Page, name: string): Promise<void> {
  await shot(page, `${name}-wide`);
  await page.setViewportSize(NARROW);
  await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
  await shot(page, `${name}-390`);
  const overflow = await sidewaysOverflow(page);
  const broken = await brokenHeaders(page);
  await page.setViewportSize(WIDE);
  if (overflow > 0) throw new Error(`${name}: at 390 px wide the page or a table is cut off by ${overflow}px`);
  if (broken.length > 0)
    throw new Error(`${name}: at 390 px wide these headers break inside a word: ${broken.join(' | ')}`);
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/**
 * The visible, empty inputs and text areas whose placeholder does not fit their box: an input's is
 * one line, measured in the input's font; a text area's wraps, and must fit its rows.
 */
export async function clippedPlaceholders(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('input[placeholder], textarea[placeholder]')]
    .filter((el) => el.offsetParent !== null && !el.value && el.placeholder)
    .filter((el) => {
      const style = getComputedStyle(el);
      const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      if (el.tagName === 'INPUT') {
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = style.font;
        return ctx.measureText(el.placeholder).width > room + 0.5;
      }
      const probe = document.createElement('div');
      probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre-wrap;overflow-wrap:break-word';
      probe.style.font = style.font;
      probe.style.lineHeight = style.lineHeight;
      probe.style.width = room + 'px';
      probe.textContent = el.placeholder;
      document.body.append(probe);
      const height = probe.scrollHeight;
      probe.remove();
      return height > el.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom) + 0.5;
    })
    .map((el) => (el.name || el.tagName.toLowerCase()) + ': ' + el.placeholder)`) as Promise<string[]>;
}

/** Every width from 360 to 1400 px, 20 apart, then back to the desktop size: what fits only at some widths. */
export async function acrossWidths(page: Page, check: (width: number) => Promise<void>): Promise<void> {
  for (let width = 360; width <= 1400; width += 20) {
    await page.setViewportSize({ width, height: 900 });
    await check(width);
  }
  await page.setViewportSize(WIDE);
}
