// The services buildApp (app.ts) shares between the auth layer and the routes: signing keys and tokens, API keys,
// the change feed that keeps every instance current, decisions, scoring, policies and rules. Each is made here;
// what runs in the background joins the app's list (lib/background.ts), in the order it must start.
import type { FastifyInstance } from 'fastify';
import type { Config } from './config/env.ts';
import type { Store } from './store/db.ts';
import { openRedis, type SharedRedis } from './store/redis.ts';
import type { KeyEncryption } from './lib/envelope.ts';
import type { BackgroundServices } from './lib/background.ts';
import { ChangeFeed } from './store/change-feed.ts';
import { RevokedCredentials } from './auth/revocation.ts';
import { KeyRing } from './auth/signing-keys.ts';
import { resolveKeyEncryption } from './auth/kek.ts';
import { TokenService } from './auth/tokens.ts';
import { tokenIssuers } from './auth/issuer.ts';
import { isClientActive } from './auth/clients.ts';
import { activePerson } from './people/sessions.ts';
import { KeyVerifier } from './keys/verifier.ts';
import type { Policy } from './model/policy.ts';
import type { Decider } from './model/outcomes.ts';
import { DecisionWriter, type DecisionCommit } from './audit/decisions.ts';
import { decisionWebhooks } from './webhooks/events.ts';
import { ScoringService } from './trust/scoring.ts';
import { LivePolicies } from './policies/live.ts';
import { PolicyRegistry } from './policies/registry.ts';
import { ensurePolicies } from './policies/repository.ts';
import { RuleRegistry } from './rules/registry.ts';
import { LiveRules } from './rules/live.ts';
import { suspendRule } from './rules/suspension.ts';
import { RULE_LIMITS } from './rules/cel-env.ts';
import { PendingIdentifiers } from './network/pending.ts';
import { networkDb } from './network/tables.ts';

export interface ServiceOptions {
  config: Config;
  store: Store;
  policy: Policy;
  /** an open shared Redis (closed by its owner); else one is opened when config.redisUrl is set */
  givenRedis: SharedRedis | undefined;
  decisionCommit: DecisionCommit | undefined;
  decider: Decider | undefined;
  /** started once the app is ready, stopped in reverse when it closes (app.ts) */
  background: BackgroundServices;
}

export interface AppServices {
  redis: SharedRedis | undefined;
  feed: ChangeFeed;
  keyEncryption: KeyEncryption;
  ring: KeyRing;
  tokens: TokenService;
  verifier: KeyVerifier;
  decisions: DecisionWriter;
  pendingIdentifiers: PendingIdentifiers;
  rules: RuleRegistry;
  liveRules: LiveRules;
  scoring: ScoringService;
  policies: PolicyRegistry;
  live: LivePolicies;
}

export async function startServices(
  app: FastifyInstance,
  { config, store, policy, givenRedis, decisionCommit, decider, background }: ServiceOptions,
): Promise<AppServices> {
  const redis = givenRedis ?? (config.redisUrl ? openRedis(config.redisUrl) : undefined);
  const feed = new ChangeFeed(store, redis ? { publisher: redis.client, subscriber: redis.subscriber } : undefined);
  // First: the state each service below reads when it starts is read after the feed's position.
  background.add(feed);
  const keyEncryption = resolveKeyEncryption(config, store);
  const ring = new KeyRing(store.db, (config.tokenTtlSeconds + 60) * 1000, keyEncryption);
  const tokens = new TokenService(
    ring,
    { ...tokenIssuers(config), audience: config.audience, ttlSeconds: config.tokenTtlSeconds },
    (id) => isClientActive(store.db, id),
    (id) => activePerson(store.db, id),
  );
  const verifier = new KeyVerifier(store.db, (id) => tokens.isClientDeactivated(id));
  background.add(new RevokedCredentials(feed, store.db, tokens, verifier));
  background.add({ name: 'key usage', start: () => verifier.start(), stop: () => verifier.stop() });
  await ring.init();
  // Policies live in the store (docs/api.md, "Policies"); the given one is the configured (file) policy.
  await ensurePolicies(store, policy);
  const decisions = new DecisionWriter(store.db, decisionWebhooks, {
    ...(decisionCommit ? { commit: decisionCommit } : {}),
    ...(store.checkpointIfDue
      ? {
          between: async () => {
            await store.checkpointIfDue!();
          },
        }
      : {}),
  });
  // Identifiers a score names only in its context are resolved against the peers in the background.
  const pendingIdentifiers = new PendingIdentifiers(
    networkDb(store.db),
    (err) => app.log.warn({ event: 'network_pending_failed', err }, 'could not queue identifiers for the network'),
    undefined,
    config.network.pendingPerClient,
  );
  // Each environment's rules and lists (docs/rules.md), reloaded on any instance's change like policies.
  const rules = new RuleRegistry(store);
  rules.suspendWith(async (environment, rule, ms) => {
    const reason = `suspended: ${RULE_LIMITS.suspendAfter} evaluations in a row over the run-time budget of ${RULE_LIMITS.runtimeBudgetMs} ms (last ${ms.toFixed(1)} ms)`;
    app.log.warn(
      { event: 'rule_suspended', rule: rule.id, version: rule.version, name: rule.name, environment, ms },
      'a rule kept exceeding its run-time budget and was set to draft',
    );
    await suspendRule(store.db, feed, { environment, by: 'vouch', now: Date.now(), reason }, rule.id, rule.version);
  });
  const reloadFailed = (name: string, err: unknown) =>
    app.log.error({ event: 'reload_failed', reloader: name, err }, 'a reload failed; the last value loaded stays');
  const liveRules = new LiveRules(rules, reloadFailed).follow(feed);
  background.add(liveRules);
  const scoring = new ScoringService(
    store,
    policy.cacheTtlSeconds,
    decisions,
    redis?.client,
    (environment, linked, entityId, clientId) => pendingIdentifiers.add(environment, linked, entityId, clientId),
    decider ?? rules,
  );
  const policies = new PolicyRegistry(store, policy);
  const live = new LivePolicies(policies, reloadFailed).follow(feed);
  background.add(live);
  // An erasure on any instance: no cached score or profile computed from the erased data is served again.
  feed.on('entity', () => scoring.forget());
  app.addHook('onClose', async () => {
    await decisions.drain();
    if (redis && !givenRedis) await redis.close();
  });
  return {
    redis,
    feed,
    keyEncryption,
    ring,
    tokens,
    verifier,
    decisions,
    pendingIdentifiers,
    rules,
    liveRules,
    scoring,
    policies,
    live,
  };
}
