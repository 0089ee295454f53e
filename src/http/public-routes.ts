// Every route that declares no scope, each with the reason it may (docs/api.md, "Public routes"). Authorisation is
// closed by default: a route without a scope that is not listed here stops the app at start, and the auth hook
// lets a request through without credentials only on a listed route. A route that needs credentials declares
// its scope instead (src/http/route.ts); one added here needs a reason a reviewer can weigh.
// Two kinds of entry: `public` (no credentials at all, or the route checks its own: the token endpoint, the
// metrics token) and `peer` (the network's peer protocol, authenticated by a peer's signature in the route's own
// hooks, not by an API credential; docs/decisions.md, "Routes without a scope").

type Access = 'public' | 'peer';

export interface UnscopedRoute {
  method: 'GET' | 'POST' | 'OPTIONS';
  /** the route's pattern as registered (`:name` parameters) */
  url: string;
  access: Access;
  reason: string;
  /** registered by a plugin, outside the route table (src/routes.ts) */
  plugin?: 'swagger-ui' | 'console' | 'cors';
  /** registered only under some configuration (so its absence is not a stale entry) */
  optional?: boolean;
  /**
   * a browser navigation that answers a redirect, not an API operation: left out of the OpenAPI document, and
   * 404 while its feature is not configured (single sign-on)
   */
  navigation?: boolean;
}

const route = (method: UnscopedRoute['method'], url: string, access: Access, reason: string): UnscopedRoute => ({
  method,
  url,
  access,
  reason,
});
const pluginRoute = (plugin: NonNullable<UnscopedRoute['plugin']>, url: string, reason: string): UnscopedRoute => ({
  ...route('GET', url, 'public', reason),
  plugin,
});

export const UNSCOPED_ROUTES: readonly UnscopedRoute[] = [
  route('GET', '/healthz', 'public', 'liveness probe of orchestrators and load balancers; says only "ok"'),
  route('GET', '/readyz', 'public', 'readiness probe; says only whether the store (and Redis) answer'),
  route('GET', '/metrics', 'public', 'Prometheus scrape; checks its own bearer token when VOUCH_METRICS_TOKEN is set'),
  route('GET', '/problems/:code', 'public', 'the page a problem document names in its `type`'),
  route('POST', '/api/v1/auth/token', 'public', 'the token endpoint: authenticates the client by its own secret'),
  route('POST', '/api/v1/auth/login', 'public', "a person's sign-in: checks their own e-mail and password"),
  route(
    'POST',
    '/api/v1/auth/invitations/accept',
    'public',
    'an invited person sets a password: checks the one-time token',
  ),
  route('POST', '/api/v1/auth/logout', 'public', 'ends the session its own cookie names (CSRF-checked); nothing else'),
  route('GET', '/api/v1/auth/sso', 'public', 'whether single sign-on is on and its issuer, for the sign-in page'),
  {
    ...route('GET', '/api/v1/auth/sso/start', 'public', "begins single sign-on: a redirect to the provider's sign-in"),
    navigation: true,
  },
  {
    ...route(
      'GET',
      '/api/v1/auth/sso/callback',
      'public',
      "the provider's redirect back: checks its own sealed state cookie, PKCE and the provider's ID token",
    ),
    navigation: true,
  },
  route('GET', '/.well-known/jwks.json', 'public', 'the public keys that verify access tokens'),
  route('GET', '/.well-known/oauth-authorization-server', 'public', 'OAuth discovery (RFC 8414)'),
  route('GET', '/.well-known/openid-configuration', 'public', 'the same metadata, where OpenID discovery looks'),
  route('GET', '/api/v1/openapi.json', 'public', 'the API description (no data, no secrets)'),
  route('GET', '/network/v1/descriptor', 'public', "the deployment's network identity (public keys) peers pin"),
  route(
    'GET',
    '/network/v1/flags',
    'peer',
    "peer signature: an active peer's signed pull of the flags published to it",
  ),
  route('POST', '/network/v1/evaluate', 'peer', "peer signature: an active peer's signed, budgeted OPRF evaluation"),
  pluginRoute('swagger-ui', '/docs', 'the interactive API reference (Swagger UI) and its static files'),
  pluginRoute('swagger-ui', '/docs/', 'the same page'),
  pluginRoute('swagger-ui', '/docs/static/index.html', 'the same page'),
  pluginRoute('swagger-ui', '/docs/static/swagger-initializer.js', "the page's script"),
  pluginRoute('swagger-ui', '/docs/json', 'the API description, as Swagger UI serves it'),
  pluginRoute('swagger-ui', '/docs/yaml', 'the API description, as YAML'),
  pluginRoute('swagger-ui', '/docs/static/*', "Swagger UI's bundled files"),
  pluginRoute('console', '/console', "the operator console's page; its API calls carry the operator's credentials"),
  pluginRoute('console', '/console/*', "the console's built files"),
  {
    ...route('OPTIONS', '/*', 'public', 'CORS preflight: answers with headers only, never runs a route'),
    plugin: 'cors',
    optional: true,
  },
];

// HEAD runs the GET route's handler (Fastify adds a HEAD route to every GET), so it is listed with its GET.
const listed = new Map(UNSCOPED_ROUTES.map((r) => [`${r.method} ${r.url}`, r.access]));
const key = (method: string, url: string) => `${method === 'HEAD' ? 'GET' : method} ${url}`;

/** How a route without a scope is authenticated: not at all (`public`), by a peer's signature, or not (refused). */
export function unscopedAccess(method: string, url: string | undefined): Access | undefined {
  return url === undefined ? undefined : listed.get(key(method, url));
}

interface RegisteredRoute {
  method: string | string[];
  url: string;
  config?: { scope?: unknown; peer?: unknown } | undefined;
  onRequest?: unknown;
}

/** Why the app must not start with this route (undefined: its authorisation is declared). */
export function undeclaredAccess(route: RegisteredRoute): string | undefined {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  for (const method of methods) {
    const name = `${method} ${route.url}`;
    const access = unscopedAccess(method, route.url);
    const { scope, peer } = route.config ?? {};
    if (scope !== undefined) {
      if (access) return `${name} declares a scope but is listed as ${access} in src/http/public-routes.ts`;
      if (peer) return `${name} declares both a scope and peer authentication`;
      continue;
    }
    if (!access) {
      return (
        `${name} declares no scope and is not a public route: declare config.scope (and role), or list it ` +
        'with a reason in src/http/public-routes.ts'
      );
    }
    const hooked = Array.isArray(route.onRequest) ? route.onRequest.length > 0 : route.onRequest !== undefined;
    if (access === 'peer' && !(peer === true && hooked))
      return `${name} is listed as peer-signed but does not declare config.peer with its signature check (onRequest)`;
    if (access === 'public' && peer) return `${name} declares peer authentication but is listed as public`;
  }
  return undefined;
}

/** Listed routes the app does not have: a stale list (`has` asks the app, e.g. app.hasRoute). */
export function missingUnscopedRoutes(has: (method: 'GET' | 'POST' | 'OPTIONS', url: string) => boolean): string[] {
  return UNSCOPED_ROUTES.filter((r) => !r.optional && !has(r.method, r.url)).map((r) => `${r.method} ${r.url}`);
}
