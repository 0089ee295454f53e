// The served OpenAPI document (issue 11 item 9): what Redocly's lint does not check on its own.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestContext } from '../helpers/app.ts';
import { SCOPES } from '../../src/lib/principal.ts';
import { UNSCOPED_ROUTES } from '../../src/http/public-routes.ts';

interface Operation {
  operationId?: string;
  summary?: string;
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content: Record<string, { example?: unknown; schema?: unknown }> };
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
}
interface Doc {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, unknown>;
    securitySchemes: Record<
      string,
      {
        type: string;
        flows?: { clientCredentials?: { tokenUrl: string; scopes: Record<string, string> } };
        in?: string;
        name?: string;
      }
    >;
  };
}

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, method, op })),
  );

/** A listed route as the document names its operation ("GET /problems/{code}"). */
const documentName = (r: { method: string; url: string }) =>
  `${r.method} ${r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
const UNSCOPED = new Set(UNSCOPED_ROUTES.map(documentName));

describe('OpenAPI document', () => {
  let ctx: (TestContext & { close(): Promise<void> }) | undefined;
  let doc: Doc;
  before(async () => {
    ctx = await startApp('sqlite');
    const res = await ctx.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = res.json() as Doc;
  });
  after(async () => {
    await ctx?.close();
  });

  test('every operation has an operationId, and no two share one', () => {
    const ids = operations(doc).map(({ name, op }) => {
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, `${name} has no readable operationId`);
      return op.operationId;
    });
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.includes('scoreTrust') && ids.includes('issueToken'));
  });

  test('every error response is application/problem+json with the shared Problem schema, and every response documents X-Request-Id', () => {
    assert.ok(doc.components.schemas.Problem);
    for (const { name, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        assert.ok(response.headers?.['X-Request-Id'], `${name} ${status} documents no X-Request-Id`);
        if (/^2/.test(status)) continue;
        assert.deepEqual(Object.keys(response.content ?? {}), ['application/problem+json'], `${name} ${status}`);
        assert.deepEqual(response.content!['application/problem+json'], {
          schema: { $ref: '#/components/schemas/Problem' },
        });
        if (status === '429')
          for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'])
            assert.ok(response.headers[h], `${name} 429 lacks ${h}`);
      }
      if (op.responses['201']) assert.ok(op.responses['201'].headers?.Location, `${name} 201 lacks Location`);
    }
  });

  test('every request body has an example', () => {
    for (const { name, op } of operations(doc)) {
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {}))
        assert.ok(media.example !== undefined, `${name} ${type} has no example`);
    }
  });

  test('a body that may be left out (read as {}) is documented optional; every other body is required', async () => {
    const optional = operations(doc)
      .filter(({ op }) => op.requestBody && op.requestBody.required !== true)
      .map(({ name }) => name)
      .sort();
    assert.deepEqual(optional, [
      'POST /api/v1/changes/{id}/approve',
      'POST /api/v1/changes/{id}/reject',
      'POST /api/v1/keys/{key_id}/rotate',
      'POST /api/v1/policies/fit',
      'POST /api/v1/policies/{version}/activate',
      'POST /api/v1/policies/{version}/backtest',
      'POST /api/v1/policies/{version}/shadow',
      'POST /api/v1/reviews/next',
      'POST /api/v1/rules/{id}/test',
    ]);
    // and the service takes them without one: a claim of the next review with no body at all
    const token = await ctx!.token(['reviews:read', 'reviews:write'], 'operator');
    const res = await ctx!.inject({
      method: 'POST',
      url: '/api/v1/reviews/next',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.statusCode, 204, res.body);
  });

  test('OAuth2 client credentials and the X-API-Key header, each with its scope on every protected operation', () => {
    const { oauth2, apiKey } = doc.components.securitySchemes;
    assert.equal(oauth2?.type, 'oauth2');
    assert.equal(oauth2.flows?.clientCredentials?.tokenUrl, '/api/v1/auth/token');
    assert.deepEqual(Object.keys(oauth2.flows!.clientCredentials!.scopes).sort(), [...SCOPES].sort());
    assert.equal(apiKey?.type, 'apiKey');
    assert.equal(apiKey.in, 'header');
    assert.equal(apiKey.name, 'X-API-Key');
    for (const { name, op } of operations(doc)) {
      assert.ok(Array.isArray(op.security), `${name} declares no security`);
      if (op.security.length === 0) continue;
      assert.ok(!UNSCOPED.has(name), `${name} is a public route but documents security`);
      const [scope] = op.security[0]!.oauth2 ?? [];
      assert.ok(scope && (SCOPES as readonly string[]).includes(scope), name);
      assert.deepEqual(op.security, [{ oauth2: [scope] }, { apiKey: [] }]);
    }
    assert.ok(operations(doc).filter(({ op }) => op.security!.length > 0).length >= 20);
  });

  test('exactly the listed public routes, and the peer-signed ones, document no security', () => {
    const open = operations(doc).filter(({ op }) => op.security?.length === 0);
    // The list, less what the document hides: its own JSON, what plugins serve (Swagger UI, console, CORS), and
    // the browser navigations (single sign-on's redirects).
    const documented = UNSCOPED_ROUTES.filter((r) => !r.plugin && !r.navigation && r.url !== '/api/v1/openapi.json');
    assert.deepEqual(open.map(({ name }) => name).sort(), documented.map(documentName).sort());
    const peerSigned = new Set(documented.filter((r) => r.access === 'peer').map(documentName));
    for (const { name, op } of open)
      if (peerSigned.has(name)) assert.match(op.summary ?? '', /signed peer request/, name);
  });

  test('every operation has a description naming its scope and, where one is declared, its role; tags are listed globally', () => {
    for (const { name, op } of operations(doc)) {
      const { description } = op as Operation & { description?: string };
      assert.ok(description, `${name} has no description`);
      const scope = op.security?.[0]?.oauth2?.[0];
      if (scope) assert.ok(description.includes(`\`${scope}\``), `${name}: ${description}`);
    }
    const erase = doc.paths['/api/v1/trust/entities/{entity_id}']!.delete as Operation & { description: string };
    assert.match(erase.description, /`trust:write` scope and role admin/);
    const createWebhook = doc.paths['/api/v1/webhooks']!.post as Operation & { description: string };
    assert.match(createWebhook.description, /`webhooks:write` scope and role operator or admin/);
    const tags = (doc as Doc & { tags: { name: string; description: string }[] }).tags.map((t) => t.name);
    for (const { op } of operations(doc))
      for (const tag of (op as Operation & { tags?: string[] }).tags ?? []) assert.ok(tags.includes(tag), tag);
  });

  test('servers: "/" without a public URL, the public URL when configured', async () => {
    assert.deepEqual(doc.servers, [{ url: '/' }]);
    const other = await startApp('sqlite', { publicUrl: 'https://vouch.example.org' });
    try {
      const served = (await other.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as Doc;
      assert.deepEqual(served.servers, [{ url: 'https://vouch.example.org' }]);
    } finally {
      await other.close();
    }
  });
});
