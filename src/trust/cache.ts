// Score cache. An entry answers only while (a) its TTL has not passed and (b) the entity's version
// in the store is still the one the score was computed from: any event for the entity, or for a
// flagged entity sharing an identifier with it, bumps that version, so a fresh chargeback is never
// hidden — on any instance, with no messaging needed.
import { sha256Hex } from '../keys/format.ts';
import { LRUCache } from 'lru-cache';

export interface CachedScore<T> {
  body: T;
  /** the entity's store version the score was computed from */
  version: number;
  /** the store's change generation (changes.ts) when the version was last confirmed */
  generation: number;
}

/** JSON with object keys sorted, so equal requests have equal digests. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

export function requestDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

export class ScoreCache<T extends object> {
  private readonly lru: LRUCache<string, CachedScore<T>>;

  /** An entry holds one response (~2 KB with its signals): 16,000 entries stay near 32 MB. */
  constructor(ttlSeconds: number, maxEntries = 16_000) {
    this.lru = new LRUCache({
      max: maxEntries,
      ttl: Math.max(1, ttlSeconds * 1000),
      ttlAutopurge: false,
      noUpdateTTL: true,
    });
  }

  get(key: string): CachedScore<T> | undefined {
    return this.lru.get(key);
  }

  set(key: string, entry: CachedScore<T>, ttlMs?: number): void {
    if (ttlMs !== undefined && ttlMs <= 0) return;
    this.lru.set(key, entry, ttlMs === undefined ? undefined : { ttl: ttlMs });
  }

  get size(): number {
    return this.lru.size;
  }
}
