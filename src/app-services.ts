// The services buildApp (app.ts) shares between the auth layer and the routes: signing keys and tokens, API keys,
// the revocation feed that keeps every instance current, decisions, scoring, policies and rules. Each is started
// here and closed with the app.
import type { FastifyInstance } from 'fastify';
import type { Config } from './config/env.ts';
import type { Store } from './store/db.ts';
import { openRedis, type SharedRedis } from './store/redis.ts';
import type { KeyEncryption } from './lib/envelope.ts';
import { ENVIRONMENTS, type Environment } from './lib/principal.ts';
import { RevocationFeed } from './auth/revocation.ts';
import { KeyRing } from './auth/signing-keys.ts';
import { resolveKeyEncryption } from './auth/kek.ts';
import { TokenService } from './auth/tokens.ts';
import { tokenIssuers } from './auth/issuer.ts';
import { deactivatedClientIds, isClientActive } from './auth/clients.ts';
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
}

export interface AppServices {
  redis: SharedRedis | undefined;
  feed: RevocationFeed;
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
  { config, store, policy, givenRedis, decisionCommit, decider }: ServiceOptions,
): Promise<AppServices> {
  const redis = givenRedis ?? (config.redisUrl ? openRedis(config.redisUrl) : undefined);
  const feed = new RevocationFeed(store);
  const keyEncryption = resolveKeyEncryption(config, store);
  const ring = new KeyRing(store.db, (config.tokenTtlSeconds + 60) * 1000, keyEncryption);
  const tokens = new TokenService(
    ring,
    { ...tokenIssuers(config), audience: config.audience, ttlSeconds: config.tokenTtlSeconds },
    (id) => isClientActive(store.db, id),
    (id) => activePerson(store.db, id),
  );
  const verifier = new KeyVerifier(store.db, (id) => tokens.isClientDeactivated(id));
  feed.on((kind, subject) => {
    if (kind === 'client') tokens.markClientDeactivated(subject);
    else if (kind === 'key') verifier.forget(subject);
  });
  await ring.init();
  // Policies live in the store (docs/api.md, "Policies"); the given one is the configured (file) policy.
  await ensurePolicies(store, policy);
  for (const id of await deactivatedClientIds(store.db)) tokens.markClientDeactivated(id);
  await feed.start();
  if (redis) await feed.attachRedis(redis.client, redis.subscriber);
  verifier.start();
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
  const liveRules = new LiveRules(rules);
  await liveRules.load();
  feed.on((kind, subject) => {
    if (kind === 'rules' && (ENVIRONMENTS as readonly string[]).includes(subject))
      liveRules.changed(subject as Environment);
    // An erasure rewrote an entity list's entry in place (trust/erasure-rules.ts): read the lists whole.
    if (kind === 'entity') {
      rules.rereadWhole();
      for (const env of ENVIRONMENTS) liveRules.changed(env);
    }
  });
  const scoring = new ScoringService(
    store,
    policy.cacheTtlSeconds,
    decisions,
    redis?.client,
    (environment, linked, entityId, clientId) => pendingIdentifiers.add(environment, linked, entityId, clientId),
    decider ?? rules,
  );
  const policies = new PolicyRegistry(store, policy);
  const live = new LivePolicies(policies);
  await live.load();
  feed.on((kind) => {
    if (kind === 'policy') live.changed();
  });
  // An erasure on any instance: no cached score or profile computed from the erased data is served again.
  feed.on((kind) => {
    if (kind === 'entity') scoring.forget();
  });
  app.addHook('onClose', async () => {
    await decisions.drain();
    await verifier.stop().catch(() => {});
    await feed.stop();
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
