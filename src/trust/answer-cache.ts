// The scores already answered, looked up before a score is computed and remembered after: this
// instance's cache (cache.ts) and, when configured, the pointer other instances share in Redis.
// An entry answers only while the store state it was computed from is still current (cache.ts).
import type { Redis } from 'ioredis';
import type { Store } from '../store/db.ts';
import type { Environment, Principal } from '../lib/principal.ts';
import { PreparedQuery } from '../store/prepared.ts';
import { currentState, networkParts, stateOf } from './profile.ts';
import { stateFragments, type StateRow } from '../entities/profile-repository.ts';
import { scoreAnswerSql, type ScoreAnswerRow } from '../audit/decision-repository.ts';
import { ScoreCache, type CachedScore } from './cache.ts';
import type { ScoreResponse } from './schemas.ts';
import type { LinkedIdentifier } from '../model/types.ts';

type StoredScore = Omit<ScoreResponse, 'cached'>;

const DECISION_ID = /^dec_[0-9A-Z]{26}$/;

/** The stored decision and, read with it, the store's current state (see LoadedProfile.state). */
type SharedRow = ScoreAnswerRow & StateRow;

/** What one score request is looked up by: the caller, the entity and the identifiers its state covers. */
export interface AnswerLookup {
  key: string;
  principal: Principal;
  entityId: string;
  linked: readonly LinkedIdentifier[];
  ttlMs: number;
}

/** A hit: this instance's stored text, or a decision adopted from the shared cache. */
export type Answered = { local: CachedScore } | { shared: StoredScore };

/**
 * The shared cache (Redis) holds only a pointer: cache key → decision_id. Redis is not trusted
 * with anything a score depends on — an entry is read back from the durable audit row, which must
 * be the caller's own, answer this very cache key, and have been computed from the store's current
 * state (its entity and identifier versions, checked in the same query). Whoever can write to
 * Redis can at most make an instance miss; it can neither forge a score nor revive a stale or
 * another client's decision. This needs no key shared between instances (an HMAC would), and costs
 * the one store round trip a shared hit already made to check the entity's version.
 */
export class AnswerCache {
  readonly local: ScoreCache;
  private readonly sharedQueries = new Map<number, PreparedQuery<unknown[], SharedRow>>();

  constructor(
    private readonly store: Store,
    cacheTtlSeconds: number,
    private readonly redis?: Redis,
  ) {
    this.local = new ScoreCache(cacheTtlSeconds);
  }

  /**
   * While the shared cache is configured but Redis is unreachable the cache is off altogether
   * (issue 5: "cache off, cached: false"): every instance answers from the store until Redis is back.
   */
  usable(): boolean {
    return !this.redis || this.redis.status === 'ready';
  }

  async find(q: AnswerLookup): Promise<Answered | undefined> {
    const changes = this.store.changes;
    const hit = this.local.get(q.key);
    if (hit && hit.principalId === q.principal.id && hit.entityId === q.entityId) {
      changes.poll();
      // Nothing committed since the entry was confirmed: it cannot be stale, no query needed.
      if (changes.supported && hit.generation === changes.generation) return { local: hit };
      const generation = changes.generation;
      if (hit.state !== (await currentState(this.store, q.principal.environment, q.entityId, q.linked))) return;
      hit.generation = generation;
      return { local: hit };
    }
    if (!this.redis) return undefined;
    changes.poll();
    const generation = changes.generation;
    const shared = await this.sharedGet(q);
    if (!shared) return undefined;
    // Adopted for what is left of its TTL; its state was just checked against the store.
    const entry = { json: shared.json, riskLevel: shared.body.risk_level, state: shared.state, generation };
    this.local.set(
      q.key,
      { ...entry, entityId: q.entityId, principalId: q.principal.id },
      q.ttlMs - (Date.now() - Date.parse(shared.body.scored_at)),
    );
    return { shared: shared.body };
  }

  /** A computed decision, answered from here on while its state holds. */
  remember(q: AnswerLookup, entry: Omit<CachedScore, 'size' | 'entityId' | 'principalId'>, decisionId: string): void {
    this.local.set(q.key, { ...entry, entityId: q.entityId, principalId: q.principal.id }, q.ttlMs);
    if (!this.redis || this.redis.status !== 'ready') return;
    this.redis.set(`vouch:score:${q.key}`, decisionId, 'PX', q.ttlMs).catch(() => {});
  }

  clear(): void {
    this.local.clear();
  }

  /** The caller's own decision for this key from the shared cache, if still valid. */
  private async sharedGet(q: AnswerLookup): Promise<{ body: StoredScore; json: string; state: string } | undefined> {
    if (!this.redis || this.redis.status !== 'ready') return undefined;
    let pointer: string | null;
    try {
      pointer = await this.redis.get(`vouch:score:${q.key}`);
    } catch {
      return undefined;
    }
    if (!pointer || !DECISION_ID.test(pointer)) return undefined;
    const row = await this.sharedDecision(q.principal.environment, pointer, q.entityId, q.linked);
    if (!row || row.principal_id !== q.principal.id || row.cache_key !== q.key || row.cache_state !== row.state)
      return undefined;
    const body = JSON.parse(row.result) as StoredScore;
    // Redis expires the pointer with the TTL; a pointer that outlived it (a changed TTL, a hand-made
    // entry) must not revive an old decision.
    if (Date.parse(body.scored_at) + q.ttlMs <= Date.now()) return undefined;
    return body.entity_id === q.entityId ? { body, json: row.result, state: row.state } : undefined;
  }

  private async sharedDecision(
    environment: Environment,
    decisionId: string,
    entityId: string,
    linked: readonly LinkedIdentifier[],
  ): Promise<(SharedRow & { state: string }) | undefined> {
    let query = this.sharedQueries.get(linked.length);
    if (!query) {
      const db = this.store.db;
      query = new PreparedQuery(db as never, 3 + 2 * linked.length, (_db, env, id, entity, ...pairs) =>
        scoreAnswerSql(env, id, stateFragments(networkParts(this.store), env, entity, pairs)).compile(db),
      );
      this.sharedQueries.set(linked.length, query);
    }
    const [row] = await query.execute(environment, decisionId, entityId, ...linked.flatMap((l) => [l.type, l.hash]));
    return row ? { ...row, state: stateOf(row) } : undefined;
  }
}
