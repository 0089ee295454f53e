// A person's second factor (docs/api.md, "People"): enrolment confirmed by a first code, sign-in
// asking for it, a code working once, recovery codes once each, an admin's reset; sealed at rest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { asPerson, person } from '../helpers/people.ts';

const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: at });

describeEachBackend('second factor', (ctx) => {
  test('enrol, confirm, then sign-in needs a code that works once; a recovery code works once; an admin resets it', async () => {
    const p = await person(ctx(), 'analyst');
    const enrolled = await ctx().inject({ method: 'POST', url: '/api/v1/auth/totp', headers: asPerson(p) });
    assert.equal(enrolled.statusCode, 200, enrolled.body);
    const { secret, otpauth_url } = enrolled.json() as { secret: string; otpauth_url: string };
    assert.match(otpauth_url, /^otpauth:\/\/totp\/Vouch:/);
    const row = await ctx().store.db.selectFrom('users').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    assert.ok(row.totp_pending && !row.totp_pending.includes(secret), 'the secret is sealed at rest');
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/totp/confirm',
        headers: asPerson(p),
        payload: { code: '000000' },
      }),
      400,
      'validation_failed',
    );
    // a code of the previous step: accepted for clock skew, and it becomes the last step used
    const confirmed = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/totp/confirm',
      headers: asPerson(p),
      payload: { code: codeAt(secret, Date.now() - 30_000) },
    });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    const recovery = confirmed.json().recovery_codes as string[];
    assert.equal(recovery.length, 10);

    const login = (extra: Record<string, string>) =>
      ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: p.email, password: p.password, ...extra },
      });
    const asked = problem(await login({}), 401, 'unauthenticated');
    assert.match(JSON.stringify(asked.errors), /totp/);
    const now = codeAt(secret, Date.now());
    // two sign-ins racing with one code: exactly one passes (the step is taken atomically)
    const raced = await Promise.all([login({ totp: now }), login({ totp: now })]);
    assert.deepEqual(raced.map((r) => r.statusCode).sort(), [200, 401]);
    problem(await login({ totp: now }), 401, 'unauthenticated');
    const spent = await Promise.all([login({ recovery_code: recovery[0]! }), login({ recovery_code: recovery[0]! })]);
    assert.deepEqual(spent.map((r) => r.statusCode).sort(), [200, 401]);
    problem(await login({ recovery_code: recovery[0]! }), 401, 'unauthenticated');
    assert.equal((await login({ recovery_code: recovery[1]! })).statusCode, 200);

    const admin = await ctx().token();
    const reset = await ctx().inject({
      method: 'PATCH',
      url: `/api/v1/users/${p.id}`,
      headers: bearer(admin),
      payload: { second_factor: 'off' },
    });
    assert.equal(reset.json().second_factor, false);
    assert.equal((await login({})).statusCode, 200);
  });

  test('wrong codes count towards the lockout; a machine has no second factor', async () => {
    const p = await person(ctx(), 'viewer');
    const { secret } = (await ctx().inject({ method: 'POST', url: '/api/v1/auth/totp', headers: asPerson(p) })).json();
    await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/totp/confirm',
      headers: asPerson(p),
      payload: { code: codeAt(secret, Date.now()) },
    });
    for (let i = 0; i < 5; i++)
      problem(
        await ctx().inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email: p.email, password: p.password, totp: '123456' },
        }),
        401,
        'unauthenticated',
      );
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: p.email, password: p.password },
      }),
      429,
      'rate_limited',
    );
    problem(
      await ctx().inject({ method: 'POST', url: '/api/v1/auth/totp', headers: bearer(await ctx().token()) }),
      403,
      'forbidden',
    );
  });
});
