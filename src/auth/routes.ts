// POST /api/v1/auth/token (client credentials, JSON or RFC 6749 form, secret in body or Basic)
// GET /.well-known/jwks.json and the OAuth metadata (RFC 8414, also at openid-configuration).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { ApiError, problemResponses, type FieldError } from '../http/problem.ts';
import { StringEnum } from '../http/validation.ts';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import type { Metrics } from '../http/observability.ts';
import { checkClient, type ClientCheck } from './clients.ts';
import { limitSource } from '../lib/source.ts';
import { authEvents } from './events.ts';
import { credentialHeaderCounts } from './authenticate.ts';
import type { KeyRing } from './signing-keys.ts';
import { SCOPES } from '../lib/principal.ts';
import type { TokenService } from './tokens.ts';

const TokenRequest = Type.Object(
  {
    // Checked by the handler, so another grant answers RFC 6749's unsupported_grant_type.
    grant_type: Type.Optional(Type.String({ maxLength: 100, description: 'client_credentials (the only grant)' })),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    scope: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);
type TokenRequest = Static<typeof TokenRequest>;

const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds' }),
  scopes: Type.Array(Type.String()),
  role: Type.String(),
  scope: Type.String({ description: 'the granted scopes, space-separated (RFC 6749 §5.1)' }),
  environment: StringEnum(['live', 'test'] as const, {
    description: "the data the token reads and writes (test mode): the client's environment",
  }),
  client_name: Type.String({
    description: "the client's name, as given when it was created (what an operator console shows)",
  }),
});

const ServerMetadata = Type.Object(
  {
    issuer: Type.String(),
    token_endpoint: Type.String(),
    jwks_uri: Type.String(),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
  },
  { description: 'RFC 8414 authorization server metadata' },
);

const problems = problemResponses(400, 401, 413, 415, 429);

export interface AuthRouteOptions {
  db: Kysely<Database>;
  tokens: TokenService;
  ring: KeyRing;
  /** token requests per minute from one address, whatever their outcome */
  tokenPerMinute: number;
  /** failed token requests per minute for one client_id from one address */
  tokenFailuresPerMinute: number;
  /** VOUCH_PUBLIC_URL; without it, absolute URLs are built from the request's host */
  publicUrl: string | undefined;
  metrics: Metrics;
  /** @fastify/rate-limit's limiter factory (the app's createRateLimit), whose counters the host shares */
  createRateLimit: FastifyInstance['createRateLimit'];
}

/**
 * RFC 6749 §2.3.1: credentials in HTTP Basic, each form-url-encoded. Many clients (curl -u, most
 * HTTP libraries) send them unencoded; `raw` keeps that reading for a second attempt.
 */
