// Single sign-on's plain parts (docs/api.md, "People", "Single sign-on"): the role a claim grants,
// the e-mail domain check, the person a sign-in's claims describe, the sealed flow cookie, and the
// VOUCH_OIDC_* configuration.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/env.ts';
import { ConfigError } from '../../src/config/env-values.ts';
import type { KeyEncryption } from '../../src/lib/envelope.ts';
import {
  emailDomainAllowed,
  FLOW_TTL_MS,
  identityFromClaims,
  openFlow,
  roleFromClaim,
  sealFlow,
  SsoError,
  type Flow,
} from '../../src/people/sso.ts';

describe('the role a claim grants', () => {
  test('a known role; of a list the highest known one; case and spelling count', () => {
    assert.equal(roleFromClaim('viewer', undefined), 'viewer');
    assert.equal(roleFromClaim('admin', undefined), 'admin');
    assert.equal(roleFromClaim(['viewer', 'operator', 'analyst'], undefined), 'operator');
    assert.equal(roleFromClaim(['chef', 'analyst', 42, null], undefined), 'analyst');
    assert.equal(roleFromClaim(['admin', 'viewer'], undefined), 'admin');
    assert.equal(roleFromClaim('Admin', undefined), undefined);
    assert.equal(roleFromClaim(' admin', undefined), undefined);
  });

  test('absent or unknown: the default role when one is set, else none', () => {
    for (const value of [undefined, null, '', 'root', [], ['root'], 3, { role: 'admin' }]) {
      assert.equal(roleFromClaim(value, undefined), undefined, JSON.stringify(value));
      assert.equal(roleFromClaim(value, 'viewer'), 'viewer', JSON.stringify(value));
    }
    // a known role in the claim wins over the default, higher or lower
    assert.equal(roleFromClaim('analyst', 'operator'), 'analyst');
  });
});

describe('the e-mail domain check', () => {
  test('no list: any domain', () => {
    assert.equal(emailDomainAllowed('a@anything.example', []), true);
  });

  test('exactly a listed domain (case-insensitive), not a subdomain nor a suffix', () => {
    const allowed = ['desk.example', 'corp.example.org'];
    assert.equal(emailDomainAllowed('a@desk.example', allowed), true);
    assert.equal(emailDomainAllowed('a@DESK.Example', allowed), true);
    assert.equal(emailDomainAllowed('a@corp.example.org', allowed), true);
    assert.equal(emailDomainAllowed('a@eu.desk.example', allowed), false);
    assert.equal(emailDomainAllowed('a@evildesk.example', allowed), false);
    assert.equal(emailDomainAllowed('a@desk.example.evil', allowed), false);
    // the domain is what follows the last @
    assert.equal(emailDomainAllowed('a@desk.example@evil.example', allowed), false);
    assert.equal(emailDomainAllowed('desk.example', allowed), false);
    assert.equal(emailDomainAllowed('@desk.example', allowed), false);
  });
});

describe('the person a sign-in describes', () => {
  const settings: Parameters<typeof identityFromClaims>[1] = {
    roleClaim: 'vouch_role',
    defaultRole: undefined,
    allowedDomains: ['desk.example'],
  };
  const refusal = (claims: Record<string, unknown>, s = settings) => {
    try {
      identityFromClaims(claims, s);
    } catch (err) {
      assert.ok(err instanceof SsoError);
      return err.code;
    }
    return undefined;
  };

  test('a verified e-mail (lower-cased), the name or the address, and the role', () => {
    assert.deepEqual(
      identityFromClaims(
        { email: ' Ana@Desk.Example ', email_verified: true, name: 'Ana\u0007 Lee', vouch_role: 'operator' },
        settings,
      ),
      { email: 'ana@desk.example', name: 'Ana Lee', role: 'operator' },
    );
    assert.deepEqual(
      identityFromClaims(
        { email: 'bo@desk.example', email_verified: true, groups: ['admin'] },
        {
          ...settings,
          roleClaim: 'groups',
        },
      ),
      { email: 'bo@desk.example', name: 'bo', role: 'admin' },
    );
  });

  test('refused: no or unverified e-mail, another domain, no role (unless a default is set)', () => {
    const ok = { email: 'a@desk.example', email_verified: true, vouch_role: 'viewer' };
    assert.equal(refusal(ok), undefined);
    assert.equal(refusal({ ...ok, email: undefined }), 'email');
    assert.equal(refusal({ ...ok, email: 'not an address' }), 'email');
    assert.equal(refusal({ ...ok, email_verified: undefined }), 'email');
    assert.equal(refusal({ ...ok, email_verified: 'true' }), 'email');
    assert.equal(refusal({ ...ok, email: 'a@other.example' }), 'domain');
    assert.equal(refusal({ ...ok, vouch_role: undefined }), 'role');
    assert.equal(refusal({ ...ok, vouch_role: 'superuser' }), 'role');
    assert.equal(refusal({ ...ok, vouch_role: undefined }, { ...settings, defaultRole: 'viewer' }), undefined);
  });
});

