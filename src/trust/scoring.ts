// The scoring service: validated request → cache or (profile → model) → durable decision.
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Store } from '../store/db.ts';
import type { Policy } from '../model/policy.ts';
import type { LivePolicy } from '../policies/registry.ts';
import type { Environment, Principal } from '../lib/principal.ts';
import type { DecisionWriter } from '../audit/decisions.ts';
import { ApiError } from '../http/problem.ts';
import { PreparedQuery } from '../store/prepared.ts';
import { evaluate } from '../model/signal-model.ts';
import { safeAmountFrom } from './safe-amount.ts';
import { learningColumns } from '../model/feature-vector.ts';
import { currentState, STATE_COLUMNS, stateJoins, stateOf } from './profile.ts';
import { ProfileCache } from './profile-cache.ts';
import { ScoreCache, cacheKey, canonicalJson } from './cache.ts';
import { sha256Hex as sha256 } from '../lib/digest.ts';
import { newId } from '../lib/ids.ts';
import type { ScoreBody, ScoreResponse } from './schemas.ts';
import { MAX_LINKED_IDENTIFIERS as MAX_LINKED_PER_REQUEST } from './schemas.ts';
import type { EntityProfile, LinkedIdentifier, ScoreContext, ScoreResult } from '../model/types.ts';
import { POLICY_ONLY, type Decider } from '../model/outcomes.ts';
import { policyOutcome, reviewOpening, ruleColumns, ruleFacts } from './rule-facts.ts';

type StoredScore = Omit<ScoreResponse, 'cached'>;

const DECISION_ID = /^dec_[0-9A-Z]{26}$/;

interface SharedRow {
  principal_id: string;
  cache_key: string | null;
  cache_state: string | null;
  result: string;
  version: number | null;
  linked_version: number | string | null;
  net_version: number | string | null;
}

/**
 * The shared cache (Redis) holds only a pointer: cache key → decision_id. Redis is not trusted
 * with anything a score depends on — an entry is read back from the durable audit row, which must
 * be the caller's own, answer this very cache key, and have been computed from the store's current
 * state (its entity and identifier versions, checked in the same query). Whoever can write to
 * Redis can at most make an instance miss; it can neither forge a score nor revive a stale or
 * another client's decision. This needs no key shared between instances (an HMAC would), and costs
 * the one store round trip a shared hit already made to check the entity's version.
 */
const sharedQueries = new WeakMap<Store, Map<number, PreparedQuery<unknown[], SharedRow>>>();

async function sharedDecision(
  store: Store,
  environment: Environment,
  decisionId: string,
  entityId: string,
  linked: readonly LinkedIdentifier[],
): Promise<(SharedRow & { state: string }) | undefined> {
  let shapes = sharedQueries.get(store);
  if (!shapes) sharedQueries.set(store, (shapes = new Map()));
  let query = shapes.get(linked.length);
  if (!query) {
    query = new PreparedQuery(store.db as never, 3 + 2 * linked.length, (_db, env, id, entity, ...pairs) =>
      sql<SharedRow>`
      select d.principal_id, d.cache_key, d.cache_state, d.result, ${STATE_COLUMNS}
      from decisions d ${stateJoins(env, entity, pairs)}
      where d.id = ${id} and d.kind = 'score' and d.environment = ${env}`.compile(store.db),
    );
    shapes.set(linked.length, query);
  }
  const [row] = await query.execute(environment, decisionId, entityId, ...linked.flatMap((l) => [l.type, l.hash]));
  return row ? { ...row, state: stateOf(row) } : undefined;
}

/** What an operator needs to read a score decision: the amount and the trade context, never an entity id. */
function requestSummary(body: ScoreBody): Record<string, unknown> {
  const context = (body.context ?? {}) as Record<string, unknown>;
  const summary: Record<string, unknown> = { amount: body.amount, currency: body.currency };
  for (const name of ['side', 'payment_method', 'country', 'counterparty_country', 'trade_id'] as const) {
    if (typeof context[name] === 'string') summary[name] = context[name];
  }
  return summary;
}

/**
 * A cache hit as the score route sends it: the stored decision's JSON marked as served from the
 * cache, neither parsed nor serialised again. The stored JSON is the response (less `cached`) as
 * the miss that computed it was answered, so the text is what the schema's serialiser would write,
 * members in another order. Parsing it and serialising it again was a tenth of a hit's cost.
 */
export class CachedAnswer {
  readonly json: string;
  constructor(
    stored: string,
    readonly riskLevel: string,
  ) {
    this.json = `${stored.slice(0, -1)},"cached":true}`;
  }

  get response(): ScoreResponse {
    return JSON.parse(this.json) as ScoreResponse;
  }
}

