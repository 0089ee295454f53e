// Browser-test harness for the operator console: builds the console once when its build is missing
// or older than its sources, starts a real server on a loopback port, and drives Debian's chromium.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestContext } from '../helpers/app.ts';
import type { Config } from '../../src/config/env.ts';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const SHOTS = join(ROOT, 'test-results', 'console');

function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((f) => newest(join(path, f))));
}

/** Runs the Vite build unless console/dist is newer than every source file. */
export function ensureConsoleBuilt(): void {
  const built = join(ROOT, 'console', 'dist', 'index.html');
  const sources = Math.max(newest(join(ROOT, 'console', 'src')), newest(join(ROOT, 'console', 'index.html')), newest(join(ROOT, 'console', 'vite.config.ts')));
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(ROOT, 'console', 'vite.config.ts')], { cwd: ROOT, stdio: 'pipe' });
}

export type Server = TestContext & { close(): Promise<void>; base: string };

/** A real server (SQLite temp store) listening on 127.0.0.1 on a free port. */
export async function startServer(overrides: Partial<Config> = {}): Promise<Server> {
  const ctx = await startApp('sqlite', overrides);
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = ctx.app.server.address() as AddressInfo;
  return Object.assign(ctx, { base: `http://127.0.0.1:${port}` });
}

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
