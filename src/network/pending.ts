// Identifiers that reach this deployment only in a score request's context (never in an event)
// are queued here for the next sync to resolve against the peers (docs/network.md, "Using it").
// A score only adds to an in-memory set and never waits; the set is written to network_pending in
// the background, and only while the deployment has an active peer, so a deployment outside the
// network keeps nothing of it: an identifier named while no peer is active is not kept, and is
// queued when a score names it again once one is. Each row names the entity it was scored for, so
// that entity's erasure removes it (src/trust/erasure.ts), and the client whose request named it:
// a client that names junk spends its own share of the peers' budgets, never another's.
//
// Fairness (issue 29): what events linked is resolved before anything only a score named; among
// those, clients take turns (one identifier each in turn, the most recently named first); and a
// client has at most `quota` rows still waiting for a peer — beyond it, what its requests name is
// dropped (and counted) until the sync resolves some of its queue.
import type { NetworkDb } from './tables.ts';
import { anyActivePeer } from './peer-repository.ts';
import { queuedAmong, upsertPending, waitingCount } from './match-repository.ts';
import { linkedUnresolved, namedUnresolvedInTurns } from './entity-join-repository.ts';

interface Pending {
  type: string;
  hash: string;
}

interface Queued extends Pending {
  entityId: string;
  clientId: string;
}

/** How long an identifier seen only in score requests stays queued after it was last seen. */
export const PENDING_RETENTION_MS = 30 * 86_400_000;
/** Rows one client may have waiting for a peer (VOUCH_NETWORK_PENDING_PER_CLIENT). */
const PENDING_PER_CLIENT = 1000;
/** One identifier is written at most this often, however many scores name it. */
const REWRITE_AFTER_MS = 3_600_000;
const MAX_BUFFERED = 10_000;
const MAX_REMEMBERED = 100_000;
/** Rows per statement (SQLite's bound parameters, PostgreSQL's plan size). */
const CHUNK = 200;

const keyOf = (id: { type: string; hash: string; entityId: string }) =>
  `${id.type}\u0000${id.hash}\u0000${id.entityId}`;

export class PendingIdentifiers {
  private buffer = new Map<string, Queued>();
  /** per client, how many entries the buffer holds: no client fills it for the others */
  private buffered = new Map<string, number>();
  private readonly written = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  /** told how many identifiers were dropped over a client's quota (vouch_network_pending_dropped_total) */
  onDropped: (count: number) => void = () => {};

  constructor(
    private readonly db: NetworkDb,
    private readonly onError: (err: unknown) => void,
    private readonly flushMs = 1000,
    private readonly quota = PENDING_PER_CLIENT,
  ) {}

  /** Queues the identifiers a request of `clientId` named for `entityId` (live environment only); returns at once. */
  add(environment: string, identifiers: readonly Pending[], entityId: string, clientId = ''): void {
    if (environment !== 'live' || identifiers.length === 0) return;
    const now = Date.now();
    let dropped = 0;
    for (const id of identifiers) {
      const queued = { type: id.type, hash: id.hash, entityId, clientId };
      const key = keyOf(queued);
      if ((this.written.get(key) ?? -Infinity) > now - REWRITE_AFTER_MS || this.buffer.has(key)) continue;
      const held = this.buffered.get(clientId) ?? 0;
      if (this.buffer.size >= MAX_BUFFERED || held >= this.quota) {
        dropped++;
        continue;
      }
      this.buffer.set(key, queued);
      this.buffered.set(clientId, held + 1);
    }
    if (dropped > 0) this.onDropped(dropped);
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
    const batch = [...this.buffer.values()];
    this.buffer = new Map();
    this.buffered = new Map();
    const active = await anyActivePeer(this.db);
    if (!active) return;
    const now = Date.now();
    const byClient = new Map<string, Queued[]>();
    for (const id of batch) {
      const list = byClient.get(id.clientId);
      if (list) list.push(id);
      else byClient.set(id.clientId, [id]);
    }
    let dropped = 0;
    const kept: Queued[] = [];
    for (const [clientId, ids] of byClient) {
      const { write, over } = await this.withinQuota(clientId, ids);
      dropped += over;
      for (let i = 0; i < write.length; i += CHUNK) {
        const rows = write.slice(i, i + CHUNK).map((id) => ({
          id_type: id.type,
          hash: id.hash,
          entity_id: id.entityId,
          client_id: clientId,
          seen_at: now,
        }));
        // A row another client queued first stays that client's: only its sighting is refreshed.
        await upsertPending(this.db, rows, now);
      }
      kept.push(...write);
    }
    if (dropped > 0) this.onDropped(dropped);
    if (this.written.size + kept.length > MAX_REMEMBERED) this.written.clear();
    for (const id of kept) this.written.set(keyOf(id), now);
  }

  /**
   * Which of a client's identifiers to write: those already stored (a new sighting costs no quota)
   * and new ones while the client's rows waiting for a peer stay within the quota; the rest are over.
   */
  private async withinQuota(clientId: string, ids: Queued[]): Promise<{ write: Queued[]; over: number }> {
    const waiting = await waitingCount(this.db, clientId);
    const room = this.quota - waiting;
    if (ids.length <= room) return { write: ids, over: 0 };
    const stored = new Set<string>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const rows = await queuedAmong(this.db, chunk);
      for (const r of rows) stored.add(keyOf({ type: r.id_type, hash: r.hash, entityId: r.entity_id }));
    }
    const fresh = ids.filter((id) => !stored.has(keyOf(id)));
    const admitted = fresh.slice(0, Math.max(0, room));
    return { write: [...ids.filter((id) => stored.has(keyOf(id))), ...admitted], over: fresh.length - admitted.length };
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * The next identifiers to have `peerId` evaluate, at most `limit`: first those events linked (live),
 * with the common entity hashing each live entity's own id, in key order; then those only score
 * requests named, the clients taking turns — each client's most recently named first — so no
 * client's queue, however long, holds back another's.
 */
export async function nextToResolve(
  db: NetworkDb,
  peerId: string,
  { entityIds, limit }: { entityIds: boolean; limit: number },
): Promise<Array<{ id_type: string; hash: string }>> {
  const first = await linkedUnresolved(db, peerId, entityIds, limit);
  if (first.length >= limit) return first;
  const turns = await namedUnresolvedInTurns(db, peerId, limit - first.length);
  // An identifier several clients named comes up in each one's turn: asked once.
  const seen = new Set(first.map((r) => `${r.id_type}\u0000${r.hash}`));
  const rest = turns.filter((r) => !seen.has(`${r.id_type}\u0000${r.hash}`) && seen.add(`${r.id_type}\u0000${r.hash}`));
  return [...first, ...rest];
}
