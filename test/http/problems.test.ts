// Problem types resolve (issue 18 item 12): every `type` the app can emit, /problems/<code>, is a
// page (HTML by default, JSON on request); and a 413 names the byte limit of the route it hit.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { PROBLEMS, PROBLEM_CODES, asProblem, type ProblemCode } from '../../src/http/problem.ts';
import {
  Conflict,
  Forbidden,
  Invalid,
  Limited,
  NotFound,
  Unauthenticated,
  type DomainError,
} from '../../src/lib/domain-errors.ts';
import { SRC_DIR } from '../helpers/repo-root.ts';

const SRC = SRC_DIR;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Every code the source names in an ApiError (`new ApiError('conflict'`), whose status is the
 * catalogue's, and every (status, code) pair it still spells out (`sendProblem(…, 503, 'unavailable'`).
 */
function emittedCodes(): { codes: Set<string>; pairs: Map<string, Set<number>> } {
  const codes = new Set<string>();
  const pairs = new Map<string, Set<number>>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/new ApiError\(\s*'([a-z_]+)'/g)) codes.add(match[1]!);
    for (const match of text.matchAll(/\b([1-5]\d\d),\s*'([a-z_]+)'/g)) {
      const statuses = pairs.get(match[2]!) ?? new Set<number>();
      statuses.add(Number(match[1]));
      pairs.set(match[2]!, statuses);
      codes.add(match[2]!);
    }
  }
  return { codes, pairs };
}

describeEachBackend('problem type pages', (ctx) => {
  test('every code the source emits is a known problem type, sent with its documented status', () => {
    const { codes, pairs } = emittedCodes();
    assert.ok(codes.size >= 12, `the scan found only ${[...codes].join(', ')}`);
    for (const code of codes) assert.ok(Object.hasOwn(PROBLEMS, code), `${code} is emitted but has no problem page`);
    for (const [code, statuses] of pairs) {
      assert.deepEqual(
        [...statuses],
        [PROBLEMS[code as ProblemCode].status],
        `${code} is sent with ${[...statuses].join(', ')}`,
      );
    }
  });

  test('a domain error becomes the problem its code names: the status in the catalogue, its fields, its headers', () => {
    const cases: Array<[DomainError, number, Record<string, string> | undefined]> = [
      [new NotFound('No such thing.'), 404, undefined],
      [new Conflict('Busy.', { retryAfterSeconds: 3, extensions: { job: 'j1' } }), 409, { 'retry-after': '3' }],
      [new Invalid('x must be y.', [{ field: 'x', message: 'must be y' }]), 400, undefined],
      [new Limited('Slow down.', '7'), 429, { 'retry-after': '7' }],
      [
        new Forbidden('No.', 'insufficient_scope', { challenge: 'Bearer realm="vouch"' }),
        403,
        { 'www-authenticate': 'Bearer realm="vouch"' },
      ],
      [new Unauthenticated('Who?'), 401, undefined],
    ];
    for (const [err, status, headers] of cases) {
      const problem = asProblem(err);
      assert.ok(problem, err.code);
      assert.equal(problem.status, status, err.code);
      assert.equal(problem.status, PROBLEMS[problem.code].status, err.code);
      assert.equal(problem.code, err.code);
      assert.equal(problem.detail, err.detail);
      assert.deepEqual(problem.options.headers, headers, err.code);
      assert.deepEqual(problem.options.errors, err.options.errors, err.code);
    }
    assert.deepEqual(asProblem(new Conflict('Busy.', { extensions: { job: 'j1' } }))?.options.extensions, {
      job: 'j1',
    });
    assert.equal(asProblem(new Error('a bug')), undefined);
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
