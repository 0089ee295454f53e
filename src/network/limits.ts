// What a peer may make the syncing side read, store and wait for (docs/network.md, "A peer's
// limits"): every figure a hostile peer could otherwise choose is fixed here.
import { FLAG_KINDS } from '../model/network-signal.ts';

/** Label JSON as sealLabel writes it, at its longest (every kind, counts at parseLabel's bound) and shortest. */
const LABEL_JSON_MAX = JSON.stringify({
  kinds: Object.fromEntries(FLAG_KINDS.map((k) => [k, 1e9])),
  latest_month: '9999-12',
}).length;
const SHORTEST_KIND = [...FLAG_KINDS].sort((a, b) => a.length - b.length)[0]!;
const LABEL_JSON_MIN = JSON.stringify({ kinds: { [SHORTEST_KIND]: 1 }, latest_month: '2000-01' }).length;
/** base64url (unpadded) of iv (12) ‖ ciphertext ‖ GCM tag (16). */
const sealedChars = (jsonBytes: number) => Math.ceil(((12 + jsonBytes + 16) * 4) / 3);
export const SEALED_MIN_CHARS = sealedChars(LABEL_JSON_MIN);
export const SEALED_MAX_CHARS = sealedChars(LABEL_JSON_MAX);

/** One entry of a flags page at its longest, with room for the whitespace another encoder may add. */
const ENTRY_BYTES = `{"tag":"${'x'.repeat(43)}","sealed":"${'x'.repeat(SEALED_MAX_CHARS)}"},`.length + 64;
/**
 * The largest flags page a peer may send when `limit` entries were asked (the rest of the answer is a few short
 * fields).
 */
export const flagsPageBytes = (limit: number): number => 4096 + limit * ENTRY_BYTES;
/** An evaluate answer: one 32-byte element (44 characters quoted) per element asked, and the proof. */
export const evaluateAnswerBytes = (elements: number): number => 4096 + elements * 64;
/** A descriptor, or a problem answer of any call. */
export const SMALL_ANSWER_BYTES = 16 * 1024;
/**
 * Arrays and objects nested deeper than this are refused before they are parsed (the protocol's answers nest 3 deep).
 */
export const MAX_JSON_DEPTH = 8;

/** The whole of one call (connection, request, every byte of the answer), and of one sync with one peer. */
export const CALL_DEADLINE_MS = 10_000;
export const PEER_SYNC_DEADLINE_MS = 120_000;
/** Peers synced at once: one slow peer holds one slot, never the others. */
export const SYNC_CONCURRENCY = 4;

/** Default of VOUCH_NETWORK_MAX_FLAGS_PER_PEER. */
const MAX_FLAGS_PER_PEER = 1_000_000;
/** New flags a peer may add in 24 hours: max(this, the size of its set when the window began). */
export const DAILY_GROWTH_FLOOR = 10_000;
/** A new OPRF key of a peer is adopted only once the descriptor has shown it this long. */
export const OPRF_KEY_HOLD_MS = 86_400_000;
/** Rows deleted per short transaction when a peer's pulled data goes (removal, a new epoch, a new key). */
export const DELETE_CHUNK = 2000;
/**
 * Retry-After as a peer may set it: missing or unreadable is a minute, and no peer stops us asking for more than a day.
 */
const RETRY_AFTER_DEFAULT_S = 60;
export const RETRY_AFTER_MAX_S = 86_400;

export interface SyncLimits {
  maxFlagsPerPeer: number;
}

/** The limits of the configuration (config.network). */
export const syncLimits = (network: { maxFlagsPerPeer?: number | undefined }): SyncLimits => ({
  maxFlagsPerPeer: network.maxFlagsPerPeer ?? MAX_FLAGS_PER_PEER,
});

/** A peer's Retry-After (seconds, or an HTTP date), bounded. */
export function retryAfterSeconds(value: unknown, now = Date.now()): number {
  let seconds = RETRY_AFTER_DEFAULT_S;
  if (typeof value === 'string' && /^\d{1,10}$/.test(value.trim())) seconds = Number(value.trim());
  else if (typeof value === 'string' && Number.isFinite(Date.parse(value)))
    seconds = Math.ceil((Date.parse(value) - now) / 1000);
  return Math.min(RETRY_AFTER_MAX_S, Math.max(1, seconds));
}
