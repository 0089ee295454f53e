// POST /api/v1/auth/token (client credentials, JSON or RFC 6749 form, secret in body or Basic)
// and GET /.well-known/jwks.json.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { ApiError, ProblemSchema, type FieldError } from '../http/problem.ts';
import { authenticateClient } from './clients.ts';
import type { KeyRing } from './signing-keys.ts';
import type { TokenService } from './tokens.ts';

const TokenRequest = Type.Object(
  {
    grant_type: Type.Optional(Type.Literal('client_credentials')),
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
});

const problems = { 400: ProblemSchema, 401: ProblemSchema, 413: ProblemSchema, 415: ProblemSchema, 429: ProblemSchema };

export interface AuthRouteOptions {
  db: Kysely<Database>;
  tokens: TokenService;
  ring: KeyRing;
  tokenPerMinute: number;
}

/** RFC 6749 §2.3.1: credentials in HTTP Basic, each form-url-encoded. */
function basicCredentials(request: FastifyRequest): { id: string; secret: string } | undefined {
  const header = request.headers.authorization;
  const match = header && /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')) };
  } catch {
    return undefined;
  }
}

export default async function authRoutes(app: FastifyInstance, options: AuthRouteOptions) {
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  const perIp = app.createRateLimit({ max: options.tokenPerMinute, timeWindow: 60_000, keyGenerator: (r) => `tok-ip:${r.ip}` });
  const perClient = (id: string) => app.createRateLimit({ max: options.tokenPerMinute, timeWindow: 60_000, keyGenerator: () => `tok-client:${id}` });

  async function enforce(check: ReturnType<typeof app.createRateLimit>, request: FastifyRequest) {
    const limit = await check(request);
    if (!limit.isAllowed && limit.isExceeded) {
      throw new ApiError(429, 'rate_limited', 'Too many token requests; retry later.', { headers: { 'retry-after': String(limit.ttlInSeconds) } });
    }
  }

  app.post<{ Body: TokenRequest }>('/api/v1/auth/token', {
    config: { oauth: true },
    schema: {
      tags: ['auth'],
      summary: 'Exchange client credentials for an access token',
      description: 'JSON, or RFC 6749 form (grant_type=client_credentials) with the credentials in the body or in HTTP Basic.',
      body: TokenRequest,
      response: { 200: TokenResponse, ...problems },
    },
  }, async (request, reply) => {
    await enforce(perIp, request);
    const body = request.body ?? {};
    const basic = basicCredentials(request);
    const id = basic?.id ?? body.client_id;
    const secret = basic?.secret ?? body.client_secret;
    const missing: FieldError[] = [];
    if (!id) missing.push({ field: 'client_id', message: 'is required' });
    if (!secret) missing.push({ field: 'client_secret', message: 'is required' });
    if (missing.length > 0) throw new ApiError(400, 'validation_failed', 'client_id and client_secret are required.', { errors: missing });
    await enforce(perClient(id!), request);

    const client = await authenticateClient(options.db, id!, secret!);
    if (!client) {
      const headers: Record<string, string> = basic ? { 'www-authenticate': 'Basic realm="vouch"' } : {};
      throw new ApiError(401, 'invalid_client', 'Unknown client, wrong secret, or deactivated client.', { headers });
    }
    const requested = body.scope === undefined ? client.scopes : [...new Set(body.scope.split(' ').filter(Boolean))];
    const notHeld = requested.filter((s) => !client.scopes.includes(s));
    if (notHeld.length > 0 || requested.length === 0) {
      throw new ApiError(400, 'invalid_scope', `The client does not hold: ${notHeld.join(' ') || '(empty scope)'}.`);
    }
    const { token, expiresIn } = await options.tokens.issue(client.client_id, client.role, requested);
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn, scopes: requested, role: client.role };
  });

  app.get('/.well-known/jwks.json', {
    schema: { tags: ['auth'], summary: 'Public keys that verify access tokens' },
  }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=60');
    return options.ring.jwks();
  });
}