export class ScoringService {
  readonly cache: ScoreCache;
  private readonly profiles: ProfileCache;

  /**
   * The policies are not held here: every caller reads its environment's from the registry
   * (src/policies/registry.ts) once per request and passes them in.
   */
  constructor(
    private readonly store: Store,
    /** the cache's default entry lifetime (the configured policy's) */
    cacheTtlSeconds: number,
    private readonly decisions: DecisionWriter,
    /** shared with the other instances when configured; scores are validated against the store either way */
    private readonly redis?: Redis,
    /** told of the identifiers a request names, and the client that sent it (it queues them for the network and returns at once) */
    private readonly linkedSeen: (
      environment: Environment,
      linked: readonly LinkedIdentifier[],
      entityId: string,
      clientId: string,
    ) => void = () => {},
    /**
     * The rules of each environment (docs/rules.md), handed in by the composition root: every score
     * decides its outcome through it. Without one, the policy's outcome map decides alone.
     */
    private readonly decider: Decider = POLICY_ONLY,
  ) {
    this.cache = new ScoreCache(cacheTtlSeconds);
    this.profiles = new ProfileCache(store);
  }

  /**
   * Forgets every cached score and profile: an entity was erased (a re-created entity may come back
   * at the very version its cached state was read at), or the network's flags changed.
   */
  forget(): void {
    this.cache.clear();
    this.profiles.clear();
  }

  /** The caller's own decision for this key from the shared cache, if still valid. */
  private async sharedGet(
    key: string,
    principal: Principal,
    entityId: string,
    linked: readonly LinkedIdentifier[],
    ttlMs: number,
  ): Promise<{ body: StoredScore; json: string; state: string } | undefined> {
    if (!this.redis || this.redis.status !== 'ready') return undefined;
    let pointer: string | null;
    try {
      pointer = await this.redis.get(`vouch:score:${key}`);
    } catch {
      return undefined;
    }
    if (!pointer || !DECISION_ID.test(pointer)) return undefined;
    const row = await sharedDecision(this.store, principal.environment, pointer, entityId, linked);
    if (!row || row.principal_id !== principal.id || row.cache_key !== key || row.cache_state !== row.state)
      return undefined;
    const body = JSON.parse(row.result) as StoredScore;
    // Redis expires the pointer with the TTL; a pointer that outlived it (a changed TTL, a hand-made
    // entry) must not revive an old decision.
    if (Date.parse(body.scored_at) + ttlMs <= Date.now()) return undefined;
    return body.entity_id === entityId ? { body, json: row.result, state: row.state } : undefined;
  }

  private sharedSet(key: string, decisionId: string, ttlMs: number): void {
    if (!this.redis || this.redis.status !== 'ready') return;
    this.redis.set(`vouch:score:${key}`, decisionId, 'PX', ttlMs).catch(() => {});
  }

  /** Profile and model output for one entity under `policy`, without caching or audit (the dispute analyser's input). */
  async assess(
    environment: Environment,
    policy: Policy,
    entityId: string,
    amount: number,
    currency: string,
    context: ScoreContext,
    now: number,
  ): Promise<{ profile: EntityProfile; result: ScoreResult; safeAmount: number | null }> {
    const { profile } = await this.profiles.load({
      environment,
      entityId,
      currency,
      counterpartyId: context.counterparty_id,
      linked: context.linked_identifiers?.slice(0, MAX_LINKED_PER_REQUEST),
      now,
      ringFanout: policy.maxIdentifierFanout,
    });
    const { result, prepared } = evaluate(profile, { entity_id: entityId, amount, currency, context }, policy, now);
    return { profile, result, safeAmount: safeAmountFrom(prepared, currency, policy) };
  }

  /** `policies`: the caller's environment's, read once for the request (src/policies/registry.ts). */
  async score(body: ScoreBody, principal: Principal, policies: LivePolicy): Promise<ScoreResponse> {
    const answer = await this.answer(body, principal, policies);
    return answer instanceof CachedAnswer ? answer.response : answer;
  }

