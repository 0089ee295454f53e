// What the network says about an entity, for the scoring signal `network_flags` (docs/network.md,
// "The signal"): the active peers whose flag sets hold one of its identifiers, and the rule that
// turns them into one value: each peer's contribution is its weight times an age decay, capped at
// half the signal; the value is their sum, capped at 1 — one peer moves it by half at most, and
// only two independent peers together reach the full value.
import type { Label } from './oprf.ts';
import { parseLabel } from './oprf.ts';
import type { FlagKind, PeerFlag } from '../model/network-signal.ts';
import { ENTITY_TYPE, type NetworkDb, storeTables } from './tables.ts';
import { activeMatchesOf, pendingIdentifiersOf } from './match-repository.ts';
import { liveIdentifiersOf } from '../entities/identifier-repository.ts';

export interface IdentifierRef {
  type: string;
  hash: string;
}

/** One stored match as the reads below return it. */
interface MatchRow {
  peer_id: string;
  name: string;
  weight: number | string;
  label: string;
}

function addMatch(byPeer: Map<string, PeerFlag>, row: MatchRow): void {
  let label: Label | undefined;
  try {
    label = parseLabel(JSON.parse(row.label) as unknown);
  } catch {
    label = undefined;
  }
  if (!label) return;
  const entry = byPeer.get(row.peer_id) ?? {
    peer_id: row.peer_id,
    peer_name: row.name,
    weight: Number(row.weight),
    kinds: {},
    latest_month: label.latest_month,
  };
  for (const [kind, count] of Object.entries(label.kinds) as Array<[FlagKind, number]>)
    entry.kinds[kind] = Math.max(entry.kinds[kind] ?? 0, count);
  if (label.latest_month > entry.latest_month) entry.latest_month = label.latest_month;
  byPeer.set(row.peer_id, entry);
}

const byPeerId = (byPeer: Map<string, PeerFlag>): PeerFlag[] =>
  [...byPeer.values()].sort((a, b) => a.peer_id.localeCompare(b.peer_id));

/** The JSON text networkMatchesSql returned, as the peers' flags; malformed entries are skipped. */
export function parseNetworkMatches(text: string | null | undefined): PeerFlag[] {
  if (!text || text === '[]') return [];
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(rows)) return [];
  const byPeer = new Map<string, PeerFlag>();
  for (const row of rows as Array<Partial<MatchRow>>) {
    if (typeof row?.peer_id === 'string' && typeof row.name === 'string' && typeof row.label === 'string')
      addMatch(byPeer, row as MatchRow);
  }
  return byPeerId(byPeer);
}

/**
 * The active peers whose published flags match any of `identifiers` (as of the last sync). Only
 * the live environment takes part in the network: test data never matches. A suspended or
 * removed peer is left out at once.
 */
export async function networkFlagsFor(
  db: NetworkDb,
  environment: string,
  identifiers: IdentifierRef[],
): Promise<PeerFlag[]> {
  if (environment !== 'live' || identifiers.length === 0) return [];
  const byPeer = new Map<string, PeerFlag>();
  for (let i = 0; i < identifiers.length; i += 200) {
    const chunk = identifiers.slice(i, i + 200);
    const rows = await activeMatchesOf(db, chunk);
    rows.forEach((row) => addMatch(byPeer, row));
  }
  return byPeerId(byPeer);
}

/**
 * The identifiers the network knows a live entity by (docs/network.md, "The signal"): `linked`, those
 * events linked to it and its own id under the `entity` type (matched only with the common entity
 * hashing on) — what every score of it counts; and `named`, those only score requests named for it
 * in their context (network_pending) — which a score counts only when its own request names them,
 * so that no client's request changes what another client's scores of the entity see.
 */
export async function entityNetworkIdentifiers(
  db: NetworkDb,
  entityId: string,
): Promise<{ linked: IdentifierRef[]; named: IdentifierRef[] }> {
  const stored = await liveIdentifiersOf(storeTables(db), entityId);
  const linked = [...stored, { type: ENTITY_TYPE, hash: entityId }];
  const known = new Set(linked.map((l) => `${l.type}\u0000${l.hash}`));
  const queued = await pendingIdentifiersOf(db, entityId);
  return { linked, named: queued.filter((q) => !known.has(`${q.type}\u0000${q.hash}`)) };
}
