// One sync with each active peer (docs/network.md, "Using it"): read its signed descriptor (its OPRF
// key), pull its flag set incrementally, have it evaluate — blinded — the local identifiers not yet
// resolved under that key, then look every resolved identifier's tag up in the pulled set and keep
// the labels that open. Runs in the background only; scoring reads the stored matches.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import type { UrlPolicy } from '../webhooks/ssrf.ts';
import { callPeer, PeerCallError, problemDetail, type PeerAnswer } from './client.ts';
import type { NetworkIdentity } from './identity.ts';
import type { NetworkMetrics } from './metrics.ts';
import { b64, deriveLabelKey, deriveTag, ELEMENT_BYTES, fromB64, openLabel, prfInput } from './oprf.ts';
import { blindInputsOff, finalizeAllOff } from './oprf-thread.ts';
import { listPeers } from './peers.ts';
import { nextToResolve, PENDING_RETENTION_MS } from './pending.ts';
import { ENTITY_TYPE, type NetworkDb, type NetworkPeersTable } from './tables.ts';

const EVALUATE_BATCH = 1000;
/** A page of a peer's flags: one signed call with its own timeout, well within it at any set size. */
const FLAGS_PAGE = 1000;
/** Bounds one sync's work per peer: pages pulled (the rest at the next sync, from the stored cursor), and evaluate calls made. */
const PAGES_PER_SYNC = 100;
const MAX_BATCHES = 100;
/** Labels opened between two yields to the event loop while matching. */
const MATCH_CHUNK = 500;

export interface SyncDeps {
  db: NetworkDb;
  identity: NetworkIdentity;
  urlPolicy: UrlPolicy;
  timeoutMs: number;
  metrics?: NetworkMetrics;
  /** entity ids follow the members' common hashing: resolve them (identifier type `entity`) too */
  commonEntityIds?: boolean;
  /** entries per page and pages per sync (tests make them small) */
  paging?: { pageSize: number; pagesPerSync: number };
}

export interface PeerSyncResult {
  id: string;
  flags_pulled: number;
  matched: number;
  error?: string;
}

const expectOk = (answer: PeerAnswer, what: string): Record<string, unknown> => {
  if (answer.status !== 200 || typeof answer.body !== 'object' || answer.body === null) throw new PeerCallError(`${what}: ${problemDetail(answer)}`);
  return answer.body as Record<string, unknown>;
};

async function readDescriptor(deps: SyncDeps, peer: NetworkPeersTable): Promise<string> {
  const body = expectOk(await callPeer(deps.identity, peer, 'GET', '/network/v1/descriptor', undefined, deps.urlPolicy, deps.timeoutMs), 'descriptor');
  if (body.signing_key !== peer.signing_key) throw new PeerCallError('descriptor: the peer now shows another signing key than the one pinned');
  const oprf = body.oprf_public_key;
  if (typeof oprf !== 'string' || !fromB64(oprf, ELEMENT_BYTES)) throw new PeerCallError('descriptor: no valid oprf_public_key');
  if (oprf !== peer.oprf_public) {
    // A new OPRF key makes every stored resolution for this peer meaningless.
    await deps.db.deleteFrom('network_resolved').where('peer_id', '=', peer.id).execute();
    await deps.db.updateTable('network_peers').set({ oprf_public: oprf }).where('id', '=', peer.id).execute();
  }
  return oprf;
}

const TAG = /^[A-Za-z0-9_-]{43}$/;

/**
 * Pulls the changes since the last pull, page by page (each page its own signed call), applying
 * each page and storing where the pull stands in one transaction, so a pull cut short (a timeout,
 * the bound of pages per sync) resumes there at the next sync. A new epoch at the peer means its
 * whole set again.
 */
