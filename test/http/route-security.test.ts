// The shared security test (after Unkey's runSharedRoleTests): generated from the route table the app registers,
// so a new route is covered the day it is added. For every route that declares a scope: no credentials is 401
// with a Bearer challenge; a token or API key holding every scope but the route's is 403 insufficient_scope
// naming it; a role below the declared one is refused the same way; the declared scope and role pass. The check
// runs before validation: every request carries a body no schema accepts, and placeholder path parameters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { SCOPES, roleAtLeast, type Role, type Scope } from '../../src/lib/principal.ts';
import type { RouteDefinition } from '../../src/http/route.ts';
import { PERSON_ROLES, personRoleAtLeast, personRoleNeeded, type PersonRole } from '../../src/lib/person-roles.ts';
import { person } from '../helpers/people.ts';

interface ProtectedRoute {
  name: string;
  method: string;
  url: string;
  scope: Scope;
  role: Role | undefined;
  person: PersonRole | undefined;
}

const ULID = '01HZY8Q5W6J9V2N4K7M3P5R8T1';
const PLACEHOLDERS: Record<string, string> = {
  key_id: `key_${ULID}`,
  entity_id: 'a'.repeat(64),
  id: ULID,
  name: 'blocked-emails',
  value: 'placeholder',
  version: '1',
  job_id: `job_${ULID}`,
  webhook_id: `wh_${ULID}`,
  delivery_id: `dlv_${ULID}`,
  peer_id: `peer_${ULID}`,
};
const ROLES: Role[] = ['service', 'operator', 'admin'];

/** The table's routes that declare a scope, one entry per method. */
function protectedRoutes(table: readonly RouteDefinition[]): ProtectedRoute[] {
  return table.flatMap((definition) => {
    const scope = definition.config?.scope;
    if (!scope) return [];
    const methods = Array.isArray(definition.method) ? definition.method : [definition.method];
    return methods.map((method) => ({
      name: `${method} ${definition.url}`,
      method,
      url: definition.url,
      scope,
      role: definition.config?.role,
      person: definition.config?.person,
    }));
  });
}

const concrete = (url: string) =>
  url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(PLACEHOLDERS[name] ?? 'placeholder'));

/** A request to the route that no schema accepts: the refusal must come before validation. */
function call(ctx: TestContext, route: ProtectedRoute, headers: Record<string, string> = {}) {
  const withBody = route.method !== 'GET' && route.method !== 'HEAD';
  return ctx.inject({
    method: route.method as 'GET',
    url: concrete(route.url),
    headers,
    ...(withBody ? { payload: { not_a_field_of_any_schema: [null] } } : {}),
  });
}

function assertRefusedForScope(res: LightMyRequestResponse, route: ProtectedRoute, credential: string): void {
  const body = problem(res, 403, 'insufficient_scope');
  assert.equal(
    res.headers['www-authenticate'],
    `Bearer realm="vouch", error="insufficient_scope", scope="${route.scope}"`,
    `${route.name} (${credential})`,
  );
  assert.match(String(body.detail), new RegExp(`\\b${route.scope}\\b`), `${route.name} (${credential})`);
}

