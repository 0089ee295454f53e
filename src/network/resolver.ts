// One sync with each active peer (docs/network.md, "Using it"): read its signed descriptor (its OPRF
// key), pull its flag set incrementally (pull.ts), have it evaluate — blinded — the local
// identifiers not yet resolved under that key, then look every resolved identifier's tag up in the
// pulled set and keep the labels that open (matches.ts). Runs in the background only; scoring reads
// the stored matches. Peers are synced a few at once, each within its own deadline (docs/network.md, "A
// peer's limits"), so a slow or hostile peer holds one slot and never the others.
import type { UrlPolicy } from '../webhooks/ssrf.ts';
import { callPeer, PeerCallError, type CallLimits } from './client.ts';
import { deletePeerRows } from './peer-data-repository.ts';
import type { NetworkIdentity } from './identity.ts';
import { evaluateAnswerBytes, OPRF_KEY_HOLD_MS, PEER_SYNC_DEADLINE_MS, SYNC_CONCURRENCY } from './limits.ts';
import type { NetworkMetrics } from './metrics.ts';
import { b64, deriveLabelKey, deriveTag, ELEMENT_BYTES, fromB64, prfInput } from './oprf.ts';
import { blindInputsOff, finalizeAllOff } from './oprf-thread.ts';
import { listPeers, markPeerSynced, setPeerError, setPeerOprfKey } from './peer-repository.ts';
import { matchResolved } from './matches.ts';
import { countMatches, deletePendingSeenBefore, insertResolved } from './match-repository.ts';
import { nextToResolve, PENDING_RETENTION_MS } from './pending.ts';
import { forgetStaleEntityResolutions, forgetUnheldResolutions } from './entity-join-repository.ts';
import { busy, expectOk, PeerBusy, pullFlags, type PullDeps, type PullResult } from './pull.ts';
import { readSyncState, writeSyncState, type PeerSyncState } from './peer-sync-repository.ts';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';

const EVALUATE_BATCH = 1000;
/** A page of a peer's flags: one signed call with its own deadline, well within it at any set size. */
const FLAGS_PAGE = 1000;
/**
 * Bounds one sync's work per peer: pages pulled (the rest at the next sync, from the stored cursor),
 * and evaluate calls made.
 */
const PAGES_PER_SYNC = 100;
const MAX_BATCHES = 100;

export interface SyncDeps {
  db: NetworkDb;
  identity: NetworkIdentity;
  urlPolicy: UrlPolicy;
  /** the whole of one call to a peer */
  timeoutMs: number;
  metrics?: NetworkMetrics;
  /** where the alerts about a peer go (a warn line naming the peer id, never identifiers) */
  log?: { warn(obj: object, msg: string): void };
  /** entity ids follow the members' common hashing: resolve them (identifier type `entity`) too */
  commonEntityIds?: boolean;
  /** entries per page and pages per sync (tests make them small) */
  paging?: { pageSize: number; pagesPerSync: number };
  /** VOUCH_NETWORK_MAX_FLAGS_PER_PEER (limits.ts: syncLimits) */
  maxFlagsPerPeer?: number;
  /** the whole of one sync with one peer, and how many peers are synced at once (tests shorten them) */
  peerDeadlineMs?: number;
  concurrency?: number;
}

