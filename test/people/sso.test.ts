// Single sign-on (docs/api.md, "People", "Single sign-on") against a real OpenID provider
// (oidc-provider on a loopback port): the authorization code flow with PKCE, state and nonce; a
// first sign-in creates the person with the claim's role and a working console session; the role
// follows the claim at the next sign-in (audited); an unverified e-mail, a disallowed domain, a
// missing role, a deactivated person, a provider error and a tampered state are refused with a
// short `sso_error`; without VOUCH_OIDC_ISSUER the flow's routes answer 404.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { backends, problem, startApp, type TestContext } from '../helpers/app.ts';
import { loadConfig } from '../../src/config/env.ts';
import { inviteUser } from '../../src/people/service.ts';
import { updateUser, userByEmail } from '../../src/people/repository.ts';
import { startProvider, type TestProvider } from './oidc-provider.ts';

const VOUCH = 'http://vouch.test';
const CALLBACK = `${VOUCH}/api/v1/auth/sso/callback`;

function cookiesOf(res: LightMyRequestResponse): Map<string, string> {
  const set = res.headers['set-cookie'];
  const lines = Array.isArray(set) ? set : set ? [set] : [];
  return new Map(lines.map((line) => [line.slice(0, line.indexOf('=')), line]));
}
const pair = (line: string | undefined) => (line ?? '').split(';')[0]!;

