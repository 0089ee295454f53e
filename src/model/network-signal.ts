// The scoring signal `network_flags` (docs/network.md, "The signal"): what the network said about an
// entity, and the rule that turns it into one value: each peer's contribution is its weight times
// an age decay, capped at half the signal; the value is their sum, capped at 1 — one peer moves it
// by half at most, and only two independent peers together reach the full value. Reading the
// matches from the store is src/network/signal.ts.

export const FLAG_KINDS = ['fraud_report', 'chargeback', 'blocklisted', 'dispute_lost'] as const;
export type FlagKind = (typeof FLAG_KINDS)[number];

export interface PeerFlag {
  peer_id: string;
  peer_name: string;
  weight: number;
  /** per kind, the largest count any of the entity's identifiers carries at this peer */
  kinds: Partial<Record<FlagKind, number>>;
  /** YYYY-MM of the latest flag at this peer */
  latest_month: string;
}

/** Half-life of a peer's flag, in days: a flag from three months ago counts half. */
export const HALF_LIFE_DAYS = 90;
/**
 * The most one peer can contribute, whatever its weight or however many of the entity's identifiers
 * it flags: a peer's marginal effect on any score is at most this share of the policy's weight.
 */
export const PEER_CAP = 0.5;
/** The signal's full value, reached only by independent peers agreeing (1 / PEER_CAP = two of them). */
export const NETWORK_CAP = 1;

const KIND_WORDS: Record<FlagKind, string> = {
  fraud_report: 'fraud report',
  chargeback: 'chargeback',
  blocklisted: 'blocklisting',
  dispute_lost: 'lost dispute',
};

/** Days from the end of the flag's month to `now` (a month's flags are at most that old). */
function ageDays(month: string, now: number): number {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return Math.max(0, (now - Date.UTC(year, mon, 1)) / 86_400_000);
}

export interface NetworkSignal {
  /**
   * the feature value: min(NETWORK_CAP, Σ c_p), with c_p = PEER_CAP · min(1, weight_p · 2^(−age_p / HALF_LIFE_DAYS))
   */
  value: number;
  /** the contributing peers (weight > 0), for the decision record: their shares of `value` (they sum to it) */
  peers: Array<{ id: string; name: string; contribution: number }>;
  description: string;
}

export function networkFlagsSignal(flags: PeerFlag[], now = Date.now()): NetworkSignal {
  const peers = flags
    .map((f) => ({
      id: f.peer_id,
      name: f.peer_name,
      contribution:
        PEER_CAP * Math.min(1, Math.max(0, f.weight) * 2 ** (-ageDays(f.latest_month, now) / HALF_LIFE_DAYS)),
    }))
    .filter((p) => p.contribution > 0);
  if (peers.length === 0)
    return { value: 0, peers: [], description: 'no other marketplace flagged an identifier it uses' };
  const total = peers.reduce((sum, p) => sum + p.contribution, 0);
  const value = Math.min(NETWORK_CAP, total);
  // Beyond the cap each peer's share shrinks alike, so the decision's contributions add up to the value.
  const share = value / total;
  const kinds = [
    ...new Set(
      flags.filter((f) => peers.some((p) => p.id === f.peer_id)).flatMap((f) => Object.keys(f.kinds) as FlagKind[]),
    ),
  ].sort();
  const newest = flags.reduce((m, f) => (f.latest_month > m ? f.latest_month : m), '0000-01');
  const within = ageDays(newest, now) <= 90 ? ' in the last 90 days' : ` (latest ${newest})`;
  const who = peers.length === 1 ? '1 other marketplace' : `${peers.length} other marketplaces`;
  return {
    value: Math.round(value * 1000) / 1000,
    peers: peers.map((p) => ({ ...p, contribution: Math.round(p.contribution * share * 1000) / 1000 })),
    description: `an identifier it uses was flagged by ${who}${within} (${kinds.map((k) => KIND_WORDS[k]).join(', ')})`,
  };
}