export interface PeerSyncResult {
  id: string;
  flags_pulled: number;
  matched: number;
  error?: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The peer's OPRF key to resolve under, or why there is none this sync. A key the peer shows for
 * the first time is adopted once it has shown it for a day: every adoption makes this deployment
 * send all its identifiers again (revealing their count), so a peer rotating its key at every
 * sync gets nothing re-sent, and adoptions are at least a day apart.
 */
async function readDescriptor(
  deps: SyncDeps,
  peer: NetworkPeersTable,
  state: PeerSyncState,
  call: CallLimits,
): Promise<{ oprf?: string; note?: string }> {
  const body = expectOk(
    await callPeer(
      deps.identity,
      peer,
      'GET',
      '/network/v1/descriptor',
      undefined,
      deps.urlPolicy,
      deps.timeoutMs,
      call,
    ),
    'descriptor',
  );
  if (body.signing_key !== peer.signing_key)
    throw new PeerCallError('descriptor: the peer now shows another signing key than the one pinned');
  const oprf = body.oprf_public_key;
  if (typeof oprf !== 'string' || !fromB64(oprf, ELEMENT_BYTES))
    throw new PeerCallError('descriptor: no valid oprf_public_key');
  if (oprf === peer.oprf_public || peer.oprf_public === null) {
    if (peer.oprf_public === null) await setPeerOprfKey(deps.db, peer.id, oprf);
    state.oprfSeen = null;
    return { oprf };
  }
  const now = Date.now();
  if (state.oprfSeen !== oprf) Object.assign(state, { oprfSeen: oprf, oprfSeenAt: now });
  if (now - state.oprfSeenAt < OPRF_KEY_HOLD_MS) {
    return {
      note: `oprf_key: the peer shows a new OPRF key since ${iso(state.oprfSeenAt)}; nothing is resolved with it before the key has held a day (${iso(state.oprfSeenAt + OPRF_KEY_HOLD_MS)})`,
    };
  }
  // The new key makes every stored resolution for this peer meaningless.
  await deletePeerRows(deps.db, 'network_resolved', peer.id);
  await setPeerOprfKey(deps.db, peer.id, oprf);
  state.oprfSeen = null;
  return { oprf };
}

/**
 * Asks the peer to evaluate the live identifiers it has not evaluated yet (under its current key),
 * in blinded batches; its 429 (the daily budget it grants us) ends this step, and no evaluation is
 * asked of it again before its Retry-After.
 */
async function resolvePending(
  deps: SyncDeps,
  peer: NetworkPeersTable,
  oprfPublic: string,
  call: CallLimits,
): Promise<void> {
  const { db } = deps;
  const entityIds = deps.commonEntityIds === true;
  // Identifiers no longer held (erased, unlinked, no longer named by scores; entity ids when their
  // common hashing is off) are forgotten here too.
  await forgetUnheldResolutions(db, peer.id);
  await forgetStaleEntityResolutions(db, peer.id, entityIds);
  const publicKey = fromB64(oprfPublic, ELEMENT_BYTES)!;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    // What events linked first, then what only score requests named, the clients taking turns (pending.ts).
    const pending = await nextToResolve(db, peer.id, { entityIds, limit: EVALUATE_BATCH });
    if (pending.length === 0) return;
    const blinded = await blindInputsOff(pending.map((p) => prfInput(p.id_type, p.hash)));
    const answer = await callPeer(
      deps.identity,
      peer,
      'POST',
      '/network/v1/evaluate',
      { elements: blinded.map((b) => b64(b.blinded)) },
      deps.urlPolicy,
      deps.timeoutMs,
      { ...call, maxBytes: evaluateAnswerBytes(pending.length) },
    );
    if (answer.status === 429) throw busy(answer, 'evaluate', 'evaluate');
    const body = expectOk(answer, 'evaluate');
    if (!Array.isArray(body.evaluated) || body.evaluated.length !== pending.length)
      throw new PeerCallError('evaluate: malformed answer');
    const evaluated = body.evaluated.map((e) => fromB64(e, ELEMENT_BYTES));
    const proof = fromB64(body.proof, 64);
    if (evaluated.some((e) => e === undefined) || !proof) throw new PeerCallError('evaluate: malformed answer');
    const outputs = await finalizeAllOff(blinded, evaluated as Uint8Array[], publicKey, proof);
    if (!outputs) throw new PeerCallError("evaluate: the proof does not verify under the peer's OPRF key");
    deps.metrics?.evaluations('asked', pending.length);
    const now = Date.now();
    await insertResolved(
      db,
      pending.map((p, i) => ({
        peer_id: peer.id,
        id_type: p.id_type,
        hash: p.hash,
        oprf_public: oprfPublic,
        tag: deriveTag(outputs[i]!),
        label_key: deriveLabelKey(outputs[i]!).toString('base64url'),
        resolved_at: now,
      })),
    );
  }
}

