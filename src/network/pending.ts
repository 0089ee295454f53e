// Identifiers that reach this deployment only in a score request's context (never in an event)
// are queued here for the next sync to resolve against the peers (docs/network.md, "Using it").
// A score only adds to an in-memory set and never waits; the set is written to network_pending in
// the background, and only while the deployment has an active peer, so a deployment outside the
// network keeps nothing of it: an identifier named while no peer is active is not kept, and is
// queued when a score names it again once one is. Each row names the entity it was scored for, so
// that entity's erasure removes it (src/trust/erasure.ts).
import type { NetworkDb } from './tables.ts';

interface Pending {
  type: string;
  hash: string;
}

interface Queued extends Pending {
  entityId: string;
}

/** How long an identifier seen only in score requests stays queued after it was last seen. */
export const PENDING_RETENTION_MS = 30 * 86_400_000;
/** One identifier is written at most this often, however many scores name it. */
const REWRITE_AFTER_MS = 3_600_000;
const MAX_BUFFERED = 10_000;
const MAX_REMEMBERED = 100_000;

export class PendingIdentifiers {
  private buffer = new Map<string, Queued>();
  private readonly written = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: NetworkDb,
    private readonly onError: (err: unknown) => void,
    private readonly flushMs = 1000,
  ) {}

  /** Queues the identifiers a request named for `entityId` (live environment only); returns at once. */
  add(environment: string, identifiers: readonly Pending[], entityId: string): void {
    if (environment !== 'live' || identifiers.length === 0) return;
    const now = Date.now();
    for (const id of identifiers) {
      const key = `${id.type}\u0000${id.hash}\u0000${entityId}`;
      if (this.buffer.size >= MAX_BUFFERED) break;
      if ((this.written.get(key) ?? -Infinity) > now - REWRITE_AFTER_MS) continue;
      this.buffer.set(key, { type: id.type, hash: id.hash, entityId });
    }
    if (this.buffer.size > 0 && !this.timer) {
      this.timer = setTimeout(() => void this.flush().catch(this.onError), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes what is queued (a sync calls it first, so it resolves what scores just named). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.size === 0) return;
    const batch = [...this.buffer];
    this.buffer = new Map();
    const active = await this.db.selectFrom('network_peers').select('id').where('status', '=', 'active').limit(1).executeTakeFirst();
    if (!active) return;
    const now = Date.now();
    for (let i = 0; i < batch.length; i += 500) {
      const rows = batch.slice(i, i + 500).map(([, id]) => ({ id_type: id.type, hash: id.hash, entity_id: id.entityId, seen_at: now }));
      await this.db.insertInto('network_pending').values(rows).onConflict((oc) => oc.columns(['id_type', 'hash', 'entity_id']).doUpdateSet({ seen_at: now })).execute();
    }
    if (this.written.size + batch.length > MAX_REMEMBERED) this.written.clear();
    for (const [key] of batch) this.written.set(key, now);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
