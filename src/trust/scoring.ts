// The scoring service: validated request → cache or (profile → model) → durable decision.
import type { Redis } from 'ioredis';
import type { Store } from '../store/db.ts';
import type { Policy } from '../model/policy.ts';
import type { LivePolicy } from '../policies/registry.ts';
import type { Environment, Principal } from '../lib/principal.ts';
import type { DecisionWriter } from '../audit/decisions.ts';
import { Invalid } from '../lib/domain-errors.ts';
import { evaluate } from '../model/signal-model.ts';
import { safeAmountFrom } from './safe-amount.ts';
import { learningColumns } from '../model/feature-vector.ts';
import { ProfileCache } from './profile-cache.ts';
import { cacheKey, requestDigest } from './cache.ts';
import { AnswerCache, type AnswerLookup } from './answer-cache.ts';
import { newId } from '../lib/ids.ts';
import type { ScoreBody, ScoreResponse } from './schemas.ts';
import { MAX_LINKED_IDENTIFIERS as MAX_LINKED_PER_REQUEST } from './schemas.ts';
import type { EntityProfile, LinkedIdentifier, ScoreContext, ScoreRequest, ScoreResult } from '../model/types.ts';
import { POLICY_ONLY, type Decider } from '../model/outcomes.ts';
import { decideOutcome } from './rule-facts.ts';
import { SUMMARY_CONTEXT } from '../model/stored-rule-inputs.ts';

type StoredScore = Omit<ScoreResponse, 'cached'>;

/** What an operator needs to read a score decision: the amount and the trade context, never an entity id. */
function requestSummary(body: ScoreBody): Record<string, unknown> {
  const context = (body.context ?? {}) as Record<string, unknown>;
  const summary: Record<string, unknown> = { amount: body.amount, currency: body.currency };
  // the members a stored decision's rule inputs leave out because this summary holds them
  for (const name of SUMMARY_CONTEXT) if (typeof context[name] === 'string') summary[name] = context[name];
  return summary;
}

/**
 * The request as the model reads it, checked for every caller of the service (the schema caps the
 * linked identifiers too).
 */
function scoreRequest(body: ScoreBody): { request: ScoreRequest; linked: LinkedIdentifier[] } {
  const context: ScoreContext = body.context ?? {};
  const linked = context.linked_identifiers ?? [];
  if (linked.length > MAX_LINKED_PER_REQUEST) {
    const message = `must have at most ${MAX_LINKED_PER_REQUEST} items`;
    throw new Invalid(`context.linked_identifiers ${message}.`, [{ field: 'context.linked_identifiers', message }]);
  }
  const request = { entity_id: body.entity_id, amount: body.amount, currency: body.currency, context };
  return { request, linked };
}

/**
 * An answer as the score routes send it: the stored decision's JSON with `cached` added, neither
 * parsed nor serialised again — a cache hit's, or (asked for with `asText`) the score just computed.
 * The stored JSON is the response less `cached`, so the text is what the schema's serialiser would
 * write, members in another order. Parsing and serialising again was a tenth of a hit's cost.
 */
export class AnswerText {
  readonly json: string;
  constructor(
    stored: string,
    readonly riskLevel: string,
    /** false: a score computed for this request, sent as the text it was stored as (no second serialisation) */
    readonly cached = true,
  ) {
    this.json = `${stored.slice(0, -1)},"cached":${cached}}`;
  }

  get response(): ScoreResponse {
    return JSON.parse(this.json) as ScoreResponse;
  }
}

