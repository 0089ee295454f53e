// OpenAPI 3.1 generated from the same TypeBox schemas that validate requests, served as JSON and
// as an interactive Swagger UI page (served from the package: no CDN needed). The document is
// completed here, centrally, for every route: operationIds, named component schemas, problem+json
// error responses, security requirements, response headers and request examples
// (`npm run lint:openapi` holds it to Redocly's recommended rules).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { defineRoute, type RouteDefinition } from './route.ts';
import swagger from '@fastify/swagger';
import { addTags, operationDescription, operationIdFor } from './docs-operations.ts';

type Json = Record<string, unknown>;

const pascal = (id: string) => id[0]!.toUpperCase() + id.slice(1);
const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
const REQUEST_ID = header('The request id, also the `request_id` of a problem document', { type: 'string' });
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': header('Requests allowed in the current window', { type: 'integer' }),
  'RateLimit-Remaining': header('Requests left in the current window', { type: 'integer' }),
  'RateLimit-Reset': header('Seconds until the window resets', { type: 'integer' }),
  'Retry-After': header('Seconds to wait before retrying', { type: 'integer' }),
};

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Json).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );

/** Completes the generated document (see the file comment). Exported for the tests. */
function completeDocument(
  doc: Json,
  publicUrl?: string,
  examples: Record<string, unknown> = {},
  optionalBodies: ReadonlySet<string> = new Set(),
): Json {
  const components = (doc.components ??= {}) as Json;
  const schemas = (components.schemas ??= {}) as Record<string, Json>;
  // Components named by their $id/title rather than def-N.
  const named: Record<string, Json> = {};
  const renamed = new Map<string, string>();
  for (const [key, schema] of Object.entries(schemas)) {
    const name = /^def-\d+$/.test(key) && typeof schema.title === 'string' && !named[schema.title] ? schema.title : key;
    named[name] = schema;
    renamed.set(`#/components/schemas/${key}`, `#/components/schemas/${name}`);
  }
  const rename = (value: unknown): void => {
    if (!value || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value as Json)) {
      if (k === '$ref' && typeof v === 'string' && renamed.has(v)) (value as Json).$ref = renamed.get(v);
      else rename(v);
    }
  };
  rename(doc.paths);
  rename(named);
  const byShape = new Map<string, string>();
  const register = (name: string, schema: Json) => {
    named[name] = schema;
    byShape.set(canonical(schema), name);
  };
  for (const [name, schema] of Object.entries(named)) byShape.set(canonical(schema), name);
  const refTo = (schema: Json | undefined, fallbackName?: string): Json | undefined => {
    if (!schema || typeof schema.$ref === 'string') return schema;
    const known = byShape.get(canonical(schema));
    if (known) return { $ref: `#/components/schemas/${known}` };
    if (!fallbackName || (schema.type !== 'object' && schema.type !== 'array')) return schema;
    let name = fallbackName;
    for (let i = 2; named[name]; i++) name = `${fallbackName}${i}`;
    register(name, schema);
    return { $ref: `#/components/schemas/${name}` };
  };
  const problemRef = { $ref: '#/components/schemas/Problem' };

  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const operationId = (op.operationId as string | undefined) ?? operationIdFor(method, path);
      op.operationId = operationId;
      op.security ??= [];
      const body = op.requestBody as { content?: Record<string, Json>; required?: boolean } | undefined;
      if (body && optionalBodies.has(operationId)) body.required = false;
      for (const media of Object.values(body?.content ?? {})) {
        media.schema = refTo(media.schema as Json, `${pascal(operationId)}Request`);
        if (examples[operationId] !== undefined) media.example = examples[operationId];
      }
      const responses = (op.responses ??= {}) as Record<string, Json>;
      const protectedOp = (op.security as unknown[]).length > 0;
      if (!Object.keys(responses).some((s) => /^4/.test(s))) responses['429'] = { description: 'Too many requests' };
      for (const [status, response] of Object.entries(responses)) {
        const headers = (response.headers ??= {}) as Json;
        headers['X-Request-Id'] = REQUEST_ID;
        if (/^[45]/.test(status)) {
          response.description ??= 'RFC 9457 problem details';
          if (response.description === 'Default Response') response.description = 'RFC 9457 problem details';
          response.content = { 'application/problem+json': { schema: problemRef } };
          if (status === '429') Object.assign(headers, RATE_LIMIT_HEADERS);
          if (status === '401' && protectedOp) headers['WWW-Authenticate'] = header('The Bearer challenge (RFC 6750)');
          continue;
        }
        if (status === '201') headers.Location = header('URL of the created resource');
        if (method === 'post' && protectedOp && (status === '200' || status === '201')) {
          headers['Idempotent-Replayed'] = header(
            '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
            { type: 'string', enum: ['true'] },
          );
        }
        const content = response.content as Record<string, Json> | undefined;
        if (/^2/.test(status))
          for (const media of Object.values(content ?? {}))
            media.schema = refTo(media.schema as Json, `${pascal(operationId)}Response`);
      }
    }
  }
  components.schemas = named;
  addTags(doc);
  (doc.info as Json).contact = publicUrl
    ? { name: 'Vouch operators', url: `${publicUrl.replace(/\/+$/, '')}/docs` }
    : { name: 'Vouch operators' };
  doc.servers = publicUrl ? [{ url: publicUrl.replace(/\/+$/, '') || '/' }] : [{ url: '/' }];
  return doc;
}