describe('the sealed flow cookie', () => {
  const kek = (id: string) => ({ id, key: randomBytes(32) });
  const enc: KeyEncryption = { current: kek('k1'), previous: [], source: 'test' };
  const now = Date.now();
  const flow: Flow = { state: 's', nonce: 'n', verifier: 'v', expiresAt: now + FLOW_TTL_MS };

  test('opens under its key until it expires; altered, foreign or garbage: nothing', () => {
    const value = sealFlow(flow, enc.current);
    assert.match(value, /^[A-Za-z0-9_-]+$/);
    assert.ok(!Buffer.from(value, 'base64url').toString().includes('"verifier"'));
    assert.deepEqual(openFlow(value, enc, now), flow);
    assert.equal(openFlow(value, enc, flow.expiresAt), undefined);
    const bytes = Buffer.from(value, 'base64url');
    const sealed = JSON.parse(bytes.toString()) as { ct: string };
    const ct = Buffer.from(sealed.ct, 'base64url');
    ct[0]! ^= 1;
    const altered = Buffer.from(JSON.stringify({ ...sealed, ct: ct.toString('base64url') })).toString('base64url');
    assert.equal(openFlow(altered, enc, now), undefined);
    assert.equal(openFlow(value, { current: kek('k2'), previous: [], source: 'test' }, now), undefined);
    for (const garbage of [undefined, '', 'x', 'e30', 'A'.repeat(5000)])
      assert.equal(openFlow(garbage, enc, now), undefined);
  });

  test('a cookie sealed before a key rotation still opens with the previous key', () => {
    const value = sealFlow(flow, enc.current);
    assert.deepEqual(openFlow(value, { current: kek('k3'), previous: [enc.current], source: 'test' }, now), flow);
  });
});

describe('VOUCH_OIDC_* configuration', () => {
  const base = {
    VOUCH_PUBLIC_URL: 'https://vouch.example.org',
    VOUCH_OIDC_ISSUER: 'https://login.example.org/realms/desk',
    VOUCH_OIDC_CLIENT_ID: 'vouch',
  };
  const fails = (env: Record<string, string>, message: RegExp) =>
    assert.throws(
      () => loadConfig(env),
      (err: unknown) => err instanceof ConfigError && message.test(err.message),
    );

  test('off without an issuer; with one, the defaults', () => {
    assert.equal(loadConfig({}).oidc, undefined);
    assert.deepEqual(loadConfig(base).oidc, {
      issuer: 'https://login.example.org/realms/desk',
      clientId: 'vouch',
      clientSecret: undefined,
      roleClaim: 'vouch_role',
      defaultRole: undefined,
      allowedDomains: [],
    });
    const full = loadConfig({
      ...base,
      VOUCH_OIDC_CLIENT_SECRET: 'shh',
      VOUCH_OIDC_ROLE_CLAIM: 'https://vouch.example.org/role',
      VOUCH_OIDC_DEFAULT_ROLE: 'viewer',
      VOUCH_OIDC_ALLOWED_DOMAINS: ' Desk.Example , @corp.example.org,',
    }).oidc;
    assert.equal(full?.clientSecret, 'shh');
    assert.equal(full?.roleClaim, 'https://vouch.example.org/role');
    assert.equal(full?.defaultRole, 'viewer');
    assert.deepEqual(full?.allowedDomains, ['desk.example', 'corp.example.org']);
    // http:// only for a provider on this machine
    assert.equal(
      loadConfig({ ...base, VOUCH_OIDC_ISSUER: 'http://127.0.0.1:9000' }).oidc?.issuer,
      'http://127.0.0.1:9000',
    );
    assert.ok(loadConfig({ ...base, VOUCH_OIDC_ISSUER: 'http://localhost:9000/idp' }).oidc);
  });

  test('a bad or half setting stops the start, naming the variable', () => {
    fails({ VOUCH_OIDC_CLIENT_ID: 'vouch' }, /^VOUCH_OIDC_ISSUER must be set when VOUCH_OIDC_CLIENT_ID is/);
    fails({ VOUCH_OIDC_DEFAULT_ROLE: 'viewer' }, /^VOUCH_OIDC_ISSUER must be set/);
    fails({ ...base, VOUCH_OIDC_ISSUER: 'http://login.example.org' }, /^VOUCH_OIDC_ISSUER must be an https:\/\//);
    fails({ ...base, VOUCH_OIDC_ISSUER: 'login.example.org' }, /^VOUCH_OIDC_ISSUER/);
    fails({ ...base, VOUCH_OIDC_ISSUER: 'https://login.example.org/?a=1' }, /^VOUCH_OIDC_ISSUER/);
    fails({ ...base, VOUCH_OIDC_CLIENT_ID: '' }, /^VOUCH_OIDC_CLIENT_ID must be set/);
    fails({ ...base, VOUCH_PUBLIC_URL: '' }, /^VOUCH_PUBLIC_URL must be set when VOUCH_OIDC_ISSUER is/);
    fails({ ...base, VOUCH_OIDC_DEFAULT_ROLE: 'root' }, /^VOUCH_OIDC_DEFAULT_ROLE must be one of viewer, analyst/);
    fails({ ...base, VOUCH_OIDC_ROLE_CLAIM: 'vouch role' }, /^VOUCH_OIDC_ROLE_CLAIM/);
    fails({ ...base, VOUCH_OIDC_ALLOWED_DOMAINS: 'desk.example, not a domain' }, /^VOUCH_OIDC_ALLOWED_DOMAINS/);
  });
});