for (const backend of backends()) {
  describe(`single sign-on [${backend}]`, () => {
    let provider: TestProvider;
    let app: TestContext & { close(): Promise<void> };
    const ctx = () => app;

    before(async () => {
      provider = await startProvider(CALLBACK);
      const { oidc, publicUrl } = loadConfig({
        VOUCH_PUBLIC_URL: VOUCH,
        VOUCH_OIDC_ISSUER: provider.issuer,
        VOUCH_OIDC_CLIENT_ID: provider.clientId,
        VOUCH_OIDC_CLIENT_SECRET: provider.clientSecret,
        VOUCH_OIDC_ALLOWED_DOMAINS: 'Desk.example, @desk.example.org',
      });
      app = await startApp(backend, { oidc, publicUrl });
    });
    after(async () => {
      await app?.close();
      await provider?.close();
    });

    /** /start, the provider's redirects, and the callback as the provider sent it (or as `alter` changes it). */
    async function signIn(sub: string, alter?: (callback: URL) => void) {
      const start = await ctx().inject({ method: 'GET', url: '/api/v1/auth/sso/start' });
      assert.equal(start.statusCode, 302, start.body);
      const flow = cookiesOf(start).get('vouch_sso');
      assert.match(flow ?? '', /HttpOnly/i);
      assert.match(flow ?? '', /SameSite=Lax/i);
      assert.match(flow ?? '', /Path=\/api\/v1\/auth\/sso/);
      const authorize = new URL(String(start.headers.location));
      assert.equal(authorize.origin, provider.issuer);
      assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(authorize.searchParams.get('redirect_uri'), CALLBACK);
      for (const p of ['state', 'nonce', 'code_challenge']) assert.ok(authorize.searchParams.get(p), p);
      provider.signInAs(sub);
      const callback = await provider.browse(authorize.href);
      assert.equal(`${callback.origin}${callback.pathname}`, CALLBACK);
      alter?.(callback);
      const res = await ctx().inject({
        method: 'GET',
        url: `${callback.pathname}${callback.search}`,
        headers: { cookie: pair(flow) },
      });
      assert.equal(res.statusCode, 302, res.body);
      return res;
    }

    const refusedWith = (res: LightMyRequestResponse, code: string) => {
      assert.equal(res.headers.location, `/console/?sso_error=${code}`);
      assert.ok(!cookiesOf(res).has('vouch_session'), 'no session on a refusal');
      assert.equal(res.body, '');
    };

    const audit = (userId: string) =>
      ctx()
        .store.db.selectFrom('audit_log')
        .select(['action', 'before', 'after'])
        .where('target', '=', `user:${userId}`)
        .orderBy('seq')
        .execute();

    test('GET /api/v1/auth/sso says SSO is on, and names the provider', async () => {
      const res = await ctx().inject({ method: 'GET', url: '/api/v1/auth/sso' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { enabled: true, issuer: provider.issuer });
    });

    let firstCookie = '';
    let aliceId = '';
    test('a first sign-in creates the person with the mapped role and opens a working session', async () => {
      provider.accounts.set('alice', {
        email: 'Alice@Desk.example',
        email_verified: true,
        name: 'Alice Liddell',
        vouch_role: 'analyst',
      });
      const res = await signIn('alice');
      assert.equal(res.headers.location, '/console/?sso=1');
      const cookies = cookiesOf(res);
      assert.match(cookies.get('vouch_sso') ?? '', /Expires=Thu, 01 Jan 1970/);
      const session = cookies.get('vouch_session') ?? '';
      assert.match(session, /HttpOnly/i);
      assert.match(session, /SameSite=Strict/i);
      firstCookie = pair(session);
      const who = await ctx().inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie: firstCookie } });
      assert.equal(who.statusCode, 200, who.body);
      const body = who.json();
      assert.equal(body.actor.type, 'user');
      assert.equal(body.actor.name, 'Alice Liddell');
      assert.equal(body.role, 'analyst');
      assert.ok(body.csrf_token);
      const row = await userByEmail(ctx().store.db, 'alice@desk.example');
      assert.ok(row);
      aliceId = row.id;
      assert.equal(body.actor.id, row.id);
      assert.equal(row.status, 'active');
      assert.equal(row.role, 'analyst');
      assert.equal(row.password_hash, null);
      const entries = await audit(row.id);
      assert.deepEqual(
        entries.map((e) => e.action),
        ['user.created', 'user.login'],
      );
      assert.deepEqual(JSON.parse(entries[0]!.after!), {
        email: 'alice@desk.example',
        name: 'Alice Liddell',
        role: 'analyst',
        via: 'sso',
      });
      assert.deepEqual(JSON.parse(entries[1]!.after!), { via: 'sso' });
    });

    test('a second sign-in follows a changed role claim (the highest of a list), audited; the old session ends', async () => {
      provider.accounts.set('alice', { ...provider.accounts.get('alice'), vouch_role: ['viewer', 'operator', 'chef'] });
      const res = await signIn('alice');
      assert.equal(res.headers.location, '/console/?sso=1');
      const cookie = pair(cookiesOf(res).get('vouch_session'));
      const who = await ctx().inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie } });
      assert.equal(who.json().role, 'operator');
      assert.equal((await userByEmail(ctx().store.db, 'alice@desk.example'))?.role, 'operator');
      // a session opened under the old role ends with the change, as with an admin's
      const old = await ctx().inject({ method: 'GET', url: '/api/v1/auth/session', headers: { cookie: firstCookie } });
      assert.equal(old.statusCode, 401);
      const entries = await audit(aliceId);
      const changed = entries.find((e) => e.action === 'user.role_changed');
      assert.ok(changed);
      assert.deepEqual(JSON.parse(changed.before!), { role: 'analyst' });
      assert.deepEqual(JSON.parse(changed.after!), { role: 'operator', via: 'sso' });
      assert.deepEqual(
        entries.map((e) => e.action),
        ['user.created', 'user.login', 'user.role_changed', 'user.login'],
      );
    });

    test('a disallowed domain, an unverified e-mail and a missing or unknown role are refused', async () => {
      provider.accounts.set('bob', { email: 'bob@elsewhere.example', email_verified: true, vouch_role: 'admin' });
      refusedWith(await signIn('bob'), 'domain');
      // a subdomain of an allowed domain is another domain
      provider.accounts.set('bob2', { email: 'bob@eu.desk.example', email_verified: true, vouch_role: 'admin' });
      refusedWith(await signIn('bob2'), 'domain');
      provider.accounts.set('carol', { email: 'carol@desk.example', email_verified: false, vouch_role: 'viewer' });
      refusedWith(await signIn('carol'), 'email');
      provider.accounts.set('dan', { email: 'dan@desk.example.org', email_verified: true });
      refusedWith(await signIn('dan'), 'role');
      provider.accounts.set('eve', { email: 'eve@desk.example', email_verified: true, vouch_role: 'root' });
      refusedWith(await signIn('eve'), 'role');
      for (const email of [
        'bob@elsewhere.example',
        'bob@eu.desk.example',
        'carol@desk.example',
        'dan@desk.example.org',
      ])
        assert.equal(await userByEmail(ctx().store.db, email), undefined, email);
    });

    test('a tampered state, a missing or altered flow cookie and a provider error are refused', async () => {
      provider.accounts.set('frank', { email: 'frank@desk.example', email_verified: true, vouch_role: 'viewer' });
      refusedWith(
        await signIn('frank', (callback) =>
          callback.searchParams.set('state', `${callback.searchParams.get('state')}x`),
        ),
        'state',
      );
      const start = await ctx().inject({ method: 'GET', url: '/api/v1/auth/sso/start' });
      const flow = pair(cookiesOf(start).get('vouch_sso'));
      const state = new URL(String(start.headers.location)).searchParams.get('state')!;
      const callback = (cookie: string | undefined, query: string) =>
        ctx().inject({
          method: 'GET',
          url: `/api/v1/auth/sso/callback?${query}`,
          headers: cookie === undefined ? {} : { cookie },
        });
      refusedWith(await callback(undefined, `code=abc&state=${state}`), 'state');
      const altered = `${flow.slice(0, -4)}${flow.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
      refusedWith(await callback(altered, `code=abc&state=${state}`), 'state');
      refusedWith(await callback(flow, `error=access_denied&state=${state}`), 'provider');
      // a forged code with the right state and cookie: the provider's token endpoint refuses it
      refusedWith(
        await callback(flow, `code=forged&state=${state}&iss=${encodeURIComponent(provider.issuer)}`),
        'exchange',
      );
      assert.equal(await userByEmail(ctx().store.db, 'frank@desk.example'), undefined);
    });

    test('a person deactivated by an admin stays refused; an invited one is activated', async () => {
      await updateUser(ctx().store.db, aliceId, { status: 'deactivated' });
      refusedWith(await signIn('alice'), 'deactivated');
      assert.equal((await userByEmail(ctx().store.db, 'alice@desk.example'))?.status, 'deactivated');

      const admin = { type: 'client' as const, id: 'admin-test', name: 'admin-test' };
      const { user } = await inviteUser(ctx().store, admin, {
        email: 'gina@desk.example',
        name: 'Gina',
        role: 'viewer',
      });
      provider.accounts.set('gina', { email: 'gina@desk.example', email_verified: true, vouch_role: 'viewer' });
      const res = await signIn('gina');
      assert.equal(res.headers.location, '/console/?sso=1');
      const row = await userByEmail(ctx().store.db, 'gina@desk.example');
      assert.equal(row?.id, user.id);
      assert.equal(row?.status, 'active');
      assert.equal(row?.invitation_digest, null);
      assert.deepEqual(
        (await audit(user.id)).map((e) => e.action),
        ['user.invited', 'user.activated', 'user.login'],
      );
    });
  });
}

describe('single sign-on off (no VOUCH_OIDC_ISSUER)', () => {
  let app: (TestContext & { close(): Promise<void> }) | undefined;
  before(async () => {
    app = await startApp('sqlite');
  });
  after(async () => {
    await app?.close();
  });

  test('GET /api/v1/auth/sso says so; /start and /callback answer 404', async () => {
    const status = await app!.inject({ method: 'GET', url: '/api/v1/auth/sso' });
    assert.deepEqual(status.json(), { enabled: false });
    problem(await app!.inject({ method: 'GET', url: '/api/v1/auth/sso/start' }), 404, 'not_found');
    problem(await app!.inject({ method: 'GET', url: '/api/v1/auth/sso/callback?code=x&state=y' }), 404, 'not_found');
  });
});
