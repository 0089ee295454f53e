// Problem types resolve (issue 18 item 12): every `type` the app can emit, /problems/<code>, is a
// page (HTML by default, JSON on request); and a 413 names the byte limit of the route it hit.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { PROBLEMS, PROBLEM_CODES, type ProblemCode } from '../../src/http/problem.ts';

const SRC = new URL('../../src/', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every (status, code) pair the source sends: `ApiError(409, 'conflict'`, `sendProblem(…, 503, 'unavailable'`, … */
function emittedCodes(): Map<string, Set<number>> {
  const found = new Map<string, Set<number>>();
  for (const file of sourceFiles(SRC)) {
    for (const match of readFileSync(file, 'utf8').matchAll(/\b([1-5]\d\d),\s*'([a-z_]+)'/g)) {
      const statuses = found.get(match[2]!) ?? new Set<number>();
      statuses.add(Number(match[1]));
      found.set(match[2]!, statuses);
    }
  }
  return found;
}

describeEachBackend('problem type pages', (ctx) => {
  test('every code the source emits is a known problem type, sent with its documented status', () => {
    const emitted = emittedCodes();
    assert.ok(emitted.size >= 12, `the scan found only ${[...emitted.keys()].join(', ')}`);
    for (const [code, statuses] of emitted) {
      assert.ok(Object.hasOwn(PROBLEMS, code), `${code} is emitted but has no problem page`);
      assert.deepEqual(
        [...statuses],
        [PROBLEMS[code as ProblemCode].status],
        `${code} is sent with ${[...statuses].join(', ')}`,
      );
    }
  });

  test('GET /problems/<code> for every code: 200 HTML naming the title, status and code, without credentials', async () => {
    for (const code of PROBLEM_CODES) {
      const res = await ctx().inject({ method: 'GET', url: `/problems/${code}` });
      assert.equal(res.statusCode, 200, `${code}: ${res.body}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.ok(res.body.includes(`<h1>${PROBLEMS[code].title.replace(/'/g, '&#39;')}</h1>`), code);
      assert.ok(res.body.includes(`<strong>${PROBLEMS[code].status}</strong>`), code);
      assert.ok(res.body.includes(`<code>${code}</code>`), code);
    }
  });

  test('with Accept: application/json the same facts come as JSON', async () => {
    const res = await ctx().inject({
      method: 'GET',
      url: '/problems/payload_too_large',
      headers: { accept: 'application/json' },
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json(), {
      type: '/problems/payload_too_large',
      code: 'payload_too_large',
      ...PROBLEMS.payload_too_large,
    });
    const browser = await ctx().inject({
      method: 'GET',
      url: '/problems/conflict',
      headers: { accept: 'text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8' },
    });
    assert.match(String(browser.headers['content-type']), /^text\/html/);
  });

  test('the type of a real error body resolves; an unknown problem type is a 404 problem', async () => {
    const missing = problem(await ctx().inject({ method: 'GET', url: '/api/v1/no-such-thing' }), 404, 'not_found');
    assert.equal((await ctx().inject({ method: 'GET', url: String(missing.type) })).statusCode, 200);
    problem(await ctx().inject({ method: 'GET', url: '/problems/no_such_code' }), 404, 'not_found');
    problem(await ctx().inject({ method: 'GET', url: '/problems/constructor' }), 404, 'not_found');
  });
});

describeEachBackend('a 413 names the limit', (ctx) => {
  let token: string;
  before(async () => {
    token = await ctx().token();
  });

  test('64 KiB on ordinary routes, 1 MiB for events and score batches', async () => {
    const cases: Array<[string, number, RegExp]> = [
      ['/api/v1/keys', 64 * 1024, /64 KiB, 65536 bytes/],
      ['/api/v1/auth/token', 64 * 1024, /64 KiB/],
      ['/api/v1/trust/events', 1024 * 1024, /1 MiB, 1048576 bytes/],
      ['/api/v1/trust/score/batch', 1024 * 1024, /1 MiB/],
    ];
    for (const [url, limit, detail] of cases) {
      const payload = JSON.stringify({ name: 'x'.repeat(limit) });
      const body = problem(
        await ctx().inject({
          method: 'POST',
          url,
          headers: { ...bearer(token), 'content-type': 'application/json' },
          payload,
        }),
        413,
        'payload_too_large',
      );
      assert.match(String(body.detail), detail, url);
    }
  });
});
