// Score cache. An entry answers only while (a) its TTL has not passed and (b) the store state it was
// computed from — the entity's version and the versions of the identifiers the score looked at
// (profile.ts) — is still the current one: any event for the entity, or a flag change of an entity
// sharing one of those identifiers, moves that state, so a fresh chargeback is never hidden — on
// any instance, with no messaging needed.
//
// Entries are keyed by a SHA-256 digest of only what the decision depends on, the caller included
// (cacheKey): a fixed 43-character key whatever the request carries, so unknown context members
// (up to 64 KiB of them) can neither make keys expensive to hash and compare nor split or collide
// entries, and one client never receives another's decision.
import { DEFINED_CONTEXT_MEMBERS } from '../model/context-bounds.ts';
import { sha256, sha256Hex } from '../lib/digest.ts';
import { LRUCache } from 'lru-cache';
import type { ScoreContext } from '../model/types.ts';

export interface CachedScore {
  /**
   * The response as stored in the audit row (JSON). A string, not the object: a full cache is one
   * string per entry for the garbage collector to mark instead of some thirty objects, which
   * shortens the pauses of a full collection (and so the tail latency).
   */
  json: string;
  /** the scored entity (the key is a digest; a hit must answer this very entity) */
  entityId: string;
  /** the decision's risk level (counted in the metrics without parsing `json`) */
  riskLevel: string;
  /** the principal whose (audited) decision this is; a hit is only ever its own */
  principalId: string;
  /** the store state the score was computed from (LoadedProfile.state) */
  state: string;
  /** the store's change generation (changes.ts) when the state was last confirmed */
  generation: number;
  /** approximate bytes held, for the cache's byte bound */
  size: number;
}

/** JSON with object keys sorted, so equal requests have equal digests. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Built in one string rather than arrays of parts joined; a hole in a sparse array is empty, as
  // map + join always made it.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      if (i in value) out += canonicalJson(value[i]);
    }
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out += ',';
    out += `${JSON.stringify(keys[i])}:${canonicalJson((value as Record<string, unknown>)[keys[i]!])}`;
  }
  return `${out}}`;
}

export function requestDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * The context members a decision depends on. The model reads most of them; `trade_id` ties the
 * decision to its trade's later outcome, so a decision is never reused for another trade. Unknown
 * members are ignored by the model, but a rule may read any of them (`context.device_os`,
 * docs/rules.md), so they are part of the key too: only when present, so the common request pays
 * nothing for them.
 */
const KNOWN_CONTEXT = [
  'counterparty_id',
  'side',
  'payment_method',
  'country',
  'counterparty_country',
  'account_created_at',
  'trade_id',
] as const;
const KEYED_APART = DEFINED_CONTEXT_MEMBERS;

/** The context's unknown members, canonical JSON, or '' when it has none. */
function otherMembers(context: ScoreContext): string {
  let others: Record<string, unknown> | undefined;
  for (const name of Object.keys(context)) {
    if (KEYED_APART.has(name)) continue;
    (others ??= {})[name] = context[name];
  }
  return others ? canonicalJson(others) : '';
}

export interface CacheKeyInput {
  principalId: string;
  /**
   * A principal works in one environment, so this never splits a caller's entries; it keeps a live
   * decision out of a test caller's reach even if a principal id were ever reused across them.
   */
  environment: string;
  policyVersion: string;
  entityId: string;
  amount: number;
  currency: string;
  context: ScoreContext;
  /**
   * The rules' revision for the environment (model/outcomes.ts, Decider.revision): a rule or list
   * change, or a list entry's expiry, moves it, so no cached score outlives a change.
   */
  rulesRevision: string;
}

/** 256-bit digest, base64url: a few microseconds, and bounded by the body limit whatever the request carries. */
export function cacheKey(k: CacheKeyInput): string {
  return sha256(keyMaterial(k), 'base64url');
}

function keyMaterial(k: CacheKeyInput): string {
  // Known members are strings (schema-checked), so a positional array is unambiguous (absent = null).
  const known = KNOWN_CONTEXT.map((name) => k.context[name] ?? null);
  const given = k.context.linked_identifiers;
  // Order and repeats of linked identifiers do not change the score.
  const linked = given && given.length > 0 ? [...new Set(given.map((l) => `${l.type}\u0000${l.hash}`))].sort() : [];
  // A complete JSON array, then the unknown members (if any): unambiguous.
  const material =
    JSON.stringify([
      k.principalId,
      k.environment,
      k.policyVersion,
      k.rulesRevision,
      k.entityId,
      k.amount,
      k.currency,
      known,
      linked,
    ]) + otherMembers(k.context);
  return material;
}

export interface ScoreCacheLimits {
  maxEntries?: number;
  /** bound on the approximate bytes held by entries */
  maxBytes?: number;
  /** the clock entries age by (tests move it); performance's by default */
  clock?: { now(): number };
}

