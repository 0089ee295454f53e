// The auth layer: runs before body parsing on every route, so an unauthenticated caller learns nothing about
// validation. Closed by default: a route that declares a scope needs a credential holding it (one of two, never
// both); a route without one passes only if http/public-routes.ts lists it, and the app does not start with any
// other (docs/api.md, "Public routes").
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Forbidden, Invalid, Limited, Unauthenticated } from '../lib/domain-errors.ts';
import { undeclaredAccess, unscopedAccess } from '../http/public-routes.ts';
import { OPERATOR_SCOPES, roleAtLeast, type Principal, type Role, type Scope } from '../lib/principal.ts';
import type { TokenService } from './tokens.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { authEvents, type AuthEvents } from './events.ts';
import { personRoleAtLeast, personRoleNeeded, type PersonRole } from '../lib/person-roles.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** who is calling: set first on every route that declares a scope (the only routes that read it) */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** the scope a route requires; a route without one must be listed in http/public-routes.ts */
    scope?: Scope;
    /** the lowest role a route admits (checked with the scope, before idempotent replays and handlers) */
    role?: Role;
    /** the lowest person role, where scope and role alone would admit people who should not (person-roles.ts) */
    person?: PersonRole;
    /** the token endpoint: errors carry RFC 6749 members */
    oauth?: boolean;
  }
}

interface AuthOptions {
  tokens: TokenService;
  /** the API-key check (src/keys/verifier.ts), handed in so that auth does not import keys */
  keys: { verify(raw: string): Promise<Principal | undefined> };
  feed: ChangeFeed;
  rateLimit: { perSecond: number; burst: number };
  /**
   * The console's session cookie (src/people/sessions.ts), handed in so that auth does not import
   * people: `has` says whether a request carries one, `resolve` gives its person or undefined.
   */
  sessions?: {
    has(request: FastifyRequest): boolean;
    resolve(request: FastifyRequest): Promise<Principal | undefined>;
  };
}

const BEARER_SCHEME = /^Bearer(?: |$)/i;
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const BEARER_API_KEY = /^Bearer +(vch_\S*) *$/i;

function unauthenticated(detail: string, tokenSent: boolean): Unauthenticated {
  const challenge = tokenSent ? 'Bearer realm="vouch", error="invalid_token"' : 'Bearer realm="vouch"';
  return new Unauthenticated(detail, { challenge });
}

/**
 * How often each credential header was sent. Node keeps the first of repeated Authorization
 * headers and joins repeated X-API-Key values with ", ", so either would silently pick or mangle
 * a credential; the raw header list shows the repeats.
 */
export function credentialHeaderCounts(request: FastifyRequest): { authorization: number; apiKey: number } {
  const raw = request.raw.rawHeaders;
  let authorization = 0;
  let apiKey = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++;
    else if (name.length === 9 && name.toLowerCase() === 'x-api-key') apiKey++;
  }
  return { authorization, apiKey };
}

async function resolvePrincipal(request: FastifyRequest, options: AuthOptions, events: AuthEvents): Promise<Principal> {
  const { authorization } = request.headers;
  const apiKey = request.headers['x-api-key'];
  const counts = credentialHeaderCounts(request);
  if (counts.authorization > 1 || counts.apiKey > 1) {
    events.failure(request, 'conflicting_credentials');
    throw new Invalid('Send the Authorization or X-API-Key header once.', undefined, 'invalid_request');
  }
  if (authorization !== undefined && apiKey !== undefined) {
    events.failure(request, 'conflicting_credentials');
    throw new Invalid('Send either Authorization: Bearer or X-API-Key, not both.', undefined, 'invalid_request');
  }
  await options.feed.poll();
  // Stripe and Unkey habits: an API key sent as a bearer credential is the same as X-API-Key.
  const bearerKey = authorization !== undefined ? BEARER_API_KEY.exec(authorization)?.[1] : undefined;
  if (apiKey !== undefined || bearerKey !== undefined) {
    const sent = apiKey ?? bearerKey;
    const principal = typeof sent === 'string' ? await options.keys.verify(sent) : undefined;
    if (!principal) {
      events.failure(request, 'invalid_api_key');
      throw unauthenticated('The API key is invalid, expired or deactivated.', true);
    }
    return principal;
  }
  if (authorization === undefined && options.sessions?.has(request)) {
    const person = await options.sessions.resolve(request);
    if (!person) {
      events.failure(request, 'invalid_session');
      throw unauthenticated('The session has ended: sign in again.', true);
    }
    return person;
  }
  if (authorization === undefined) {
    events.failure(request, 'missing_credentials');
    throw unauthenticated('Credentials are required: Authorization: Bearer <token> or X-API-Key.', false);
  }
  // RFC 6750 §3.1: another scheme carries no token to call invalid (plain challenge); a Bearer
  // credential that is not even a well-formed token is an invalid token.
  if (!BEARER_SCHEME.test(authorization)) {
    events.failure(request, 'unsupported_scheme');
    throw unauthenticated('Only the Bearer authorization scheme is accepted.', false);
  }
  const match = BEARER.exec(authorization);
  if (!match) {
    events.failure(request, 'malformed_token');
    throw unauthenticated('The access token is malformed.', true);
  }
  const principal = await options.tokens.verify(match[1]!);
  if (!principal) {
    events.failure(request, 'invalid_token');
    throw unauthenticated('The access token is invalid or expired.', true);
  }
  return principal;
}