async function pullFlags(deps: SyncDeps, peer: NetworkPeersTable): Promise<number> {
  const { db } = deps;
  let since = peer.flags_since;
  let epoch = peer.flags_epoch;
  let cursor = peer.flags_cursor || undefined;
  let pulled = 0;
  const { pageSize, pagesPerSync } = deps.paging ?? { pageSize: FLAGS_PAGE, pagesPerSync: PAGES_PER_SYNC };
  for (let page = 0; page < pagesPerSync; page++) {
    const query = new URLSearchParams({ limit: String(pageSize), ...(since ? { since } : {}), ...(cursor ? { cursor } : {}) });
    const body = expectOk(await callPeer(deps.identity, peer, 'GET', `/network/v1/flags?${query}`, undefined, deps.urlPolicy, deps.timeoutMs), 'flags');
    const entries = Array.isArray(body.entries) ? (body.entries as Array<Record<string, unknown>>) : undefined;
    const next = typeof body.next_cursor === 'string' && body.next_cursor.length <= 64 ? body.next_cursor : undefined;
    if (!entries || typeof body.epoch !== 'string' || typeof body.since !== 'string' || !/^\d{1,15}$/.test(body.since)) throw new PeerCallError('flags: malformed answer');
    if ((since !== '' || cursor !== undefined) && body.epoch !== epoch) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('network_peer_flags').where('peer_id', '=', peer.id).execute();
        await trx.updateTable('network_peers').set({ flags_since: '', flags_cursor: '', flags_epoch: '' }).where('id', '=', peer.id).execute();
      });
      since = '';
      cursor = undefined;
      epoch = '';
      continue;
    }
    epoch = body.epoch;
    const withdrawn = entries.filter((e) => e.withdrawn === true && typeof e.tag === 'string' && TAG.test(e.tag)).map((e) => e.tag as string);
    // One row per tag (a peer's repeated tag must not make one statement update a row twice).
    const held = [...new Map(entries.filter((e) => e.withdrawn !== true && typeof e.tag === 'string' && TAG.test(e.tag) && typeof e.sealed === 'string' && e.sealed.length <= 4096)
      .map((e) => [e.tag as string, { peer_id: peer.id, tag: e.tag as string, sealed: e.sealed as string }])).values()];
    // The page ends the pull: the next one starts from its `since`; otherwise from its cursor.
    const where = next ? { flags_since: since, flags_cursor: next, flags_epoch: epoch } : { flags_since: body.since, flags_cursor: '', flags_epoch: epoch };
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < withdrawn.length; i += 500) await trx.deleteFrom('network_peer_flags').where('peer_id', '=', peer.id).where('tag', 'in', withdrawn.slice(i, i + 500)).execute();
      for (let i = 0; i < held.length; i += 500) {
        await trx.insertInto('network_peer_flags').values(held.slice(i, i + 500))
          .onConflict((oc) => oc.columns(['peer_id', 'tag']).doUpdateSet((eb) => ({ sealed: eb.ref('excluded.sealed') }))).execute();
      }
      await trx.updateTable('network_peers').set(where).where('id', '=', peer.id).execute();
    });
    pulled += entries.length;
    if (!next) return pulled;
    cursor = next;
  }
  return pulled;
}

/**
 * Asks the peer to evaluate the live identifiers it has not evaluated yet (under its current key),
 * in blinded batches; stops quietly at the peer's daily budget (429), to continue at a later sync.
 */
async function resolvePending(deps: SyncDeps, peer: NetworkPeersTable, oprfPublic: string): Promise<void> {
  const { db } = deps;
  const entityIds = deps.commonEntityIds === true;
  // Identifiers no longer held (erased, unlinked, no longer named by scores; entity ids when their
  // common hashing is off) are forgotten here too.
  await db.deleteFrom('network_resolved').where('peer_id', '=', peer.id).where('id_type', '<>', ENTITY_TYPE)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('identifiers as i').select(sql`1`.as('one'))
      .where('i.environment', '=', 'live').whereRef('i.id_type', '=', 'network_resolved.id_type').whereRef('i.hash', '=', 'network_resolved.hash'))))
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('network_pending as q').select(sql`1`.as('one'))
      .whereRef('q.id_type', '=', 'network_resolved.id_type').whereRef('q.hash', '=', 'network_resolved.hash'))))
    .execute();
  let stale = db.deleteFrom('network_resolved').where('peer_id', '=', peer.id).where('id_type', '=', ENTITY_TYPE);
  if (entityIds) {
    stale = stale.where(({ not, exists, selectFrom }) => not(exists(selectFrom('entities as e').select(sql`1`.as('one'))
      .where('e.environment', '=', 'live').whereRef('e.entity_id', '=', 'network_resolved.hash'))));
  }
  await stale.execute();
  const publicKey = fromB64(oprfPublic, ELEMENT_BYTES)!;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    // What events linked first, then what only score requests named, the clients taking turns (pending.ts).
    const pending = await nextToResolve(db, peer.id, { entityIds, limit: EVALUATE_BATCH });
    if (pending.length === 0) return;
    const blinded = await blindInputsOff(pending.map((p) => prfInput(p.id_type, p.hash)));
    const answer = await callPeer(deps.identity, peer, 'POST', '/network/v1/evaluate', { elements: blinded.map((b) => b64(b.blinded)) }, deps.urlPolicy, deps.timeoutMs);
    if (answer.status === 429) return;
    const body = expectOk(answer, 'evaluate');
    const evaluated = Array.isArray(body.evaluated) ? body.evaluated.map((e) => fromB64(e, ELEMENT_BYTES)) : [];
    const proof = fromB64(body.proof, 64);
    if (evaluated.some((e) => e === undefined) || !proof) throw new PeerCallError('evaluate: malformed answer');
    const outputs = await finalizeAllOff(blinded, evaluated as Uint8Array[], publicKey, proof);
    if (!outputs) throw new PeerCallError('evaluate: the proof does not verify under the peer\'s OPRF key');
    deps.metrics?.evaluations('asked', pending.length);
    const now = Date.now();
    await db.insertInto('network_resolved').values(pending.map((p, i) => ({
      peer_id: peer.id, id_type: p.id_type, hash: p.hash, oprf_public: oprfPublic, tag: deriveTag(outputs[i]!), label_key: deriveLabelKey(outputs[i]!).toString('base64url'), resolved_at: now,
    }))).onConflict((oc) => oc.columns(['peer_id', 'id_type', 'hash']).doNothing()).execute();
  }
}