function basicCredentials(
  request: FastifyRequest,
): { id: string; secret: string; raw: { id: string; secret: string } } | undefined {
  const header = request.headers.authorization;
  const match = header && /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const raw = { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
  const formDecode = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return { id: formDecode(raw.id), secret: formDecode(raw.secret), raw };
}

export function authRoutes(options: AuthRouteOptions): RouteDefinition[] {
  const events = authEvents(options.metrics);
  // One limiter (and so one counter store) per dimension, created once: a limiter made per
  // request would start every count from zero.
  const clientOf = new WeakMap<FastifyRequest, string>();
  const perIp = options.createRateLimit({
    max: options.tokenPerMinute,
    timeWindow: 60_000,
    keyGenerator: (r) => `tok-ip:${limitSource(r.ip)}`,
  });
  // Failures count per client *and* source (an IPv6 /64 is one source): counted per client alone,
  // anyone who knows a client id (`admin`) could lock that client out of its own correct secret.
  // Generated secrets are 256-bit; an operator-chosen bootstrap secret should be long and random
  // (docs/operations.md), since no ceiling across sources stops a distributed guesser.
  const failures = options.createRateLimit({
    max: options.tokenFailuresPerMinute,
    timeWindow: 60_000,
    keyGenerator: (r) => `tok-fail:${limitSource(r.ip)}:${clientOf.get(r) ?? ''}`,
  });

  function tooMany(limit: { max: number; ttlInSeconds: number }, reply: FastifyReply, what: string): ApiError {
    const reset = String(Math.max(1, limit.ttlInSeconds));
    reply
      .header('ratelimit-limit', String(limit.max))
      .header('ratelimit-remaining', '0')
      .header('ratelimit-reset', reset);
    return new ApiError('rate_limited', `Too many ${what} (limit ${limit.max} per minute); retry later.`, {
      headers: { 'retry-after': reset },
    });
  }
  // RFC 8414: what discovery-based OAuth clients read to find the token endpoint. OpenID-style
  // clients (openid-client by default) look for the same document at openid-configuration.
  // `issuer` is the tokens' `iss`; such clients require it to equal the URL they discovered from,
  // hence the default issuer is the public URL, or the loopback name the request came through
  // (auth/issuer.ts; docs/operations.md, "OAuth discovery and token checks").
  const metadataPaths = [
    ['/.well-known/oauth-authorization-server', 'OAuth 2.0 authorization server metadata (RFC 8414)'],
    ['/.well-known/openid-configuration', 'The same metadata where OpenID Connect discovery looks for it'],
  ] as const;
  const metadataRoutes = metadataPaths.map(([path, summary]) =>
    defineRoute({
      method: 'GET',
      url: path,
      schema: {
        tags: ['auth'],
        summary,
        description:
          "No credentials needed. Absolute URLs come from VOUCH_PUBLIC_URL when set, else from the request's host.",
        response: { 200: ServerMetadata },
      },
      handler: async (request, reply) => {
        const base = options.publicUrl ?? `${request.protocol}://${request.host}`;
        reply.header('cache-control', 'public, max-age=300');
        return {
          issuer: options.tokens.issuerFor(`${request.protocol}://${request.host}`),
          token_endpoint: `${base}/api/v1/auth/token`,
          jwks_uri: `${base}/.well-known/jwks.json`,
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
          scopes_supported: [...SCOPES],
          // Required by RFC 8414 for servers with an authorization endpoint; this one has none.
          response_types_supported: [],
        };
      },
    }),
  );

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/auth/token',
      config: { oauth: true },
      schema: {
        tags: ['auth'],
        summary: 'Exchange client credentials for an access token',
        description:
          'JSON, or RFC 6749 form (grant_type=client_credentials) with the credentials in the body or in HTTP Basic (one of the two).',
        body: TokenRequest,
        response: { 200: TokenResponse, ...problems },
      },
      handler: async (request, reply) => {
        const ipLimit = await perIp(request);
        if (!ipLimit.isAllowed && ipLimit.isExceeded) throw tooMany(ipLimit, reply, 'token requests');
        const body = request.body ?? {};
        if (body.grant_type !== undefined && body.grant_type !== 'client_credentials') {
          throw new ApiError('validation_failed', 'Only the client_credentials grant is supported.', {
            errors: [{ field: 'grant_type', message: 'must be client_credentials' }],
            oauthError: 'unsupported_grant_type',
          });
        }
        const basic = basicCredentials(request);
        // Node keeps the first of repeated Authorization headers: which credential counts is ambiguous.
        if (credentialHeaderCounts(request).authorization > 1) {
          events.failure(request, 'conflicting_credentials');
          throw new ApiError('invalid_request', 'Send the Authorization header once.');
        }
        // RFC 6749 §2.3: one authentication method per request. A client_id repeated in the body
        // (some libraries add it) names the same client and is tolerated; a secret or another id is not.
        if (
          basic &&
          (body.client_secret !== undefined ||
            (body.client_id !== undefined && body.client_id !== basic.id && body.client_id !== basic.raw.id))
        ) {
          events.failure(request, 'conflicting_credentials');
          throw new ApiError(
            'invalid_request',
            'Send the client credentials either in HTTP Basic or in the body, not both.',
          );
        }
        const id = basic?.id ?? body.client_id;
        const secret = basic?.secret ?? body.client_secret;
        const missing: FieldError[] = [];
        if (!id) missing.push({ field: 'client_id', message: 'is required' });
        if (!secret) missing.push({ field: 'client_secret', message: 'is required' });
        if (missing.length > 0)
          throw new ApiError('validation_failed', 'client_id and client_secret are required.', {
            errors: missing,
          });
        clientOf.set(request, id!);
        const seen = await failures(request, { increment: false });
        if (!seen.isAllowed && seen.remaining === 0) {
          events.failure(request, 'token_lockout');
          throw tooMany(seen, reply, 'failed attempts for this client from this address');
        }

        let checkedId = id!;
        let check: ClientCheck = await checkClient(options.db, checkedId, secret!);
        if (!check.client && basic && (basic.raw.id !== id || basic.raw.secret !== secret)) {
          const raw = await checkClient(options.db, basic.raw.id, basic.raw.secret);
          if (raw.client || check.failure === 'unknown_client') {
            check = raw;
            checkedId = basic.raw.id;
          }
        }
        if (!check.client) {
          await failures(request);
          // The id is logged only when such a client exists: an unknown one may be a misplaced secret.
          events.failure(request, check.failure, check.failure === 'unknown_client' ? {} : { client_id: checkedId });
          const headers: Record<string, string> = basic
            ? { 'www-authenticate': 'Basic realm="vouch", error="invalid_client"' }
            : {};
          throw new ApiError('invalid_client', 'Unknown client, wrong secret, or deactivated client.', {
            headers,
          });
        }
        const { client } = check;
        const requested =
          body.scope === undefined ? client.scopes : [...new Set(body.scope.split(' ').filter(Boolean))];
        const notHeld = requested.filter((s) => !client.scopes.includes(s));
        if (notHeld.length > 0 || requested.length === 0) {
          throw new ApiError('invalid_scope', `The client does not hold: ${notHeld.join(' ') || '(empty scope)'}.`);
        }
        const { token, expiresIn } = await options.tokens.issue(
          client.client_id,
          client.role,
          requested,
          client.environment,
          `${request.protocol}://${request.host}`,
        );
        events.tokenIssued(request, client.client_id, requested);
        reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        return {
          access_token: token,
          token_type: 'Bearer' as const,
          expires_in: expiresIn,
          scopes: requested,
          role: client.role,
          scope: requested.join(' '),
          environment: client.environment,
          client_name: client.name,
        };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/.well-known/jwks.json',
      schema: { tags: ['auth'], summary: 'Public keys that verify access tokens' },
      handler: async (_request, reply) => {
        reply.header('cache-control', 'public, max-age=60');
        return options.ring.jwks();
      },
    }),
    ...metadataRoutes,
  ];
}