export default fp(async function authenticate(app: FastifyInstance, options: AuthOptions) {
  const windowMs = Math.max(1, Math.round((options.rateLimit.burst / options.rateLimit.perSecond) * 1000));
  // @fastify/rate-limit counts per fixed window; a window of burst/rate seconds holding `burst`
  // requests allows the configured burst while keeping the average at the configured rate.
  const checkLimit = app.createRateLimit({
    max: options.rateLimit.burst,
    timeWindow: windowMs,
    keyGenerator: (request) => `p:${request.principal.id}`,
  });

  // No value until the hook below sets it: routes without a scope have no principal.
  app.decorateRequest('principal');
  const events = authEvents(app.metrics);

  app.addHook('onRoute', (route) => {
    const undeclared = undeclaredAccess(route);
    if (undeclared) throw new Error(undeclared);
    const config = route.config as { scope?: Scope; role?: Role } | undefined;
    if (config?.role && !config.scope) throw new Error(`${route.method} ${route.url}: a role needs a scope`);
    if (config?.scope && OPERATOR_SCOPES.has(config.scope) && !(config.role && roleAtLeast(config.role, 'operator'))) {
      throw new Error(`${route.method} ${route.url}: ${config.scope} routes must declare role operator or admin`);
    }
  });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const scope = request.routeOptions.config.scope;
    if (!scope) {
      // No route matched: the not-found handler answers, and reveals nothing.
      if (request.is404) return;
      // A peer route's own onRequest hook checks the peer's signature (network/peer-auth.ts).
      const access = unscopedAccess(request.method, request.routeOptions.url);
      if (access === 'public' || (access === 'peer' && request.routeOptions.config.peer === true)) return;
      // Unreachable while onRoute refuses such routes; were one registered around it, it serves nobody.
      throw new Error(`${request.method} ${request.routeOptions.url}: no scope and not a public route`);
    }
    const principal = await resolvePrincipal(request, options, events);
    request.principal = principal;
    const limit = await checkLimit(request);
    if (!limit.isAllowed) {
      const reset = String(limit.ttlInSeconds);
      reply
        .header('ratelimit-limit', String(limit.max))
        .header('ratelimit-remaining', String(limit.remaining))
        .header('ratelimit-reset', reset);
      if (limit.isExceeded) {
        throw new Limited(
          `Rate limit of ${options.rateLimit.perSecond}/s (burst ${options.rateLimit.burst}) exceeded.`,
          reset,
        );
      }
    }
    const role = request.routeOptions.config.role;
    const refusal = principal.personRole
      ? personRefusal(principal.personRole, scope, role, request.routeOptions.config.person)
      : !principal.scopes.has(scope)
        ? `This operation requires the ${scope} scope.`
        : role && !roleAtLeast(principal.role, role)
          ? `This operation requires the ${scope} scope and role ${role === 'admin' ? 'admin' : `${role} or admin`}.`
          : undefined;
    if (refusal) {
      events.failure(request, 'insufficient_scope', { principal_id: principal.id, client_id: principal.clientId });
      // A missing role answers like a missing scope (docs/api.md, "Errors"): the challenge names the route's scope.
      throw new Forbidden(refusal, 'insufficient_scope', {
        challenge: `Bearer realm="vouch", error="insufficient_scope", scope="${scope}"`,
      });
    }
  });
});

/** A person is admitted by their role (docs/api.md, "People", the table of roles), not by a machine role. */
function personRefusal(
  role: PersonRole,
  scope: Scope,
  routeRole: Role | undefined,
  floor: PersonRole | undefined,
): string | undefined {
  const needed = personRoleNeeded(scope, routeRole, floor);
  return personRoleAtLeast(role, needed)
    ? undefined
    : `This operation requires the ${scope} scope, which a person holds from the ${needed} role up.`;
}