/**
 * One sync with one peer, within its deadline. What holds part of it back without being a failure
 * of the peer's protocol — its budget (429), a new OPRF key not yet adopted, its cap or daily
 * growth reached — is reported in `error` while the rest of the sync (matching what is held) runs.
 */
async function syncPeer(deps: SyncDeps, peer: NetworkPeersTable): Promise<PeerSyncResult> {
  const { db } = deps;
  const state = await readSyncState(db, peer.id);
  const call: CallLimits = { deadlineAt: Date.now() + (deps.peerDeadlineMs ?? PEER_SYNC_DEADLINE_MS) };
  const { pageSize, pagesPerSync } = deps.paging ?? { pageSize: FLAGS_PAGE, pagesPerSync: PAGES_PER_SYNC };
  const pullDeps: PullDeps = {
    ...deps,
    maxFlagsPerPeer: deps.maxFlagsPerPeer ?? Number.MAX_SAFE_INTEGER,
    pageSize,
    pagesPerSync,
  };
  const notes: string[] = [];
  const pull: PullResult = { pulled: 0 };
  let matched: number;
  try {
    const now = Date.now();
    if (now < state.callsAfter)
      throw new PeerBusy(
        'calls',
        0,
        `rate_limited: the peer asked not to be called before ${iso(state.callsAfter)} (Retry-After)`,
      );
    const key = await readDescriptor(deps, peer, state, call);
    if (key.note) notes.push(key.note);
    await pullFlags(pullDeps, peer, state, call, pull);
    if (pull.stopped) notes.push(pull.stopped);
    if (key.oprf && now < state.evaluateAfter) {
      notes.push(
        `budget: the peer refused more evaluations; none is asked before ${iso(state.evaluateAfter)} (its Retry-After)`,
      );
    } else if (key.oprf) {
      try {
        await resolvePending(deps, peer, key.oprf, call);
      } catch (err) {
        if (!(err instanceof PeerBusy)) throw err;
        state.evaluateAfter = Date.now() + err.seconds * 1000;
        notes.push(err.message);
      }
    }
    matched = await matchResolved(db, peer);
  } catch (err) {
    if (!(err instanceof PeerCallError)) throw err;
    if (err instanceof PeerBusy && err.seconds > 0) state.callsAfter = Date.now() + err.seconds * 1000;
    const error = [...notes, err.message].join('; ');
    await writeSyncState(db, peer.id, state);
    await setPeerError(db, peer.id, error);
    deps.metrics?.synced('error', pull.pulled);
    return { id: peer.id, flags_pulled: pull.pulled, matched: await countMatches(db, peer.id), error };
  }
  const error = notes.length > 0 ? notes.join('; ') : null;
  await writeSyncState(db, peer.id, state);
  await markPeerSynced(db, peer.id, Date.now(), error);
  deps.metrics?.synced(error ? 'error' : 'ok', pull.pulled);
  return { id: peer.id, flags_pulled: pull.pulled, matched, ...(error ? { error } : {}) };
}

/** One sync with every active peer, a few at once; results in the peers' order. */
export async function syncAll(deps: SyncDeps): Promise<PeerSyncResult[]> {
  await deletePendingSeenBefore(deps.db, Date.now() - PENDING_RETENTION_MS);
  const peers = await listPeers(deps.db, 'active');
  const results: PeerSyncResult[] = new Array(peers.length);
  let next = 0;
  const lane = async () => {
    while (next < peers.length) {
      const i = next++;
      results[i] = await syncPeer(deps, peers[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(peers.length, deps.concurrency ?? SYNC_CONCURRENCY) }, lane));
  return results;
}