export interface SwaggerOptions {
  publicUrl?: string;
  /** every scope a route may require, for the OAuth scheme's list */
  scopes: readonly string[];
  /** request-body examples by operationId (what Swagger UI's "Try it out" opens with) */
  examples?: Record<string, unknown>;
}

export const swaggerPlugin = fp(async function swaggerSetup(app: FastifyInstance, options: SwaggerOptions) {
  // operationIds of the routes whose body may be left out (route config bodyOptional), gathered as
  // routes are documented, for completeDocument
  const optionalBodies = new Set<string>();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vouch',
        version: '1.0.0',
        description:
          'Counterparty-risk scoring and dispute analysis for P2P crypto/fiat marketplaces. Errors are RFC 9457 problem documents.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            description:
              'OAuth 2.0 client credentials: POST the client id and secret to /api/v1/auth/token, send the access token as `Authorization: Bearer …`.',
            flows: {
              clientCredentials: {
                tokenUrl: '/api/v1/auth/token',
                scopes: Object.fromEntries(options.scopes.map((s) => [s, `The ${s} scope`])),
              },
            },
          },
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: 'An API key (vch_live_… or vch_test_…) with the scopes it was issued with.',
          },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const config = route.config as
        { scope?: string; role?: string; operationId?: string; bodyOptional?: boolean } | undefined;
      if (!schema) return { schema, url };
      const method = Array.isArray(route.method) ? route.method[0]! : route.method;
      const openapiUrl = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const extra: Json = { operationId: config?.operationId ?? operationIdFor(method, openapiUrl) };
      if (config?.bodyOptional) optionalBodies.add(extra.operationId as string);
      // An API key carries its scopes itself: OpenAPI lists scopes for OAuth requirements only, so the
      // key's requirement is plain and the description names the scope and role.
      extra.security = config?.scope ? [{ oauth2: [config.scope] }, { apiKey: [] }] : [];
      if (schema.description === undefined) extra.description = operationDescription(schema.summary, config);
      return { schema: { ...schema, ...extra } as typeof schema, url };
    },
    transformObject: (documentObject) =>
      completeDocument(
        (documentObject as { openapiObject: Json }).openapiObject,
        options.publicUrl,
        options.examples,
        optionalBodies,
      ) as never,
  });
});
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'self'; " +
  "img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self'";

/** The served OpenAPI document; `document` is the app's swagger() (built once all routes are registered). */
export function docsRoutes({ document }: { document: () => unknown }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/openapi.json',
      schema: { hide: true },
      handler: async () => document(),
    }),
  ];
}

/** The interactive reference at /docs: Swagger UI's own static routes, mounted as its plugin. */
export async function swaggerUiPlugin(app: FastifyInstance) {
  const { default: swaggerUi } = await import('@fastify/swagger-ui');
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The package's own policy (staticCSP: true) says upgrade-insecure-requests, which makes a
    // browser fetch the page's scripts over https: from any host but localhost — a blank page on
    // a plain-HTTP internal host. This one allows the same origin only, so the page also works
    // offline (the bundle needs no inline script or style).
    staticCSP: DOCS_CSP,
    // Swagger UI would otherwise send the document to validator.swagger.io for its badge.
    uiConfig: { url: '/api/v1/openapi.json', deepLinking: true, tryItOutEnabled: true, validatorUrl: null },
  });
}
