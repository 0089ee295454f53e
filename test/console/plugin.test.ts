// The console's static serving: CSP on every response, SPA fallback, no path escape, and a 503
// problem when the console was never built.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import Fastify from 'fastify';
import consolePlugin, { CONSOLE_CSP, CONSOLE_DIST } from '../../src/console/plugin.ts';
import { problem, startApp } from '../helpers/app.ts';
import { ensureConsoleBuilt } from './browser.ts';

describe('console static serving', () => {
  let ctx: Awaited<ReturnType<typeof startApp>>;
  before(async () => {
    ensureConsoleBuilt();
    ctx = await startApp('sqlite');
  });
  after(() => ctx.close());

  test('GET /console answers 200 with the app and the strict CSP, without upgrade-insecure-requests', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/console' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
    assert.doesNotMatch(CONSOLE_CSP, /upgrade-insecure-requests|unsafe-inline|https?:/);
    assert.match(res.body, /<div id="app">/);
    // nothing inline: every script and stylesheet is a same-origin file
    assert.doesNotMatch(res.body, /<script(?![^>]*\bsrc=)[^>]*>|<style|style=/);
  });

  test('any /console/* path that is not a file serves index.html (SPA fallback) with 200', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/console/decisions/dec_123' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<div id="app">/);
    assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
  });

  test('built assets are served with their type, the CSP and an immutable cache', async () => {
    const js = readdirSync(join(CONSOLE_DIST, 'assets')).find((f) => f.endsWith('.js'))!;
    const res = await ctx.inject({ method: 'GET', url: `/console/assets/${js}` });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /javascript/);
    assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
    assert.match(String(res.headers['cache-control']), /immutable/);
  });

  test('a path escaping the build directory never serves a file outside it', async () => {
    for (const url of [
      '/console/..%2f..%2fpackage.json',
      '/console/%2e%2e/%2e%2e/package.json',
      '/console/assets/..%2f..%2f..%2fpackage.json',
    ]) {
      const res = await ctx.inject({ method: 'GET', url });
      assert.ok(
        res.statusCode === 200 || res.statusCode === 400 || res.statusCode === 404,
        `${url}: ${res.statusCode}`,
      );
      assert.doesNotMatch(res.body, /"dependencies"/, url);
    }
  });
});

test('an unbuilt console answers 503 unavailable saying to run npm run build', async () => {
  const app = Fastify({ logger: false });
  await app.register(consolePlugin, { root: join(tmpdir(), 'vouch-console-not-built') });
  const res = await app.inject({ method: 'GET', url: '/console/keys' });
  const body = problem(
    Object.assign(res, { headers: { ...res.headers, 'x-request-id': String(JSON.parse(res.body).request_id) } }),
    503,
    'unavailable',
  );
  assert.match(String(body.detail), /npm run build/);
  assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
  await app.close();
});