export class ScoringService {
  private readonly answers: AnswerCache;
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
    redis?: Redis,
    /**
     * told of the identifiers a request names, and the client that sent it (it queues them for the
     * network and returns at once)
     */
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
    this.answers = new AnswerCache(store, cacheTtlSeconds, redis);
    this.profiles = new ProfileCache(store);
  }

  /**
   * Forgets every cached score and profile: an entity was erased (a re-created entity may come back
   * at the very version its cached state was read at), or the network's flags changed.
   */
  forget(): void {
    this.answers.clear();
    this.profiles.clear();
  }

  /**
   * Profile and model output for one entity under `policy`, without caching or audit (the dispute analyser's input).
   */
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
    return answer instanceof AnswerText ? answer.response : answer;
  }

  /**
   * As `score`, but a cache hit comes back as its stored text, and with `asText` every answer does
   * (a route sends it as it is). One pass,
   * in order: the request, its cache key, the answers already given, the profile, the model, the
   * rules, the durable decision (its request digest and summary only now: a hit needs neither), the
   * cache (docs/architecture.md, "The score path").
   */
  async answer(
    body: ScoreBody,
    principal: Principal,
    policies: LivePolicy,
    asText: true,
    claim?: string,
  ): Promise<AnswerText>;
  async answer(body: ScoreBody, principal: Principal, policies: LivePolicy): Promise<ScoreResponse | AnswerText>;
  async answer(
    body: ScoreBody,
    principal: Principal,
    policies: LivePolicy,
    /** every answer as its stored text (a computed score and a shared hit too), for a route to send as it is */
    asText = false,
    /** the request's Idempotency-Key claim (its digest), stored with a new decision so a retry finds it */
    claim?: string,
  ): Promise<ScoreResponse | AnswerText> {
    const { request, linked } = scoreRequest(body);
    const { environment } = principal;
    const policy = policies.active;
    const now = Date.now();
    // Keyed per principal: a hit is always the caller's own, already audited decision (docs/api.md,
    // "Trust scoring"); and by the rules' revision, so a rule or list change is never answered from
    // the cache, here or in the shared one.
    const key = cacheKey({
      principalId: principal.id,
      environment,
      policyVersion: policy.version,
      rulesRevision: this.decider.revision(environment, now),
      entityId: request.entity_id,
      amount: request.amount,
      currency: request.currency,
      context: request.context,
    });
    const lookup: AnswerLookup = {
      key,
      principal,
      entityId: request.entity_id,
      linked,
      ttlMs: Math.max(1, policy.cacheTtlSeconds * 1000),
    };
    const cacheable = this.answers.usable();
    const found = cacheable ? await this.answers.find(lookup) : undefined;
    if (found) {
      if ('local' in found) return new AnswerText(found.local.json, found.local.riskLevel);
      return asText
        ? new AnswerText(JSON.stringify(found.shared), found.shared.risk_level)
        : { ...found.shared, cached: true };
    }

    this.linkedSeen(environment, linked, request.entity_id, principal.clientId);
    const generation = this.store.changes.generation;
    const { profile, state } = await this.profiles.load({
      environment,
      entityId: request.entity_id,
      currency: request.currency,
      counterpartyId: request.context.counterparty_id,
      linked,
      now,
      ringFanout: policy.maxIdentifierFanout,
    });
    const { result, values, prepared } = evaluate(profile, request, policy, now);
    const safeAmount = safeAmountFrom(prepared, request.currency, policy);
    const { verdict, money, columns, review } = decideOutcome(
      this.decider,
      environment,
      { profile, request, policy, result, values, safeAmount },
      now,
    );
    const stored: StoredScore = {
      entity_id: request.entity_id,
      score: result.score,
      risk_level: result.riskLevel,
      signals: result.signals,
      decision_id: newId('dec'),
      policy_version: result.policyVersion,
      scored_at: new Date(now).toISOString(),
      safe_amount: verdict.safe_amount,
      outcome: verdict.outcome,
      rules: verdict.rules,
      // a sampled approval's review is the desk's own measurement, not the caller's to act on
      ...(review?.reason === 'outcome' ? { review_id: review.id } : {}),
      ...(money ? { fraud_probability: money.fraud_probability, expected_costs: money.expected_costs } : {}),
    };
    const json = JSON.stringify(stored);
    await this.decisions.write({
      id: stored.decision_id,
      kind: 'score',
      environment,
      principal_id: principal.id,
      owner_client_id: principal.clientId,
      subject_id: request.entity_id,
      request_digest: requestDigest(request),
      result: json,
      policy_version: stored.policy_version,
      created_at: now,
      cache_key: key,
      cache_state: state,
      request: JSON.stringify(requestSummary(body)),
      network_peers: prepared.network.peers.length > 0 ? JSON.stringify(prepared.network.peers) : null,
      ...learningColumns(values, request, result, policies.shadow),
      ...columns,
      review,
      claim: claim ?? null,
    });
    if (cacheable)
      this.answers.remember(lookup, { json, riskLevel: stored.risk_level, state, generation }, stored.decision_id);
    return asText ? new AnswerText(json, stored.risk_level, false) : { ...stored, cached: false };
  }
}