/**
 * Keys the sweep looks at before it gives the event loop a turn. One key costs a lookup (and, when
 * expired, a delete): well under a millisecond a slice, where one sweep over 16,000 entries took
 * 11–42 ms under load (docs/benchmarks.md, "Hot path, round four").
 */
export const SWEEP_SLICE = 512;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class ScoreCache {
  private lru: LRUCache<string, CachedScore>;
  /**
   * The keys held, oldest first: what the sweep walks. lru-cache's own iterators skip expired
   * entries (only its all-at-once purgeStale sees them), and a Set's iterator stays valid while
   * entries come and go between slices.
   */
  private keys: Set<string>;
  private readonly open: () => { lru: LRUCache<string, CachedScore>; keys: Set<string> };
  private sweeping: Promise<void> | undefined;

  /** An entry holds one response (~1 KB of JSON, 2 KB as V8 holds it): 16,000 entries stay near 32 MB. */
  constructor(ttlSeconds: number, { maxEntries = 16_000, maxBytes = 32 * 1024 * 1024, clock }: ScoreCacheLimits = {}) {
    const ttl = Math.max(1, ttlSeconds * 1000);
    this.open = () => {
      const keys = new Set<string>();
      const lru = new LRUCache<string, CachedScore>({
        max: maxEntries,
        maxSize: maxBytes,
        sizeCalculation: (entry) => Math.max(1, entry.size),
        ttl,
        // Expired entries are dropped by a sweep once per TTL rather than a timer per entry
        // (ttlAutopurge), which would cost a timer for every score computed.
        ttlAutopurge: false,
        noUpdateTTL: true,
        // An evicted, deleted or expired entry leaves the sweep's keys too, so they are bounded as
        // the entries are; a replaced value keeps its key.
        dispose: (_entry, key, reason) => {
          if (reason !== 'set') keys.delete(key);
        },
        // A moved clock is read at once rather than once a millisecond.
        ...(clock ? { perf: clock, ttlResolution: 0 } : {}),
      });
      return { lru, keys };
    };
    ({ lru: this.lru, keys: this.keys } = this.open());
    // The sweep holds the cache weakly: a cache nobody uses any more is collected, and its sweep stops.
    const ref = new WeakRef(this);
    const timer: NodeJS.Timeout = setInterval(
      () => {
        const cache = ref.deref();
        if (cache) void cache.sweep();
        else clearInterval(timer);
      },
      Math.max(1000, ttl),
    );
    timer.unref();
  }

  /**
   * Removes the expired entries, SWEEP_SLICE keys a turn, so the event loop is never held for the
   * whole cache. Only frees memory sooner: get never answers an expired entry, and maxEntries and
   * maxBytes bound what is held. A sweep asked for while one runs is that one.
   */
  sweep(): Promise<void> {
    this.sweeping ??= sweepExpired(new WeakRef(this.lru), this.keys).finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  get(key: string): CachedScore | undefined {
    return this.lru.get(key);
  }

  set(key: string, entry: Omit<CachedScore, 'size'>, ttlMs?: number): void {
    if (ttlMs !== undefined && ttlMs <= 0) return;
    // Strings count two bytes a character (V8 keeps some as one); the rest is the entry object.
    const size =
      2 * (entry.json.length + key.length + entry.entityId.length + entry.principalId.length + entry.state.length) +
      128;
    this.lru.set(key, { ...entry, size }, ttlMs === undefined ? undefined : { ttl: ttlMs });
    // An entry too large to keep leaves a key here with no entry; the sweep drops it.
    this.keys.add(key);
  }

  /** Drops every entry (an entity was erased: no score computed from its data may be served). */
  clear(): void {
    // A new, empty cache rather than lru-cache's clear, which visits every entry in one turn (up to
    // 11 ms for 16,000). A sweep under way finishes on the old one, which is then garbage.
    ({ lru: this.lru, keys: this.keys } = this.open());
  }

  get size(): number {
    return this.lru.size;
  }

  /** approximate bytes held */
  get bytes(): number {
    return this.lru.calculatedSize;
  }
}

/**
 * One sweep: the keys held when it starts (later ones are fresh), a slice a turn. Holds the cache
 * weakly between slices, as the timer does.
 */
async function sweepExpired(ref: WeakRef<LRUCache<string, CachedScore>>, keys: Set<string>): Promise<void> {
  const walk = keys.values();
  for (let left = keys.size; left > 0;) {
    const lru = ref.deref();
    if (!lru) return;
    for (let n = 0; n < SWEEP_SLICE && left > 0; n++, left--) {
      const next = walk.next();
      if (next.done) return;
      // has() is false for an expired or missing entry and, unlike get, leaves the order of use alone.
      if (!lru.has(next.value)) {
        lru.delete(next.value);
        keys.delete(next.value);
      }
    }
    await nextTurn();
  }
}
