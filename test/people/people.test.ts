// People at the desk (docs/api.md, "People"): invitations, sign-in to a session or a token, CSRF,
// the lockout, roles deciding what a person may do, deactivation ending sessions, all audited.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { asPerson, person, sessionCookieOf } from '../helpers/people.ts';

describeEachBackend('people', (ctx) => {
  test('an invitation: 201 with a one-time link and token; the same e-mail again 409; accepting sets a password once', async () => {
    const admin = await ctx().token();
    const invited = await ctx().inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: bearer(admin),
      payload: { email: 'Ana@Desk.example', name: 'Ana', role: 'analyst' },
    });
    assert.equal(invited.statusCode, 201, invited.body);
    const body = invited.json();
    assert.equal(body.status, 'invited');
    assert.equal(body.email, 'ana@desk.example');
    assert.match(body.invitation.url, /\/console\/\?invitation=/);
    assert.ok(Date.parse(body.invitation.expires_at) > Date.now());
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: bearer(admin),
        payload: { email: 'ana@desk.example', name: 'Ana again', role: 'viewer' },
      }),
      409,
      'conflict',
    );
    const short = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/invitations/accept',
      payload: { token: body.invitation.token, password: 'too short' },
    });
    assert.match(JSON.stringify(problem(short, 400, 'validation_failed').errors), /password/);
    const accept = { token: body.invitation.token, password: 'a long enough passphrase' };
    const ok = await ctx().inject({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: accept });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().status, 'active');
    problem(
      await ctx().inject({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: accept }),
      400,
      'validation_failed',
    );
    const stored = await ctx()
      .store.db.selectFrom('users')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    // N = 2^VOUCH_PASSWORD_COST (the configured cost; password-cost.test.ts checks the default)
    assert.equal(
      stored.password_hash!.split('$').slice(0, 4).join('$'),
      `scrypt$${2 ** ctx().config.passwordCost}$8$1`,
    );
    assert.ok(!stored.password_hash!.includes('passphrase'));
  });

  test('a session: HttpOnly SameSite=Strict cookie and a CSRF token; a change without the token is 403; logout ends it', async () => {
    const p = await person(ctx(), 'operator');
    const login = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: p.email, password: p.password },
    });
    const cookie = String(login.headers['set-cookie']);
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Strict/i);
    const me = await ctx().inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie: p.cookie } });
    assert.equal(me.statusCode, 200, me.body);
    assert.deepEqual(me.json().actor, { type: 'user', id: p.id, name: me.json().actor.name });
    assert.equal(me.json().role, 'operator');
    const fresh = me.json().csrf_token as string;
    const rule = { name: 'people-test', condition: 'amount > 1000', action: 'review' };
    problem(
      await ctx().inject({ method: 'POST', url: '/api/v1/rules', headers: { cookie: p.cookie }, payload: rule }),
      403,
      'forbidden',
    );
    const made = await ctx().inject({
      method: 'POST',
      url: '/api/v1/rules',
      headers: { cookie: p.cookie, 'x-csrf-token': fresh },
      payload: rule,
    });
    assert.equal(made.statusCode, 201, made.body);
    const out = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { cookie: p.cookie, 'x-csrf-token': fresh },
    });
    assert.equal(out.statusCode, 204);
    assert.match(String(out.headers['set-cookie']), /Expires=Thu, 01 Jan 1970/);
    problem(
      await ctx().inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie: p.cookie } }),
      401,
      'unauthenticated',
    );
  });

  test('an access token: sub is the person; a deactivation stops it and their sessions at once', async () => {
    const p = await person(ctx(), 'viewer');
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: p.email, password: p.password, token: true },
    });
    assert.equal(res.statusCode, 200, res.body);
    const token = res.json().access_token as string;
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.sub, p.id);
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/api/v1/decisions', headers: bearer(token) })).statusCode,
      200,
    );
    const admin = await ctx().token();
    const gone = await ctx().inject({ method: 'DELETE', url: `/api/v1/users/${p.id}`, headers: bearer(admin) });
    assert.equal(gone.json().status, 'deactivated');
    problem(
      await ctx().inject({ method: 'GET', url: '/api/v1/decisions', headers: bearer(token) }),
      401,
      'unauthenticated',
    );
    problem(
      await ctx().inject({ method: 'GET', url: '/api/v1/decisions', headers: asPerson(p) }),
      401,
      'unauthenticated',
    );
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: p.email, password: p.password },
      }),
      401,
      'unauthenticated',
    );
  });

  test('roles: a viewer reads but may not label, an analyst labels but may not write rules, a role change holds at once', async () => {
    const viewer = await person(ctx(), 'viewer');
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/api/v1/rules', headers: asPerson(viewer) })).statusCode,
      200,
    );
    problem(
      await ctx().inject({ method: 'GET', url: '/api/v1/users', headers: asPerson(viewer) }),
      403,
      'insufficient_scope',
    );
    const rule = { name: 'roles-test', condition: 'amount > 5', action: 'review' };
    problem(
      await ctx().inject({ method: 'POST', url: '/api/v1/rules', headers: asPerson(viewer), payload: rule }),
      403,
      'insufficient_scope',
    );
    const analyst = await person(ctx(), 'analyst');
    problem(
      await ctx().inject({ method: 'POST', url: '/api/v1/rules', headers: asPerson(analyst), payload: rule }),
      403,
      'insufficient_scope',
    );
    const admin = await ctx().token();
    const changed = await ctx().inject({
      method: 'PATCH',
      url: `/api/v1/users/${analyst.id}`,
      headers: bearer(admin),
      payload: { role: 'operator' },
    });
    assert.equal(changed.json().role, 'operator');
    // the old session ended with the old role; a new sign-in carries the new one
    problem(
      await ctx().inject({ method: 'GET', url: '/api/v1/rules', headers: asPerson(analyst) }),
      401,
      'unauthenticated',
    );
    const again = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: analyst.email, password: analyst.password },
    });
    const made = await ctx().inject({
      method: 'POST',
      url: '/api/v1/rules',
      headers: { cookie: sessionCookieOf(again), 'x-csrf-token': again.json().csrf_token },
      payload: rule,
    });
    assert.equal(made.statusCode, 201, made.body);
  });

  test('five wrong passwords lock the account: 429 with Retry-After even for the right one; wrong and unknown look alike', async () => {
    const p = await person(ctx(), 'viewer');
    const attempt = (password: string, email = p.email) =>
      ctx().inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
    const unknown = problem(await attempt('whatever it is', 'nobody@desk.example'), 401, 'unauthenticated');
    for (let i = 0; i < 5; i++) {
      const wrong = problem(await attempt('not the password'), 401, 'unauthenticated');
      assert.equal(wrong.detail, unknown.detail);
    }
    const locked = await attempt(p.password);
    problem(locked, 429, 'rate_limited');
    assert.ok(Number(locked.headers['retry-after']) > 0);
  });

  test('the audit log holds the invitation, the sign-ins and the failed one, with their actors', async () => {
    const p = await person(ctx(), 'viewer');
    await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: p.email, password: 'wrong password!' },
    });
    const rows = await ctx()
      .store.db.selectFrom('audit_log')
      .selectAll()
      .where('target', '=', `user:${p.id}`)
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.action),
      ['user.invited', 'user.activated', 'user.login', 'user.login_failed'],
    );
    assert.equal(JSON.parse(rows[0]!.actor).type, 'client');
    assert.deepEqual(JSON.parse(rows[2]!.actor), { type: 'user', id: p.id, name: JSON.parse(rows[2]!.actor).name });
    for (const r of rows) assert.ok(!`${r.before}${r.after}`.includes(p.password));
  });
});