  /** As `score`, but a cache hit comes back as its stored text (a route sends it as it is). */
  async answer(body: ScoreBody, principal: Principal, policies: LivePolicy): Promise<ScoreResponse | CachedAnswer> {
    const context: ScoreContext = body.context ?? {};
    const linked = context.linked_identifiers ?? [];
    // The schema caps the list too; this holds for every caller of the service.
    if (linked.length > MAX_LINKED_PER_REQUEST) {
      throw new ApiError(
        400,
        'validation_failed',
        `context.linked_identifiers must have at most ${MAX_LINKED_PER_REQUEST} items.`,
        {
          errors: [
            { field: 'context.linked_identifiers', message: `must have at most ${MAX_LINKED_PER_REQUEST} items` },
          ],
        },
      );
    }
    const request = { entity_id: body.entity_id, amount: body.amount, currency: body.currency, context };
    const { environment } = principal;
    const policy = policies.active;
    const ttlMs = Math.max(1, policy.cacheTtlSeconds * 1000);
    const now = Date.now();
    const decider = this.decider;
    // Keyed per principal: a hit is always the caller's own, already audited decision (docs/api.md,
    // "Trust scoring"); and by the rules' revision, so a rule or list change is never answered from
    // the cache, here or in the shared one.
    const key = cacheKey({
      principalId: principal.id,
      environment,
      policyVersion: policy.version,
      rulesRevision: decider.revision(environment, now),
      entityId: body.entity_id,
      amount: body.amount,
      currency: body.currency,
      context,
    });
    // While the shared cache is configured but Redis is unreachable the cache is off altogether
    // (issue 5: "cache off, cached: false"): every instance answers from the store until Redis is back.
    const cacheable = !this.redis || this.redis.status === 'ready';
    const changes = this.store.changes;
    if (cacheable) {
      const hit = this.cache.get(key);
      if (hit && hit.principalId === principal.id && hit.entityId === body.entity_id) {
        changes.poll();
        // Nothing committed since the entry was confirmed: it cannot be stale, no query needed.
        if (changes.supported && hit.generation === changes.generation)
          return new CachedAnswer(hit.json, hit.riskLevel);
        const generation = changes.generation;
        if (hit.state === (await currentState(this.store, environment, body.entity_id, linked))) {
          hit.generation = generation;
          return new CachedAnswer(hit.json, hit.riskLevel);
        }
      } else if (this.redis) {
        changes.poll();
        const generation = changes.generation;
        const shared = await this.sharedGet(key, principal, body.entity_id, linked, ttlMs);
        if (shared) {
          // Adopted for what is left of its TTL; its state was just checked against the store.
          this.cache.set(
            key,
            {
              json: shared.json,
              entityId: body.entity_id,
              riskLevel: shared.body.risk_level,
              principalId: principal.id,
              state: shared.state,
              generation,
            },
            ttlMs - (Date.now() - Date.parse(shared.body.scored_at)),
          );
          return { ...shared.body, cached: true };
        }
      }
    }

    this.linkedSeen(environment, linked, body.entity_id, principal.clientId);
    const generation = changes.generation;
    const { profile, state } = await this.profiles.load({
      environment,
      entityId: body.entity_id,
      currency: body.currency,
      counterpartyId: context.counterparty_id,
      linked,
      now,
      ringFanout: policy.maxIdentifierFanout,
    });
    const { result, values, prepared } = evaluate(profile, request, policy, now);
    // The outcome (docs/rules.md): the policy's for the level, then the environment's rules, which
    // may make it more severe (or approve it, by override) and cap the safe amount, never raise it.
    const facts = ruleFacts(
      profile,
      request,
      policy,
      result,
      values,
      safeAmountFrom(prepared, body.currency, policy),
      now,
    );
    const verdict = decider.decide(environment, facts, policyOutcome(policy, result.riskLevel), now);
    const stored: StoredScore = {
      entity_id: body.entity_id,
      score: result.score,
      risk_level: result.riskLevel,
      signals: result.signals,
      decision_id: newId('dec'),
      policy_version: result.policyVersion,
      scored_at: new Date(now).toISOString(),
      safe_amount: verdict.safe_amount,
      outcome: verdict.outcome,
      rules: verdict.rules,
    };
    const json = JSON.stringify(stored);
    await this.decisions.write({
      id: stored.decision_id,
      kind: 'score',
      environment,
      principal_id: principal.id,
      owner_client_id: principal.clientId,
      subject_id: body.entity_id,
      request_digest: sha256(canonicalJson(request)),
      result: json,
      policy_version: stored.policy_version,
      created_at: now,
      cache_key: key,
      cache_state: state,
      request: JSON.stringify(requestSummary(body)),
      network_peers: prepared.network.peers.length > 0 ? JSON.stringify(prepared.network.peers) : null,
      ...learningColumns(values, request, result, policies.shadow),
      ...ruleColumns(facts, verdict),
      review: reviewOpening(policy, verdict.outcome, now),
    });
    if (cacheable) {
      this.cache.set(
        key,
        { json, entityId: body.entity_id, riskLevel: stored.risk_level, principalId: principal.id, state, generation },
        ttlMs,
      );
      this.sharedSet(key, stored.decision_id, ttlMs);
    }
    return { ...stored, cached: false };
  }
}
