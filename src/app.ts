// Builds the Fastify application. Plugins register in a fixed order: cross-cutting HTTP
// behaviour first (ids, validation, errors, metrics, docs), then the auth layer, then features.
// The services they share start in app-services.ts; the routes are the one table of routes.ts.
import cluster from 'node:cluster';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Config } from './config/env.ts';
import type { Store } from './store/db.ts';
import errorHandling, { clientErrorHandler, frameworkErrorHandler, sendProblem } from './http/errors.ts';
import { installValidators } from './http/validation.ts';
import { buildSerializer } from './http/serializers.ts';
import { holdIdleConnections, limitConnections, trustedProxies } from './http/connections.ts';
import { LeveledRequestLog, observability, requestId } from './http/observability.ts';
import { swaggerPlugin, swaggerUiPlugin } from './http/docs.ts';
import { asRouteOptions } from './http/route.ts';
import { acceptFormsOnOauthRoutes, refuseEncodedBodies } from './http/form-body.ts';
import './actor-directory.ts';
import { routeTable } from './routes.ts';
import { startServices } from './app-services.ts';
import { BackgroundServices } from './lib/background.ts';
import { missingUnscopedRoutes } from './http/public-routes.ts';
import { REQUEST_EXAMPLES } from './openapi-examples.ts';
import { ProblemSchema } from './http/problem.ts';
import { SCOPES } from './lib/principal.ts';
import authenticate from './auth/authenticate.ts';
import { resolveSession, sessionToken } from './people/sessions.ts';
import { DEFAULT_POLICY, type Policy } from './model/policy.ts';
import { answeredClaim, type DecisionCommit } from './audit/decisions.ts';
import { AnswerText } from './trust/scoring.ts';
import type { Decider } from './model/outcomes.ts';
import { startWebhookWorker } from './webhooks/index.ts';
import type { WorkerOptions } from './webhooks/worker.ts';
import type { SharedRedis } from './store/redis.ts';
import { sharedRateLimitStore } from './http/rate-limit-store.ts';
import { ClusterRateLimitStore } from './http/cluster-rate-limit.ts';
import { meterRateLimits } from './http/rate-limit-metrics.ts';
import { ruleErrorCounter } from './rules/metrics.ts';
import { registerCors } from './http/cors.ts';
import idempotency from './http/idempotency.ts';
import consolePlugin from './console/plugin.ts';
import { startNetwork } from './network/routes.ts';

export interface AppOptions {
  config: Config;
  store: Store;
  policy?: Policy;
  /** an open shared Redis; by default one is opened when config.redisUrl is set */
  redis?: SharedRedis;
  logger?: FastifyServerOptions['logger'];
  /** how long a request (headers and body) may take to arrive; docs/api.md, "Limits" says 10 s */
  requestTimeoutMs?: number;
  /** where decisions commit when not here (a cluster worker's host writer, audit/host-writer.ts) */
  decisionCommit?: DecisionCommit;
  /** the webhook delivery worker's timings (tests shorten them); enabled: false runs no worker */
  webhookWorker?: WorkerOptions & { enabled?: boolean };
  /** decides every score's outcome instead of the environment's rules (tests: a fixed Decider) */
  decider?: Decider;
}

const BODY_LIMIT = 64 * 1024;
const REQUEST_TIMEOUT_MS = 10_000;
/** Path parameters up to this long reach the routes (entity ids are up to 256 characters, more percent-encoded). */
const MAX_PARAM_LENGTH = 1024;

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        '*.client_secret',
        '*.access_token',
        '*.key',
        '*.entity_id',
      ],
      censor: '[redacted]',
    },
    serializers: {
      // The route pattern, never the raw URL: paths and query strings can carry identifiers.
      req: (req: { method: string; routeOptions?: { url?: string }; id: string }) => ({
        method: req.method,
        route: req.routeOptions?.url,
        id: req.id,
      }),
    },
  };
}

