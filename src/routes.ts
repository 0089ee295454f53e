// Every route of the API, in the order it registers. Each entry is a feature's list of route
// definitions (src/http/route.ts): method, url, schema, the scope and role it needs, and the
// handler. A new route goes into its feature's routes file and, for a new feature, one line here.
// A route declares its scope (and role); one without a scope must be on the list of public routes
// (src/http/public-routes.ts), else the app does not start. Not in this table: the static files
// of the console and of Swagger UI, which their plugins serve (public, and listed there too).
import type { Config } from './config/env.ts';
import type { Store } from './store/db.ts';
import type { FastifyInstance } from 'fastify';
import type { RouteDefinition } from './http/route.ts';
import type { Metrics } from './http/observability.ts';
import { healthRoutes } from './http/observability.ts';
import { problemRoutes } from './http/problem-pages.ts';
import { docsRoutes } from './http/docs.ts';
import type { KeyEncryption } from './lib/envelope.ts';
import type { KeyRing } from './auth/signing-keys.ts';
import type { ChangeFeed } from './store/change-feed.ts';
import type { TokenService } from './auth/tokens.ts';
import { authRoutes } from './auth/routes.ts';
import type { KeyVerifier } from './keys/verifier.ts';
import { keyRoutes } from './keys/routes.ts';
import type { ScoringService } from './trust/scoring.ts';
import type { PolicyRegistry } from './policies/registry.ts';
import { reviewListOpen } from './model/outcome-policy.ts';
import { scoreCounter, trustRoutes } from './trust/routes.ts';
import { batchRoutes } from './trust/batch.ts';
import { timelineRoutes } from './trust/timeline.ts';
import { erasureRoutes } from './trust/erasure.ts';
import { ringRoutes } from './rings/routes.ts';
import { disputeRoutes } from './disputes/routes.ts';
import type { DecisionWriter } from './audit/decisions.ts';
import { decisionRoutes } from './audit/routes.ts';
import { bulkLabelRoutes, labelBudget } from './audit/bulk-labels.ts';
import { policyRoutes } from './policies/routes.ts';
import { ruleRoutes } from './rules/routes.ts';
import { listRoutes } from './rules/list-routes.ts';
import { ruleTestRoutes } from './rules/test-routes.ts';
import type { WebhookServices } from './webhooks/index.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { networkRoutes, type NetworkServices } from './network/routes.ts';
import { reviewRoutes } from './reviews/routes.ts';
import { deskRoutes } from './reviews/desk-routes.ts';
import { auditLogRoutes } from './audit-log/routes.ts';
import { changeRoutes } from './changes/routes.ts';
import { ruleAppliers } from './rules/four-eyes.ts';
import { eraseFromEntityLists } from './rules/list-erasure-repository.ts';
import { eraseFromReviews } from './reviews/repository.ts';
import { policyAppliers } from './policies/changes.ts';
import { peopleRoutes } from './people/routes.ts';
import { ssoRoutes } from './people/sso-routes.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** the table as buildApp registered it (the shared route-security test walks it) */
    routeTable: readonly RouteDefinition[];
  }
}

/** The services the routes are built from, made once by buildApp. */
export interface Services {
  config: Config;
  store: Store;
  metrics: Metrics;
  createRateLimit: FastifyInstance['createRateLimit'];
  /** the OpenAPI document, built from these routes once they are registered */
  openapi: () => unknown;
  encryption: KeyEncryption;
  feed: ChangeFeed;
  ring: KeyRing;
  tokens: TokenService;
  verifier: KeyVerifier;
  scoring: ScoringService;
  /** the active and shadow policies per environment (policies/live.ts keeps them current) */
  policies: PolicyRegistry;
  decisions: DecisionWriter;
  webhooks: WebhookServices;
  network: NetworkServices;
  ping: () => Promise<void>;
  degraded: () => string[];
}

export function routeTable(s: Services): RouteDefinition[] {
  const { config, store } = s;
  const requireHashedIds = config.requireHashedIds;
  // one budget for every way a principal labels in bulk: batches and review resolutions
  const labels = labelBudget(s.createRateLimit, config.labelsPerMinute);
  const scores = scoreCounter(s.metrics);
  return [
    ...healthRoutes({
      ping: s.ping,
      degraded: s.degraded,
      metrics: s.metrics,
      ...(config.metricsToken !== undefined ? { metricsToken: config.metricsToken } : {}),
    }),
    ...problemRoutes(),
    ...authRoutes({
      db: store.db,
      tokens: s.tokens,
      ring: s.ring,
      metrics: s.metrics,
      createRateLimit: s.createRateLimit,
      tokenPerMinute: config.rateLimit.tokenPerMinute,
      tokenFailuresPerMinute: config.rateLimit.tokenFailuresPerMinute,
      publicUrl: config.publicUrl,
    }),
    ...peopleRoutes({
      store,
      publicUrl: config.publicUrl,
      createRateLimit: s.createRateLimit,
      loginsPerMinute: config.rateLimit.tokenFailuresPerMinute,
      passwordCost: config.passwordCost,
      encryption: s.encryption,
      issueToken: (p, origin) => s.tokens.issue(p.id, p.role, [...p.scopes], p.environment, origin, p.personRole),
    }),
    ...ssoRoutes({ store, config, encryption: s.encryption, createRateLimit: s.createRateLimit }),
    ...keyRoutes({ store, feed: s.feed, verifier: s.verifier }),
    ...trustRoutes({ store, scoring: s.scoring, policies: s.policies, requireHashedIds, metrics: s.metrics, scores }),
    ...batchRoutes({ scoring: s.scoring, policies: s.policies, check: { requireHashedIds }, scores }),
    ...timelineRoutes({ store, requireHashedIds }),
    ...ringRoutes({ store, policies: s.policies, requireHashedIds }),
    ...erasureRoutes({
      store,
      feed: s.feed,
      decisions: s.decisions,
      encryption: s.encryption,
      // what the features above trust hold about an erased entity, rewritten in its transaction, in this order
      erasers: [eraseFromEntityLists, eraseFromReviews],
      requireHashedIds,
    }),
    ...disputeRoutes({
      scoring: s.scoring,
      policies: s.policies,
      decisions: s.decisions,
      requireHashedIds,
      metrics: s.metrics,
    }),
    ...decisionRoutes({ store }),
    ...bulkLabelRoutes({ store, budget: labels }),
    ...policyRoutes({ store, feed: s.feed }),
    ...ruleRoutes({ store, feed: s.feed, createRateLimit: s.createRateLimit }),
    ...listRoutes({ store, feed: s.feed, requireHashedIds }),
    ...ruleTestRoutes({ store, policies: s.policies }),
    ...webhookRoutes({ store, encryption: s.encryption, allowPrivate: config.webhookAllowPrivate, ...s.webhooks }),
    ...networkRoutes(s.network),
    ...reviewRoutes({
      store,
      feed: s.feed,
      reviewListOpen: (environment, list) => reviewListOpen(s.policies.active(environment), list),
      chargeLabel: (request) => labels.charge(request, 1),
    }),
    ...deskRoutes({ store, createRateLimit: s.createRateLimit }),
    ...auditLogRoutes({ store }),
    ...changeRoutes({
      store,
      appliers: { ...ruleAppliers({ feed: s.feed }), ...policyAppliers({ store, feed: s.feed }) },
    }),
    ...docsRoutes({ document: s.openapi }),
  ];
}
