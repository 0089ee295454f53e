// Pulling a peer's flag set (docs/network.md, "Using it: the sync", step 2, and "A peer's
// limits"). Every page is data from a possibly hostile party: bounded in bytes before it is read,
// parsed off the main thread, refused whole when it holds more entries than asked or an entry not
// of the protocol's exact shape, and applied only while the peer stays within its cap of stored
// flags and its daily growth.
import type { NetworkIdentity } from './identity.ts';
import type { NetworkMetrics } from './metrics.ts';
import type { UrlPolicy } from '../webhooks/ssrf.ts';
import { callPeer, PeerCallError, problemDetail, type CallLimits, type PeerAnswer } from './client.ts';
import { deletePeerFlags, deletePeerRows, storedTags, upsertPeerFlags } from './peer-data-repository.ts';
import { setPullPosition } from './peer-repository.ts';
import { DAILY_GROWTH_FLOOR, flagsPageBytes, retryAfterSeconds, SEALED_MAX_CHARS, SEALED_MIN_CHARS } from './limits.ts';
import { writeSyncState, type PeerSyncState } from './peer-sync-repository.ts';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';

const DAY_MS = 86_400_000;

export interface PullDeps {
  db: NetworkDb;
  identity: NetworkIdentity;
  urlPolicy: UrlPolicy;
  timeoutMs: number;
  metrics?: NetworkMetrics | undefined;
  log?: { warn(obj: object, msg: string): void } | undefined;
  maxFlagsPerPeer: number;
  pageSize: number;
  pagesPerSync: number;
}

/** Raised by a page or answer that breaks the protocol: the sync with that peer fails with it. */
const refuse = (what: string): never => {
  throw new PeerCallError(what);
};

/** The peer answered 429: it asks not to be called (`calls`) or asked to evaluate (`evaluate`) for `seconds`. */
export class PeerBusy extends PeerCallError {
  constructor(
    readonly scope: 'calls' | 'evaluate',
    readonly seconds: number,
    message: string,
  ) {
    super(message);
  }
}

/** A 429 becomes PeerBusy with the peer's Retry-After, bounded (limits.ts). */
export function busy(answer: PeerAnswer, scope: 'calls' | 'evaluate', what: string): PeerBusy {
  const seconds = retryAfterSeconds(answer.headers['retry-after']);
  const text =
    scope === 'evaluate'
      ? `budget: the peer refused more evaluations (HTTP 429, Retry-After: ${seconds} s); none is asked before ${new Date(Date.now() + seconds * 1000).toISOString()}`
      : `rate_limited: the peer refused ${what} (HTTP 429, Retry-After: ${seconds} s); it is not called before ${new Date(Date.now() + seconds * 1000).toISOString()}`;
  return new PeerBusy(scope, seconds, text);
}

export const expectOk = (answer: PeerAnswer, what: string): Record<string, unknown> => {
  if (answer.status === 429) throw busy(answer, what === 'evaluate' ? 'evaluate' : 'calls', what);
  if (answer.status !== 200 || typeof answer.body !== 'object' || answer.body === null || Array.isArray(answer.body))
    throw new PeerCallError(`${what}: ${problemDetail(answer)}`);
  return answer.body as Record<string, unknown>;
};

const TAG = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;
const SEALED = new RegExp(`^[A-Za-z0-9_-]{${SEALED_MIN_CHARS},${SEALED_MAX_CHARS}}$`);

export interface FlagsPage {
  epoch: string;
  since: string;
  next: string | undefined;
  /** one per tag: a repeated tag must not make one statement touch a row twice */
  held: Map<string, string>;
  withdrawn: Set<string>;
  entries: number;
}

/** A page as the protocol defines it, or a refusal naming what is wrong (never echoing the peer's bytes). */
export function checkFlagsPage(body: Record<string, unknown>, limit: number): FlagsPage {
  const { entries, epoch, since } = body;
  if (
    !Array.isArray(entries) ||
    typeof epoch !== 'string' ||
    epoch.length > 64 ||
    typeof since !== 'string' ||
    !/^\d{1,15}$/.test(since)
  )
    return refuse('flags: malformed answer');
  if (entries.length > limit) return refuse(`flags: ${entries.length} entries where at most ${limit} were asked`);
  const next = body.next_cursor;
  if (next !== null && next !== undefined && (typeof next !== 'string' || next.length === 0 || next.length > 128))
    return refuse('flags: malformed next_cursor');
  const held = new Map<string, string>();
  const withdrawn = new Set<string>();
  for (const entry of entries as unknown[]) {
    if (typeof entry !== 'object' || entry === null) return refuse('flags: an entry is not an object');
    const { tag, sealed, withdrawn: gone } = entry as Record<string, unknown>;
    if (typeof tag !== 'string' || !TAG.test(tag)) return refuse("flags: an entry's tag is not 32 bytes of base64url");
    if (gone === true && sealed === undefined) {
      held.delete(tag);
      withdrawn.add(tag);
    } else if (gone === undefined && typeof sealed === 'string' && SEALED.test(sealed)) {
      withdrawn.delete(tag);
      held.set(tag, sealed);
    } else
      return refuse(
        `flags: an entry is neither a sealed label (${SEALED_MIN_CHARS}–${SEALED_MAX_CHARS} base64url characters) nor a withdrawal`,
      );
  }
  return { epoch, since, next: typeof next === 'string' ? next : undefined, held, withdrawn, entries: entries.length };
}

