// How sign-in answers (docs/api.md, "People"): only failures count towards an address's limit, a
// token from a login answers as the token endpoint does, every 401 names its challenge and every
// 429 its RateLimit headers, and a person scores only from operator up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { person } from '../helpers/people.ts';

const FAILURES_PER_MINUTE = 4;
const limits = {
  perSecond: 100_000,
  burst: 200_000,
  tokenPerMinute: 100_000,
  tokenFailuresPerMinute: FAILURES_PER_MINUTE,
};

describeEachBackend(
  'sign-in answers',
  (ctx) => {
    const login = (payload: Record<string, unknown>, ip = '192.0.2.10') =>
      ctx().inject({ method: 'POST', url: '/api/v1/auth/login', payload, remoteAddress: ip });

    test('successful sign-ins never count towards the address limit; failures do, then even the right password waits', async () => {
      const p = await person(ctx(), 'viewer');
      for (let i = 0; i < FAILURES_PER_MINUTE * 3; i++) {
        const ok = await login({ email: p.email, password: p.password, token: true });
        assert.equal(ok.statusCode, 200, `sign-in ${i + 1}: ${ok.body}`);
      }
      const other = await person(ctx(), 'viewer');
      for (let i = 0; i < FAILURES_PER_MINUTE; i++)
        problem(
          await login({ email: `nobody-${i}@desk.example`, password: 'wrong guess here' }, '192.0.2.11'),
          401,
          'unauthenticated',
        );
      const over = await login({ email: 'nobody@desk.example', password: 'wrong guess here' }, '192.0.2.11');
      problem(over, 429, 'rate_limited');
      const refused = await login({ email: other.email, password: other.password }, '192.0.2.11');
      problem(refused, 429, 'rate_limited');
      assert.ok(Number(refused.headers['retry-after']) > 0);
      assert.equal(refused.headers['ratelimit-limit'], String(FAILURES_PER_MINUTE));
      assert.equal(refused.headers['ratelimit-remaining'], '0');
      assert.ok(Number(refused.headers['ratelimit-reset']) > 0);
      assert.equal((await login({ email: other.email, password: other.password }, '192.0.2.12')).statusCode, 200);
    });

    test('a token from a login answers as the token endpoint does: scopes, role, scope; never cached', async () => {
      const p = await person(ctx(), 'analyst');
      const res = await login({ email: p.email, password: p.password, token: true }, '192.0.2.20');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.role, 'analyst');
      assert.ok(body.scopes.includes('reviews:write') && !body.scopes.includes('rules:write'), body.scope);
      assert.equal(body.scope, body.scopes.join(' '));
    });

    test('a wrong password: 401 with its challenge; a locked account: 429 with Retry-After and RateLimit headers', async () => {
      const p = await person(ctx(), 'viewer');
      const wrong = await login({ email: p.email, password: 'not the password' }, '192.0.2.30');
      problem(wrong, 401, 'unauthenticated');
      assert.equal(wrong.headers['www-authenticate'], 'Bearer realm="vouch"');
      for (let i = 0; i < 4; i++) await login({ email: p.email, password: 'not the password' }, `192.0.2.${31 + i}`);
      const locked = await login({ email: p.email, password: p.password }, '192.0.2.40');
      problem(locked, 429, 'rate_limited');
      assert.ok(Number(locked.headers['retry-after']) > 0);
      assert.equal(locked.headers['ratelimit-remaining'], '0');
      assert.equal(locked.headers['ratelimit-reset'], locked.headers['retry-after']);
    });

    test('a person scores from operator up: a viewer or an analyst is refused, an operator scores', async () => {
      const score = { entity_id: 'acct_person_scores', amount: 10, currency: 'USD' };
      for (const role of ['viewer', 'analyst', 'operator'] as const) {
        const p = await person(ctx(), role);
        const token = (await login({ email: p.email, password: p.password, token: true }, '192.0.2.50')).json()
          .access_token as string;
        const res = await ctx().inject({
          method: 'POST',
          url: '/api/v1/trust/score',
          headers: bearer(token),
          payload: score,
        });
        if (role === 'operator') assert.equal(res.statusCode, 200, res.body);
        else problem(res, 403, 'insufficient_scope');
      }
    });
  },
  { rateLimit: limits },
);