/**
 * Replaces the peer's matches by the resolved identifiers whose tag is in its set and whose label
 * opens. The resolved identifiers are walked 500 at a time in key order (each page one short
 * indexed read), yielding to the event loop between pages, so that a large set of identifiers or
 * of new flags does not hold the process's scores.
 */
async function match(db: NetworkDb, peer: NetworkPeersTable): Promise<number> {
  const now = Date.now();
  const matches: Array<{ peer_id: string; id_type: string; hash: string; label: string; matched_at: number }> = [];
  let after: { id_type: string; hash: string } | undefined;
  for (;;) {
    let page = db.selectFrom('network_resolved as r')
      .leftJoin('network_peer_flags as f', (j) => j.onRef('f.peer_id', '=', 'r.peer_id').onRef('f.tag', '=', 'r.tag'))
      .select(['r.id_type', 'r.hash', 'r.tag', 'r.label_key', 'f.sealed'])
      .where('r.peer_id', '=', peer.id);
    const from = after;
    if (from) page = page.where((eb) => eb.or([eb('r.id_type', '>', from.id_type), eb.and([eb('r.id_type', '=', from.id_type), eb('r.hash', '>', from.hash)])]));
    const rows = await page.orderBy('r.id_type').orderBy('r.hash').limit(MATCH_CHUNK).execute();
    for (const row of rows) {
      const label = row.sealed === null ? undefined : openLabel(row.sealed, Buffer.from(row.label_key, 'base64url'), row.tag);
      if (label) matches.push({ peer_id: peer.id, id_type: row.id_type, hash: row.hash, label: JSON.stringify(label), matched_at: now });
    }
    if (rows.length < MATCH_CHUNK) break;
    after = rows[rows.length - 1];
    await yieldToLoop();
  }
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('network_matches').where('peer_id', '=', peer.id).execute();
    for (let i = 0; i < matches.length; i += 500) await trx.insertInto('network_matches').values(matches.slice(i, i + 500)).execute();
  });
  return matches.length;
}

async function syncPeer(deps: SyncDeps, peer: NetworkPeersTable): Promise<PeerSyncResult> {
  let pulled = 0;
  try {
    const oprf = await readDescriptor(deps, peer);
    pulled = await pullFlags(deps, peer);
    await resolvePending(deps, peer, oprf);
    const matched = await match(deps.db, peer);
    await deps.db.updateTable('network_peers').set({ last_sync_at: Date.now(), last_error: null }).where('id', '=', peer.id).execute();
    deps.metrics?.synced('ok', pulled);
    return { id: peer.id, flags_pulled: pulled, matched };
  } catch (err) {
    if (!(err instanceof PeerCallError)) throw err;
    await deps.db.updateTable('network_peers').set({ last_error: err.message }).where('id', '=', peer.id).execute();
    deps.metrics?.synced('error', pulled);
    const matched = Number((await deps.db.selectFrom('network_matches').select(sql<number>`count(*)`.as('n')).where('peer_id', '=', peer.id).executeTakeFirst())?.n ?? 0);
    return { id: peer.id, flags_pulled: pulled, matched, error: err.message };
  }
}

/** One sync with every active peer, one after another (a slow peer delays only the sync). */
export async function syncAll(deps: SyncDeps): Promise<PeerSyncResult[]> {
  await deps.db.deleteFrom('network_pending').where('seen_at', '<', Date.now() - PENDING_RETENTION_MS).execute();
  const results: PeerSyncResult[] = [];
  for (const peer of await listPeers(deps.db, 'active')) results.push(await syncPeer(deps, peer));
  return results;
}
