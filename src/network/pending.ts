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
import { sql } from 'kysely';
import { ENTITY_TYPE, type NetworkDb } from './tables.ts';

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
    const active = await this.db
      .selectFrom('network_peers')
      .select('id')
      .where('status', '=', 'active')
      .limit(1)
      .executeTakeFirst();
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
        await this.db
          .insertInto('network_pending')
          .values(rows)
          .onConflict((oc) => oc.columns(['id_type', 'hash', 'entity_id']).doUpdateSet({ seen_at: now }))
          .execute();
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
    const waiting = Number(
      (
        await this.db
          .selectFrom('network_pending')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('client_id', '=', clientId)
          .where('queued', '=', 1)
          .executeTakeFirst()
      )?.n ?? 0,
    );
    const room = this.quota - waiting;
    if (ids.length <= room) return { write: ids, over: 0 };
    const stored = new Set<string>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const rows = await this.db
        .selectFrom('network_pending')
        .select(['id_type', 'hash', 'entity_id'])
        .where((eb) =>
          eb.or(
            chunk.map((id) =>
              eb.and([eb('id_type', '=', id.type), eb('hash', '=', id.hash), eb('entity_id', '=', id.entityId)]),
            ),
          ),
        )
        .execute();
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
 * After a sync: a queued row stops counting against its client's quota once every active peer has
 * resolved it. Only rows still counted are looked at (at most the quota per client); a peer added
 * later resolves the others too, in turn, but they no longer hold their client's room.
 */
export async function settleQueue(db: NetworkDb): Promise<void> {
  await db
    .updateTable('network_pending')
    .set({ queued: 0 })
    .where('queued', '=', 1)
    .where(
      sql<boolean>`not exists (select 1 from network_peers p where p.status = 'active' and not exists (
      select 1 from network_resolved r where r.peer_id = p.id and r.id_type = network_pending.id_type and r.hash = network_pending.hash))`,
    )
    .execute();
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
  const unresolved = (type: string, hash: string) =>
    sql<boolean>`not exists (select 1 from network_resolved r where r.peer_id = ${peerId} and r.id_type = ${sql.ref(type)} and r.hash = ${sql.ref(hash)})`;
  const linked = db.selectFrom('identifiers as i').select(['i.id_type', 'i.hash']).where('i.environment', '=', 'live');
  const held = entityIds
    ? linked.union(
        db
          .selectFrom('entities as e')
          .select([sql<string>`${ENTITY_TYPE}`.as('id_type'), 'e.entity_id as hash'])
          .where('e.environment', '=', 'live'),
      )
    : linked;
  const first = await db
    .selectFrom(held.as('h'))
    .select(['h.id_type', 'h.hash'])
    .where(unresolved('h.id_type', 'h.hash'))
    .orderBy('h.id_type')
    .orderBy('h.hash')
    .limit(limit)
    .execute();
  if (first.length >= limit) return first;
  const turns = await sql<{ id_type: string; hash: string }>`select t.id_type, t.hash from (
      select q.id_type, q.hash, q.client_id, row_number() over (partition by q.client_id order by max(q.seen_at) desc, q.id_type, q.hash) as turn
      from network_pending q
      where ${unresolved('q.id_type', 'q.hash')}
        and not exists (select 1 from identifiers i where i.environment = 'live' and i.id_type = q.id_type and i.hash = q.hash)
      group by q.client_id, q.id_type, q.hash) t
    order by t.turn, t.client_id, t.id_type, t.hash
    limit ${limit - first.length}`.execute(db);
  // An identifier several clients named comes up in each one's turn: asked once.
  const seen = new Set(first.map((r) => `${r.id_type}\u0000${r.hash}`));
  const rest = turns.rows.filter(
    (r) => !seen.has(`${r.id_type}\u0000${r.hash}`) && seen.add(`${r.id_type}\u0000${r.hash}`),
  );
  return [...first, ...rest];
}