export async function buildApp({
  config,
  store,
  policy = DEFAULT_POLICY,
  redis: givenRedis,
  logger,
  requestTimeoutMs = REQUEST_TIMEOUT_MS,
  webhookWorker,
  decisionCommit,
  decider,
}: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger ?? loggerOptions(config.logLevel),
    bodyLimit: BODY_LIMIT,
    genReqId: requestId,
    requestIdHeader: false,
    // request.ip (per-IP limits, logs) is the proxy's address unless the proxy is trusted.
    trustProxy: trustProxyOption(config.trustProxy),
    // Requests arriving while draining get a 503 problem from the hook below, not Fastify's own body.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    requestTimeout: requestTimeoutMs,
    // Fastify's default (72 s) lets idle keep-alive sockets hold connection slots; see connections.ts.
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Each request logged at a level that fits its outcome (docs/operations.md, "Logs").
    logController: new LeveledRequestLog(),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    ajv: { customOptions: { removeAdditional: false } },
    schemaController: { compilersFactory: { buildSerializer } },
  });
  limitConnections(app, {
    maxConnections: config.maxConnections,
    maxPerSource: config.maxConnectionsPerSource,
    requestTimeoutMs,
    exempt: trustedProxies(config.trustProxy),
  });
  app.removeContentTypeParser('text/plain');
  acceptEmptyJsonWithoutBodySchema(app);
  installValidators(app);
  app.addSchema(ProblemSchema);

  // What runs in the background, one list (lib/background.ts): started when the app is ready, stopped as it closes.
  const background = new BackgroundServices();
  app.addHook('onReady', () => background.start());
  app.addHook('preClose', () =>
    background.stop((name, err) => app.log.warn({ event: 'stop_failed', service: name, err }, 'could not stop')),
  );
  const services = await startServices(app, {
    config,
    store,
    policy,
    givenRedis,
    decisionCommit,
    decider,
    background,
  });
  const { redis, feed, keyEncryption, ring, tokens, verifier, decisions, scoring, policies } = services;

  await app.register(errorHandling);
  await app.register(observability, {
    observeQueries: store.observeQueries,
    observeRedis: redis?.observeCommands,
  });
  await registerCors(app, config.corsOrigins);
  refuseEncodedBodies(app);
  // Callback hooks here and below: every request runs them, and an async hook costs a promise each.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    if (app.server.listening) holdIdleConnections(app.server);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close').header('retry-after', '1');
    // The reply is sent: the request goes no further (done is not called).
    void sendProblem(request, reply, 503, 'unavailable', 'The server is shutting down; retry on another instance.');
  });
  // With Redis the counters are shared by every instance; without it (or while it is down), the
  // workers of `serve --workers N` count together in their primary.
  // Only under our own primary (cluster.ts marks its workers): another cluster manager (PM2) would
  // never answer, and every batch would wait for the timeout.
  const hostStore = cluster.isWorker && process.env.VOUCH_CLUSTER_WORKER === '1' ? ClusterRateLimitStore : undefined;
  const counterStore = redis ? sharedRateLimitStore(redis.client, undefined, hostStore) : hostStore;
  await app.register(rateLimit, { global: false, ...(counterStore ? { store: counterStore } : {}) });
  meterRateLimits(app);
  await app.register(swaggerPlugin, { publicUrl: config.publicUrl, scopes: SCOPES, examples: REQUEST_EXAMPLES });
  await app.register(authenticate, {
    tokens,
    keys: verifier,
    feed,
    rateLimit: config.rateLimit,
    // a person's console session (docs/api.md, "People")
    sessions: {
      has: (request) => sessionToken(request) !== undefined,
      resolve: async (request) => (await resolveSession(store.db, request, sessionToken(request)!))?.principal,
    },
  });
  await app.register(idempotency, {
    db: store.db,
    encryption: keyEncryption,
    // a retry of a decision whose stored response was lost gets the decision, never a second one
    recover: async (environment, claim) => {
      const found = await answeredClaim(store.db, environment, claim);
      if (!found) return undefined;
      return {
        status: 200,
        body: found.kind === 'score' ? new AnswerText(found.result, '', false).json : found.result,
      };
    },
  });

  services.live.install(app);
  services.liveRules.install(app);
  services.rules.meter(ruleErrorCounter(app.metrics));
  const webhooks = startWebhookWorker(app, background, {
    store,
    encryption: keyEncryption,
    allowPrivate: config.webhookAllowPrivate,
    limits: config.webhooks,
    ...(webhookWorker ? { worker: webhookWorker } : {}),
  });
  const network = await startNetwork(app, background, {
    store,
    encryption: keyEncryption,
    config,
    metrics: app.metrics,
    onChanged: () => scoring.forget(),
    pending: services.pendingIdentifiers,
  });
  acceptFormsOnOauthRoutes(app);
  const table = routeTable({
    config,
    store,
    metrics: app.metrics,
    createRateLimit: app.createRateLimit.bind(app),
    openapi: () => app.swagger(),
    encryption: keyEncryption,
    feed,
    ring,
    tokens,
    verifier,
    scoring,
    policies,
    decisions,
    webhooks,
    network,
    ping: () => store.ping(),
    degraded: () => (redis && !redis.ready() ? ['redis'] : []),
  });
  // The auth hook refuses, as each route registers, one that declares no scope and is not a public route.
  for (const route of table) app.route(asRouteOptions(route));
  app.decorate('routeTable', table);
  await app.register(swaggerUiPlugin);
  await app.register(consolePlugin);
  const stale = missingUnscopedRoutes((method, url) => app.hasRoute({ method, url }));
  if (stale.length > 0)
    throw new Error(`Listed as public in src/http/public-routes.ts but not served: ${stale.join(', ')}`);
  return app;
}

/**
 * VOUCH_TRUST_PROXY as Fastify takes it. A hop count becomes "the nearest N addresses are
 * proxies" (Express's meaning): Fastify itself takes a bare number to trust nothing.
 */
function trustProxyOption(
  value: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof value !== 'number') return value;
  return (_address, hop) => hop < value;
}

/**
 * `Content-Type: application/json` with no body, as clients that label every request send it, is
 * no body on a route that takes none (a DELETE) and no options ({}) on one whose fields are all
 * optional (a rotate); a route that requires fields still answers 400.
 */
function acceptEmptyJsonWithoutBodySchema(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // A peer's request is verified against its signature over the body exactly as received.
    if (request.routeOptions.config.peer) request.rawBody = body as string;
    if (body === '') {
      const schema = request.routeOptions.schema?.body as { required?: unknown[] } | undefined;
      if (!schema) return done(null, undefined);
      if (!schema.required?.length) return done(null, {});
    }
    parse(request, body as string, done);
  });
}
