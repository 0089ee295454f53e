// The scoring service: validated request → cache or (profile → model) → durable decision.
import type { Store } from '../store/db.ts';
import type { Policy } from '../config/policy.ts';
import type { Principal } from '../auth/principal.ts';
import type { DecisionWriter } from '../audit/decisions.ts';
import { scoreEntity } from './model.ts';
import { loadProfile, entityVersion } from './profile.ts';
import type { Redis } from 'ioredis';
import { ScoreCache, canonicalJson, type CachedScore } from './cache.ts';
import { newId, sha256Hex as sha256 } from '../keys/format.ts';
import type { ScoreBody, ScoreResponse } from './schemas.ts';
import type { EntityProfile, ScoreContext, ScoreResult } from './types.ts';

type StoredScore = Omit<ScoreResponse, 'cached'>;

export class ScoringService {
  readonly cache: ScoreCache<StoredScore>;

  constructor(
    private readonly store: Store,
    readonly policy: Policy,
    private readonly decisions: DecisionWriter,
    /** shared with the other instances when configured; scores are validated against the store either way */
    private readonly redis?: Redis,
  ) {
    this.cache = new ScoreCache(policy.cacheTtlSeconds);
  }

  private async sharedGet(key: string): Promise<CachedScore<StoredScore> | undefined> {
    if (!this.redis || this.redis.status !== 'ready') return undefined;
    try {
      const raw = await this.redis.get(`vouch:score:${sha256(key)}`);
      return raw ? (JSON.parse(raw) as CachedScore<StoredScore>) : undefined;
    } catch {
      return undefined;
    }
  }

  private sharedSet(key: string, entry: CachedScore<StoredScore>): void {
    if (!this.redis || this.redis.status !== 'ready') return;
    const ttl = Math.max(1, this.policy.cacheTtlSeconds * 1000);
    this.redis.set(`vouch:score:${sha256(key)}`, JSON.stringify({ body: entry.body, version: entry.version }), 'PX', ttl).catch(() => {});
  }

  /** Profile and model output for one entity, without caching or audit (the dispute analyser's input). */
  async assess(entityId: string, amount: number, currency: string, context: ScoreContext, now: number): Promise<{ profile: EntityProfile; result: ScoreResult }> {
    const { profile } = await loadProfile(this.store, {
      entityId, currency, counterpartyId: context.counterparty_id, linked: context.linked_identifiers, now,
    });
    const result = scoreEntity(profile, { entity_id: entityId, amount, currency, context }, this.policy, now);
    return { profile, result };
  }

  async score(body: ScoreBody, principal: Principal): Promise<ScoreResponse> {
    const context: ScoreContext = body.context ?? {};
    const request = { entity_id: body.entity_id, amount: body.amount, currency: body.currency, context };
    // The canonical request itself keys the cache (no hashing on the hit path); its SHA-256 is
    // computed only for a new decision's audit record and the shared cache.
    const canonical = canonicalJson(request);
    // Identifiers in the request link to entities whose flags can change without this entity's
    // version moving, so such requests are always scored fresh. While the shared cache is
    // configured but Redis is unreachable the cache is off altogether (issue 5: "cache off,
    // cached: false"): every instance answers from the store until Redis is back.
    const cacheable = !(context.linked_identifiers && context.linked_identifiers.length > 0) && (!this.redis || this.redis.status === 'ready');
    const key = `${this.policy.version}:${canonical}`;
    const changes = this.store.changes;
    if (cacheable) {
      const hit = this.cache.get(key) ?? (await this.sharedGet(key));
      if (hit) {
        changes.poll();
        // Nothing committed since the entry was confirmed: it cannot be stale, no query needed.
        if (changes.supported && hit.generation === changes.generation) return { ...hit.body, cached: true };
        const generation = changes.generation;
        if (hit.version === (await entityVersion(this.store, body.entity_id))) {
          // Re-stamped in place, or adopted from the shared cache for what is left of its TTL.
          if (this.cache.get(key) === hit) hit.generation = generation;
          else this.cache.set(key, { ...hit, generation }, this.policy.cacheTtlSeconds * 1000 - (Date.now() - Date.parse(hit.body.scored_at)));
          return { ...hit.body, cached: true };
        }
      }
    }

    const now = Date.now();
    const generation = changes.generation;
    const { profile, version } = await loadProfile(this.store, {
      entityId: body.entity_id, currency: body.currency, counterpartyId: context.counterparty_id, linked: context.linked_identifiers, now,
    });
    const result = scoreEntity(profile, request, this.policy, now);
    const stored: StoredScore = {
      entity_id: body.entity_id,
      score: result.score,
      risk_level: result.riskLevel,
      signals: result.signals,
      decision_id: newId('dec'),
      policy_version: result.policyVersion,
      scored_at: new Date(now).toISOString(),
    };
    await this.decisions.write({
      id: stored.decision_id,
      kind: 'score',
      principal_id: principal.id,
      owner_client_id: principal.clientId,
      subject_id: body.entity_id,
      request_digest: sha256(canonical),
      result: JSON.stringify(stored),
      policy_version: stored.policy_version,
      created_at: now,
    });
    if (cacheable) {
      this.cache.set(key, { body: stored, version, generation });
      this.sharedSet(key, { body: stored, version, generation });
    }
    return { ...stored, cached: false };
  }
}
