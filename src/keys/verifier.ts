// Authenticates X-API-Key. Records are cached by key digest so the hot path makes no store
// round trip; a revocation (from this process or any other) drops the entry before the next
// request is checked. last_used_at is collected in memory and written in batches.
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Database } from '../store/schema.ts';
import { parseScopes, type Principal, type Role } from '../auth/principal.ts';
import { parseApiKey, sha256Hex } from './format.ts';
import { findKeyByHash, keyStatus, recordKeyUsage, type KeyRow } from './repository.ts';

interface CachedKey {
  row: KeyRow;
  principal: Principal;
}

export class KeyVerifier {
  // Evicted entries leave the id index too, so both stay bounded.
  private readonly byHash = new LRUCache<string, CachedKey>({ max: 100_000, dispose: (value) => this.hashById.delete(value.row.id) });
  private readonly hashById = new Map<string, string>();
  private pendingUsage = new Map<string, number>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly isClientDeactivated: (clientId: string) => boolean,
    private readonly flushEveryMs = 5000,
  ) {}

  start(): void {
    this.flushTimer = setInterval(() => void this.flushUsage().catch(() => {}), this.flushEveryMs);
    this.flushTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushUsage();
  }

  /** Drops a key from the cache; the next request re-reads it from the store. */
  forget(id: string): void {
    const hash = this.hashById.get(id);
    if (hash !== undefined) this.byHash.delete(hash);
    this.hashById.delete(id);
  }

  lastUsed(id: string): number | undefined {
    return this.pendingUsage.get(id);
  }

  async verify(raw: string): Promise<Principal | undefined> {
    // The checksum rejects typos and random guesses without touching the store.
    if (parseApiKey(raw) === null) return undefined;
    const hash = sha256Hex(raw);
    let cached = this.byHash.get(hash);
    if (!cached) {
      const row = await findKeyByHash(this.db, hash);
      if (!row) return undefined;
      cached = {
        row,
        principal: { id: row.id, kind: 'api_key', clientId: row.owner_client_id, role: row.role as Role, scopes: new Set(parseScopes(row.scopes)) },
      };
      this.byHash.set(hash, cached);
      this.hashById.set(row.id, hash);
    }
    const now = Date.now();
    if (keyStatus(cached.row, now) !== 'active' || this.isClientDeactivated(cached.row.owner_client_id)) return undefined;
    this.pendingUsage.set(cached.row.id, now);
    return cached.principal;
  }

  async flushUsage(): Promise<void> {
    if (this.pendingUsage.size === 0) return;
    const batch = this.pendingUsage;
    this.pendingUsage = new Map();
    try {
      await recordKeyUsage(this.db, batch);
    } catch (err) {
      // Keep the newer of the two timestamps for the next attempt.
      for (const [id, at] of batch) if ((this.pendingUsage.get(id) ?? 0) < at) this.pendingUsage.set(id, at);
      throw err;
    }
  }
}
