// Builds the Fastify application. Plugins register in a fixed order: cross-cutting HTTP
// behaviour first (ids, validation, errors, metrics, docs), then the auth layer, then features.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Config } from './config/env.ts';
import type { Store } from './store/db.ts';
import errorHandling, { frameworkErrorHandler, sendProblem } from './http/errors.ts';
import { installValidators } from './http/validation.ts';
import { observability, requestId } from './http/observability.ts';
import { docsRoutes, swaggerPlugin } from './http/docs.ts';
import { ProblemSchema } from './http/problem.ts';
import { RevocationFeed } from './auth/revocation.ts';
import { KeyRing } from './auth/signing-keys.ts';
import { resolveKeyEncryption } from './auth/kek.ts';
import { TokenService } from './auth/tokens.ts';
import { deactivatedClientIds, isClientActive } from './auth/clients.ts';
import authenticate from './auth/authenticate.ts';
import authRoutes from './auth/routes.ts';
import { KeyVerifier } from './keys/verifier.ts';
import keyRoutes from './keys/routes.ts';
import { DEFAULT_POLICY, type Policy } from './config/policy.ts';
import { DecisionWriter, decisionRoutes } from './audit/decisions.ts';
import { ScoringService } from './trust/scoring.ts';
import trustRoutes from './trust/routes.ts';
import { openRedis, type SharedRedis } from './store/redis.ts';
import { sharedRateLimitStore } from './http/rate-limit-store.ts';
import disputeRoutes from './disputes/routes.ts';

export interface AppOptions {
  config: Config;
  store: Store;
  policy?: Policy;
  /** an open shared Redis; by default one is opened when config.redisUrl is set */
  redis?: SharedRedis;
  logger?: FastifyServerOptions['logger'];
}

const BODY_LIMIT = 64 * 1024;

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', '*.client_secret', '*.access_token', '*.key', '*.entity_id'],
      censor: '[redacted]',
    },
    serializers: {
      // The route pattern, never the raw URL: paths and query strings can carry identifiers.
      req: (req: { method: string; routeOptions?: { url?: string }; id: string }) => ({ method: req.method, route: req.routeOptions?.url, id: req.id }),
    },
  };
}

export async function buildApp({ config, store, policy = DEFAULT_POLICY, redis: givenRedis, logger }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger ?? loggerOptions(config.logLevel),
    bodyLimit: BODY_LIMIT,
    genReqId: requestId,
    requestIdHeader: false,
    trustProxy: false,
    // Requests arriving while draining get a 503 problem from the hook below, not Fastify's own body.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    ajv: { customOptions: { removeAdditional: false } },
  });
  app.removeContentTypeParser('text/plain');
  installValidators(app);
  app.addSchema(ProblemSchema);

  // Services shared by the routes; each is closed with the app.
  const redis = givenRedis ?? (config.redisUrl ? openRedis(config.redisUrl) : undefined);
  const feed = new RevocationFeed(store);
  const ring = new KeyRing(store.db, (config.tokenTtlSeconds + 60) * 1000, resolveKeyEncryption(config, store));
  const tokens = new TokenService(ring, { issuer: config.issuer, audience: config.audience, ttlSeconds: config.tokenTtlSeconds }, (id) => isClientActive(store.db, id));
  const verifier = new KeyVerifier(store.db, (id) => tokens.isClientDeactivated(id));
  feed.on((kind, subject) => {
    if (kind === 'client') tokens.markClientDeactivated(subject);
    else verifier.forget(subject);
  });
  await ring.init();
  for (const id of await deactivatedClientIds(store.db)) tokens.markClientDeactivated(id);
  await feed.start();
  if (redis) await feed.attachRedis(redis.client, redis.subscriber);
  verifier.start();
  const decisions = new DecisionWriter(store.db);
  const scoring = new ScoringService(store, policy, decisions, redis?.client);
  app.addHook('onClose', async () => {
    await decisions.drain();
    await verifier.stop().catch(() => {});
    await feed.stop();
    if (redis && !givenRedis) await redis.close();
  });

  await app.register(errorHandling);
  await app.register(observability, { ping: () => store.ping(), degraded: () => (redis && !redis.ready() ? ['redis'] : []) });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close').header('retry-after', '1');
    return sendProblem(request, reply, 503, 'unavailable', 'The server is shutting down; retry on another instance.');
  });
  // With Redis the counters are shared by every instance (and local while Redis is down).
  await app.register(rateLimit, { global: false, ...(redis ? { store: sharedRateLimitStore(redis.client) } : {}) });
  await app.register(swaggerPlugin);
  await app.register(authenticate, { tokens, keys: verifier, feed, rateLimit: config.rateLimit });

  await app.register(authRoutes, { db: store.db, tokens, ring, tokenPerMinute: config.rateLimit.tokenPerMinute, tokenFailuresPerMinute: config.rateLimit.tokenFailuresPerMinute });
  await app.register(keyRoutes, { db: store.db, feed, verifier });
  await app.register(trustRoutes, { store, policy, scoring, requireHashedIds: config.requireHashedIds });
  await app.register(disputeRoutes, { policy, scoring, decisions, requireHashedIds: config.requireHashedIds });
  await app.register(decisionRoutes, { db: store.db });
  await app.register(docsRoutes);
  return app;
}