/** Kept up to date page by page, so a pull that fails half-way still says what it applied. */
export interface PullResult {
  pulled: number;
  /** why the pull stopped before the peer's set was all here (the rest waits), if it did */
  stopped?: string;
}

/**
 * Pulls the changes since the last pull, page by page (each page its own signed call), applying
 * each page and storing where the pull stands — and the peer's counts — in one transaction, so a
 * pull cut short (a timeout, the pages per sync, a limit) resumes there at the next sync. A new
 * epoch at the peer means its whole set again: the old one goes first, a chunk at a time.
 */
export async function pullFlags(
  deps: PullDeps,
  peer: NetworkPeersTable,
  state: PeerSyncState,
  call: CallLimits,
  progress: PullResult,
): Promise<PullResult> {
  const { db, pageSize } = deps;
  let since = peer.flags_since;
  let epoch = peer.flags_epoch;
  let cursor = peer.flags_cursor || undefined;
  for (let page = 0; page < deps.pagesPerSync; page++) {
    const query = new URLSearchParams({
      limit: String(pageSize),
      ...(since ? { since } : {}),
      ...(cursor ? { cursor } : {}),
    });
    const answer = await callPeer(
      deps.identity,
      peer,
      'GET',
      `/network/v1/flags?${query}`,
      undefined,
      deps.urlPolicy,
      deps.timeoutMs,
      { ...call, maxBytes: flagsPageBytes(pageSize) },
    );
    const body = checkFlagsPage(expectOk(answer, 'flags'), pageSize);
    if ((since !== '' || cursor !== undefined) && body.epoch !== epoch) {
      const before = state.flagsHeld;
      await deletePeerRows(db, 'network_peer_flags', peer.id);
      // Pulling the same set again is not growth: the window restarts from what was held.
      Object.assign(state, {
        flagsHeld: 0,
        growthSince: Date.now(),
        growthBase: Math.max(before, state.growthBase),
        growthAdded: 0,
      });
      await db.transaction().execute(async (trx) => {
        await setPullPosition(trx, peer.id, { flags_since: '', flags_cursor: '', flags_epoch: '' });
        await writeSyncState(trx, peer.id, state);
      });
      since = '';
      cursor = undefined;
      epoch = '';
      continue;
    }
    epoch = body.epoch;
    const held = [...body.held].map(([tag, sealed]) => ({ peer_id: peer.id, tag, sealed }));
    const stored = await storedTags(db, peer.id, [...body.held.keys(), ...body.withdrawn]);
    const fresh = held.filter((h) => !stored.has(h.tag)).length;
    const gone = [...body.withdrawn].filter((t) => stored.has(t)).length;
    const now = Date.now();
    if (state.growthSince === 0 || now - state.growthSince >= DAY_MS)
      Object.assign(state, { growthSince: now, growthBase: state.flagsHeld, growthAdded: 0 });
    const allowed = Math.max(DAILY_GROWTH_FLOOR, state.growthBase);
    const refused =
      state.flagsHeld - gone + fresh > deps.maxFlagsPerPeer
        ? 'cap'
        : state.growthAdded + fresh > allowed
          ? 'growth'
          : undefined;
    if (refused) {
      // An alert for the operator: the peer's set grew abnormally. The page waits (the cursor stays).
      deps.metrics?.flagsRefused(refused);
      deps.log?.warn(
        {
          event: 'network_peer_growth',
          peer_id: peer.id,
          reason: refused,
          held: state.flagsHeld,
          added_today: state.growthAdded,
          page_new: fresh,
        },
        refused === 'cap'
          ? "a peer's flag set would pass VOUCH_NETWORK_MAX_FLAGS_PER_PEER; its pull is held"
          : 'a peer added more flags in 24 hours than its history allows; its pull is held',
      );
      const stopped =
        refused === 'cap'
          ? `flags: the peer's set would pass the ${deps.maxFlagsPerPeer} flags held per peer (VOUCH_NETWORK_MAX_FLAGS_PER_PEER); the pull is held`
          : `flags: the peer added more than ${allowed} flags in 24 hours; the rest is pulled from ${new Date(state.growthSince + DAY_MS).toISOString()}`;
      progress.stopped = stopped;
      return progress;
    }
    // The page ends the pull: the next one starts from its `since`; otherwise from its cursor.
    const where = body.next
      ? { flags_since: since, flags_cursor: body.next, flags_epoch: epoch }
      : { flags_since: body.since, flags_cursor: '', flags_epoch: epoch };
    const withdrawn = [...body.withdrawn];
    await db.transaction().execute(async (trx) => {
      await deletePeerFlags(trx, peer.id, withdrawn);
      await upsertPeerFlags(trx, held);
      await setPullPosition(trx, peer.id, where);
      await writeSyncState(trx, peer.id, {
        ...state,
        flagsHeld: state.flagsHeld - gone + fresh,
        growthAdded: state.growthAdded + fresh,
      });
    });
    state.flagsHeld += fresh - gone;
    state.growthAdded += fresh;
    progress.pulled += body.entries;
    if (!body.next) return progress;
    cursor = body.next;
  }
  return progress;
}