describeEachBackend('every route that declares a scope', (ctx) => {
  // Credentials by what they hold, made once per suite.
  const tokens = new Map<string, Promise<string>>();
  const keys = new Map<string, Promise<string>>();
  const tokenFor = (scopes: Scope[], role: Role) => {
    const id = `${role} ${scopes.join(' ')}`;
    if (!tokens.has(id)) tokens.set(id, ctx().token(scopes, role));
    return tokens.get(id)!;
  };
  const apiKeyFor = (scopes: Scope[], role: Role) => {
    const id = `${role} ${scopes.join(' ')}`;
    if (!keys.has(id)) {
      const created = ctx()
        .token()
        .then((admin) =>
          ctx().inject({
            method: 'POST',
            url: '/api/v1/keys',
            headers: bearer(admin),
            payload: { name: 'route security', scopes, role },
          }),
        )
        .then((res) => {
          assert.equal(res.statusCode, 201, res.body);
          return (res.json() as { key: string }).key;
        });
      keys.set(id, created);
    }
    return keys.get(id)!;
  };
  const allBut = (scope: Scope) => SCOPES.filter((s) => s !== scope);
  const routes = () => protectedRoutes(ctx().app.routeTable);

  test('the table has protected routes of every scope, and some that declare a role', () => {
    const all = routes();
    assert.ok(all.length >= 60, `only ${all.length} protected routes`);
    assert.deepEqual(new Set(all.map((r) => r.scope)), new Set(SCOPES));
    assert.ok(all.some((r) => r.role === 'operator') && all.some((r) => r.role === 'admin'));
  });

  test('no credentials: 401 with a Bearer challenge, GET routes by HEAD too', async (t) => {
    for (const route of routes()) {
      await t.test(route.name, async () => {
        const heads = route.method === 'GET' ? [route, { ...route, method: 'HEAD' }] : [route];
        for (const r of heads) {
          const res = await call(ctx(), r);
          assert.equal(res.statusCode, 401, `${r.method} ${r.url}: ${res.body}`);
          assert.equal(res.headers['www-authenticate'], 'Bearer realm="vouch"', `${r.method} ${r.url}`);
          if (r.method !== 'HEAD') problem(res, 401, 'unauthenticated');
        }
      });
    }
  });

  test('a token or API key with every scope but the route’s, even an admin’s: 403 naming the scope', async (t) => {
    for (const route of routes()) {
      await t.test(route.name, async () => {
        const token = await tokenFor(allBut(route.scope), 'admin');
        assertRefusedForScope(await call(ctx(), route, bearer(token)), route, 'token');
        const key = await apiKeyFor(allBut(route.scope), 'admin');
        assertRefusedForScope(await call(ctx(), route, { 'x-api-key': key }), route, 'API key');
      });
    }
  });

  test('a role below the declared one, with every scope: 403 insufficient_scope naming the scope', async (t) => {
    const withRole = routes().filter((r) => r.role && r.role !== 'service');
    assert.ok(withRole.length >= 15, `only ${withRole.length} routes declare a role above service`);
    for (const route of withRole) {
      await t.test(route.name, async () => {
        for (const role of ROLES.filter((r) => !roleAtLeast(r, route.role!))) {
          const res = await call(ctx(), route, bearer(await tokenFor([...SCOPES], role)));
          assertRefusedForScope(res, route, `role ${role}`);
          assert.match(String(problem(res, 403, 'insufficient_scope').detail), new RegExp(`role ${route.role}`));
        }
      });
    }
  });

  test('people: each role passes exactly the routes its row of the roles table admits (docs/api.md, "People")', async (t) => {
    const admin = await ctx().token();
    const tokens = new Map<PersonRole, string>();
    for (const role of PERSON_ROLES) {
      const p = await person(ctx(), role, admin);
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: p.email, password: p.password, token: true },
      });
      tokens.set(role, res.json().access_token as string);
    }
    for (const route of routes()) {
      await t.test(route.name, async () => {
        const needed = personRoleNeeded(route.scope, route.role, route.person);
        for (const role of PERSON_ROLES) {
          const res = await call(ctx(), route, bearer(tokens.get(role)!));
          if (!personRoleAtLeast(role, needed)) assertRefusedForScope(res, route, `person ${role}`);
          else {
            assert.notEqual(res.statusCode, 401, `${route.name} (person ${role}): ${res.body}`);
            if (res.statusCode === 403) assert.notEqual(res.json().code, 'insufficient_scope', res.body);
          }
        }
      });
    }
  });

  test('the declared scope and role alone pass the check (what follows is the route’s own answer)', async (t) => {
    for (const route of routes()) {
      await t.test(route.name, async () => {
        const res = await call(ctx(), route, bearer(await tokenFor([route.scope], route.role ?? 'service')));
        assert.notEqual(res.statusCode, 401, `${route.name}: ${res.body}`);
        if (res.statusCode === 403) assert.notEqual(res.json().code, 'insufficient_scope', res.body);
      });
    }
  });
});
