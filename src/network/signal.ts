// What the network says about an entity, for the scoring signal `network_flags` (docs/network.md,
// "The signal"): the active peers whose flag sets hold one of its identifiers, and the rule that
// turns them into one value: each peer's contribution is its weight times an age decay, capped at
// 1; a lone peer counts half; agreement of several independent peers counts in full.
import type { FlagKind, Label } from './oprf.ts';
import { parseLabel } from './oprf.ts';
import type { NetworkDb } from './tables.ts';

export interface PeerFlag {
  peer_id: string;
  peer_name: string;
  weight: number;
  /** per kind, the largest count any of the entity's identifiers carries at this peer */
  kinds: Partial<Record<FlagKind, number>>;
  /** YYYY-MM of the latest flag at this peer */
  latest_month: string;
}

export interface IdentifierRef {
  type: string;
  hash: string;
}

/**
 * The active peers whose published flags match any of `identifiers` (as of the last sync). Only
 * the live environment takes part in the network: test data never matches. A suspended or
 * removed peer is left out at once.
 */
export async function networkFlagsFor(db: NetworkDb, environment: string, identifiers: IdentifierRef[]): Promise<PeerFlag[]> {
  if (environment !== 'live' || identifiers.length === 0) return [];
  const byPeer = new Map<string, PeerFlag>();
  for (let i = 0; i < identifiers.length; i += 200) {
    const chunk = identifiers.slice(i, i + 200);
    const rows = await db.selectFrom('network_matches as m')
      .innerJoin('network_peers as p', 'p.id', 'm.peer_id')
      .select(['m.peer_id', 'm.label', 'p.name', 'p.weight'])
      .where('p.status', '=', 'active')
      .where((eb) => eb.or(chunk.map((id) => eb.and([eb('m.id_type', '=', id.type), eb('m.hash', '=', id.hash)]))))
      .execute();
    for (const row of rows) {
      const label: Label | undefined = parseLabel(JSON.parse(row.label) as unknown);
      if (!label) continue;
      const entry = byPeer.get(row.peer_id) ?? { peer_id: row.peer_id, peer_name: row.name, weight: Number(row.weight), kinds: {}, latest_month: label.latest_month };
      for (const [kind, count] of Object.entries(label.kinds) as Array<[FlagKind, number]>) entry.kinds[kind] = Math.max(entry.kinds[kind] ?? 0, count);
      if (label.latest_month > entry.latest_month) entry.latest_month = label.latest_month;
      byPeer.set(row.peer_id, entry);
    }
  }
  return [...byPeer.values()].sort((a, b) => a.peer_id.localeCompare(b.peer_id));
}

/** Half-life of a peer's flag, in days: a flag from three months ago counts half. */
export const HALF_LIFE_DAYS = 90;
/** The most one peer can contribute, whatever its weight. */
export const PEER_CAP = 1;
/** A lone peer's share of its contribution: agreement between peers counts more. */
const SINGLE_PEER_FACTOR = 0.5;

const KIND_WORDS: Record<FlagKind, string> = { fraud_report: 'fraud report', chargeback: 'chargeback', blocklisted: 'blocklisting', dispute_lost: 'lost dispute' };

/** Days from the end of the flag's month to `now` (a month's flags are at most that old). */
function ageDays(month: string, now: number): number {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return Math.max(0, (now - Date.UTC(year, mon, 1)) / 86_400_000);
}

export interface NetworkSignal {
  /** the feature value: Σ c_p − (1 − SINGLE_PEER_FACTOR)·max c_p, with c_p = min(PEER_CAP, weight_p · 2^(−age_p / HALF_LIFE_DAYS)) */
  value: number;
  /** the contributing peers (weight > 0), for the decision record */
  peers: Array<{ id: string; name: string; contribution: number }>;
  description: string;
}

export function networkFlagsSignal(flags: PeerFlag[], now = Date.now()): NetworkSignal {
  const peers = flags
    .map((f) => ({ id: f.peer_id, name: f.peer_name, contribution: Math.min(PEER_CAP, Math.max(0, f.weight) * 2 ** (-ageDays(f.latest_month, now) / HALF_LIFE_DAYS)) }))
    .filter((p) => p.contribution > 0);
  if (peers.length === 0) return { value: 0, peers: [], description: 'no other marketplace flagged an identifier it uses' };
  const total = peers.reduce((sum, p) => sum + p.contribution, 0);
  const largest = Math.max(...peers.map((p) => p.contribution));
  const value = total - (1 - SINGLE_PEER_FACTOR) * largest;
  const kinds = [...new Set(flags.filter((f) => peers.some((p) => p.id === f.peer_id)).flatMap((f) => Object.keys(f.kinds) as FlagKind[]))].sort();
  const newest = flags.reduce((m, f) => (f.latest_month > m ? f.latest_month : m), '0000-01');
  const within = ageDays(newest, now) <= 90 ? ' in the last 90 days' : ` (latest ${newest})`;
  const who = peers.length === 1 ? '1 other marketplace' : `${peers.length} other marketplaces`;
  return {
    value: Math.round(value * 1000) / 1000,
    peers,
    description: `an identifier it uses was flagged by ${who}${within} (${kinds.map((k) => KIND_WORDS[k]).join(', ')})`,
  };
}
