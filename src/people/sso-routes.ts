// Single sign-on over HTTP (docs/api.md, "People", "Single sign-on"). Three public routes: whether
// SSO is on (the console shows "Sign in with SSO"), /start (302 to the provider, the flow in a
// sealed SameSite=Lax cookie: the provider's redirect back is a cross-site top-level navigation,
// which a Strict cookie would miss) and /callback (the flow's checks in ./sso.ts, then a session
// opened exactly as the password login opens one, and 302 to the console). A refused sign-in is
// logged and redirected to `/console/?sso_error=<code>`; nothing of the error reaches the page.
// /start and /callback are browser navigations (redirects), so the OpenAPI document leaves them out.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Config } from '../config/env.ts';
import type { Store } from '../store/db.ts';
import type { KeyEncryption } from '../lib/envelope.ts';
import { limitSource } from '../lib/source.ts';
import { ApiError } from '../http/problem.ts';
import { defineRoute, type RouteDefinition } from '../http/route.ts';
import { recordAudit } from '../audit-log/repository.ts';
import { openSession, sessionCookie } from './sessions.ts';
import {
  FLOW_TTL_MS,
  OidcClient,
  SSO_CALLBACK_PATH,
  SsoError,
  identityFromClaims,
  openFlow,
  sealFlow,
  signInPerson,
} from './sso.ts';

const tags = ['people'];
const FLOW_COOKIE = 'vouch_sso';
const COOKIE_PATH = '/api/v1/auth/sso';
const SIGNED_IN = '/console/?sso=1';
const refused = (code: string) => `/console/?sso_error=${code}`;

interface SsoRouteOptions {
  store: Store;
  config: Pick<Config, 'oidc' | 'publicUrl' | 'rateLimit'>;
  encryption: KeyEncryption;
  createRateLimit: FastifyInstance['createRateLimit'];
}

const secure = (request: FastifyRequest) => request.protocol === 'https';

function flowCookie(value: string, secureCookie: boolean, maxAgeMs = FLOW_TTL_MS): string {
  return stringifySetCookie({
    name: FLOW_COOKIE,
    value,
    httpOnly: true,
    sameSite: 'lax',
    secure: secureCookie,
    path: COOKIE_PATH,
    maxAge: Math.floor(maxAgeMs / 1000),
    ...(maxAgeMs === 0 ? { expires: new Date(0) } : {}),
  });
}

function flowCookieValue(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || !header.includes(FLOW_COOKIE)) return undefined;
  return parseCookie(header)[FLOW_COOKIE];
}

/** The callback's URL as the provider sent it: the registered redirect URI and the request's own query. */
function callbackUrl(redirectUri: string, request: FastifyRequest): URL {
  const url = new URL(redirectUri);
  const raw = request.raw.url ?? '';
  const q = raw.indexOf('?');
  url.search = q === -1 ? '' : raw.slice(q);
  return url;
}

export function ssoRoutes(options: SsoRouteOptions): RouteDefinition[] {
  const { store, config, encryption } = options;
  // VOUCH_PUBLIC_URL is required with VOUCH_OIDC_ISSUER (src/config/env.ts)
  const sso =
    config.oidc && config.publicUrl !== undefined
      ? new OidcClient(config.oidc, `${config.publicUrl}${SSO_CALLBACK_PATH}`)
      : undefined;
  const perIp = options.createRateLimit({
    max: config.rateLimit.tokenFailuresPerMinute,
    timeWindow: 60_000,
    keyGenerator: (r) => `sso-ip:${limitSource(r.ip)}`,
  });
  const enabled = () => {
    if (!sso) throw new ApiError('not_found', 'Single sign-on is not configured (VOUCH_OIDC_ISSUER).');
    return sso;
  };

  /** Refusals end at the console with a short code; the reason goes to the log only. */
  function refuse(request: FastifyRequest, reply: FastifyReply, err: unknown) {
    if (err instanceof SsoError) {
      request.log.warn({ event: 'sso_refused', code: err.code, reason: err.message }, 'single sign-on refused');
    } else {
      request.log.error({ event: 'sso_failed', err }, 'single sign-on failed');
    }
    reply.header('cache-control', 'no-store');
    return reply.redirect(refused(err instanceof SsoError ? err.code : 'internal'), 302);
  }

  async function throttle(request: FastifyRequest): Promise<void> {
    const limit = await perIp(request);
    if (!limit.isAllowed && limit.isExceeded)
      throw new SsoError('rate_limited', `too many sign-in attempts from ${limitSource(request.ip)}`);
  }

  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/auth/sso',
      config: { operationId: 'ssoStatus' },
      schema: {
        tags,
        summary: 'Whether single sign-on is on (the console then offers "Sign in with SSO"), and its provider',
        description: 'Public. `GET /api/v1/auth/sso/start` begins the sign-in in a browser.',
        response: { 200: Type.Object({ enabled: Type.Boolean(), issuer: Type.Optional(Type.String()) }) },
      },
      handler: async () => (sso ? { enabled: true, issuer: sso.settings.issuer } : { enabled: false }),
    }),

    defineRoute({
      method: 'GET',
      url: '/api/v1/auth/sso/start',
      config: { operationId: 'startSso' },
      schema: { hide: true, tags, summary: "Begin single sign-on: 302 to the provider's sign-in page" },
      handler: async (request, reply) => {
        const client = enabled();
        try {
          await throttle(request);
          const { url, flow } = await client.begin(Date.now());
          reply.header('set-cookie', flowCookie(sealFlow(flow, encryption.current), secure(request)));
          reply.header('cache-control', 'no-store');
          return reply.redirect(url.href, 302);
        } catch (err) {
          return refuse(request, reply, err);
        }
      },
    }),

    defineRoute({
      method: 'GET',
      url: SSO_CALLBACK_PATH,
      config: { operationId: 'finishSso' },
      schema: {
        hide: true,
        tags,
        summary: "Single sign-on's redirect back from the provider: a console session, then 302 to the console",
        querystring: Type.Object({
          code: Type.Optional(Type.String({ maxLength: 4096 })),
          state: Type.Optional(Type.String({ maxLength: 1024 })),
          error: Type.Optional(Type.String({ maxLength: 256 })),
        }),
      },
      handler: async (request, reply) => {
        const client = enabled();
        const now = Date.now();
        // the flow cookie serves one callback, whatever its outcome
        reply.header('set-cookie', flowCookie('', secure(request), 0));
        try {
          await throttle(request);
          const flow = openFlow(flowCookieValue(request), encryption, now);
          if (!flow)
            throw new SsoError('state', 'no sign-in in progress: the flow cookie is missing, altered or expired');
          if (request.query.state !== flow.state) throw new SsoError('state', 'the state does not match the sign-in');
          if (request.query.error !== undefined)
            throw new SsoError('provider', `the provider answered ${request.query.error.slice(0, 64)}`);
          const claims = await client.complete(callbackUrl(client.redirectUri, request), flow);
          const row = await signInPerson(store, identityFromClaims(claims, client.settings), now);
          const session = await openSession(store.db, row.id, now);
          await recordAudit(store, {
            environment: 'live',
            actor: { type: 'user', id: row.id, name: row.name },
            action: 'user.login',
            target: `user:${row.id}`,
            after: { via: 'sso' },
          });
          reply.header('set-cookie', [
            flowCookie('', secure(request), 0),
            sessionCookie(session.token, session.expiresAt, secure(request)),
          ]);
          reply.header('cache-control', 'no-store');
          return reply.redirect(SIGNED_IN, 302);
        } catch (err) {
          return refuse(request, reply, err);
        }
      },
    }),
  ];
}
