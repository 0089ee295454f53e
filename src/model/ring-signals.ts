// The ring signals (docs/signals.md, "Rings"), from a walked ring: pure. Their shape constants are
// fixed here, not in the policy document, like the P2P features' (src/model/features.ts); the
// built-in policy version names them.
import type { Ring, RingFlag } from './ring.ts';

const DAY_MS = 86_400_000;
/** A flagged entity one hop away counts 1, two hops away a half. */
const DISTANCE_WEIGHT = [0, 1, 0.5] as const;
/**
 * How much one flagged entity counts, by its gravest flag: a single lost dispute is weak evidence
 * (honest traders lose some), a fraud report or blocklisting is an operator's finding.
 */
const SEVERITY: Record<RingFlag, number> = { fraud_reported: 1, blocklisted: 1, chargeback: 0.75, dispute_lost: 0.25 };

/** Weighted flagged entities beyond which ring_flagged_entities stops growing (log2 scale: at most 4). */
const FLAGGED_CAP = 15;
/**
 * Entities within two hops that ring_size leaves out: a household of three (two others) sharing a
 * device or a bank account is ordinary life, and the one-hop count (shared_identifier_entities)
 * already weighs it. Only the accounts beyond it are ring structure (docs/signals.md, "Rings").
 */
export const HOUSEHOLD = 2;
/** Entities beyond the household past which ring_size stops growing (log2 scale: at most 6). */
const SIZE_CAP = 63;

/** What the ring signals and their descriptions need: counts and one path, never an identifier. */
export interface RingFacts {
  /** flagged entities within two hops, each weighted by distance and recency */
  flaggedWeight: number;
  /** flagged entities within two hops */
  flaggedCount: number;
  /** entities within two hops, the root excluded */
  size: number;
  /** the flagged entity contributing most, for the description */
  strongest: { distance: number; daysAgo: number; flags: RingFlag[]; via: string[] } | null;
  /** the capped read stopped before the whole neighbourhood */
  truncated: boolean;
}

export const NO_RING: RingFacts = { flaggedWeight: 0, flaggedCount: 0, size: 0, strongest: null, truncated: false };

/**
 * Weighs every flagged entity within two hops by its gravest flag (SEVERITY), distance (1, ½) and
 * recency (halving every `halfLifeDays` since it was last flagged; a time in the future or unknown
 * counts as now).
 */
export function ringFacts(ring: Ring, now: number, halfLifeDays: number): RingFacts {
  let flaggedWeight = 0;
  let flaggedCount = 0;
  let size = 0;
  let strongest: RingFacts['strongest'] = null;
  let best = 0;
  for (const node of ring.nodes) {
    if (node.distance < 1 || node.distance > 2) continue;
    size++;
    if (node.flags.length === 0) continue;
    const ageDays = node.flaggedAt > 0 && node.flaggedAt < now ? (now - node.flaggedAt) / DAY_MS : 0;
    const severity = Math.max(...node.flags.map((f) => SEVERITY[f]));
    const w = severity * DISTANCE_WEIGHT[node.distance as 1 | 2] * Math.pow(2, -ageDays / halfLifeDays);
    flaggedWeight += w;
    flaggedCount++;
    if (w > best) {
      best = w;
      strongest = { distance: node.distance, daysAgo: Math.floor(ageDays), flags: node.flags, via: node.via };
    }
  }
  return { flaggedWeight, flaggedCount, size, strongest, truncated: ring.truncated };
}

const finite = (x: number): number => (Number.isFinite(x) && x > 0 ? x : 0);

/** ring_flagged_entities: log2(1 + weighted flagged entities), capped; non-decreasing in each. */
export const ringFlaggedValue = (f: RingFacts): number => Math.log2(1 + Math.min(finite(f.flaggedWeight), FLAGGED_CAP));

/** ring_size: log2(1 + entities within two hops beyond a household), capped; non-decreasing in the size. */
export const ringSizeValue = (f: RingFacts): number => ringSizeOf(finite(f.size));

const ringSizeOf = (size: number): number => Math.log2(1 + Math.min(Math.max(0, size - HOUSEHOLD), SIZE_CAP));

/**
 * A ring_size stored before the household allowance (feature_set ≤ 2: log2(1 + min(n, 63))) in the
 * current definition. The size is exact below the old cap; at the cap (63 or more) it is taken as 63.
 */
export function ringSizeFromFirstDefinition(stored: number): number {
  if (!(Number.isFinite(stored) && stored > 0)) return 0;
  return ringSizeOf(Math.round(Math.pow(2, Math.min(stored, 6)) - 1));
}

const FLAG_WORDS: Record<RingFlag, string> = {
  fraud_reported: 'reported for fraud',
  blocklisted: 'blocklisted',
  chargeback: 'with a chargeback',
  dispute_lost: 'that lost a dispute',
};

const TYPE_WORDS: Record<string, string> = {
  phone: 'phone',
  bank_account: 'bank account',
  email: 'e-mail address',
  device: 'device',
  other: 'identifier',
};

const ago = (days: number): string => (days < 1 ? 'today' : days === 1 ? '1 day ago' : `${days} days ago`);

/** "2 hops from an account reported for fraud 9 days ago, through a shared device and a shared bank account" */
export function describeRingFlagged(f: RingFacts): string {
  const s = f.strongest;
  if (!s) return 'no flagged account within two hops';
  const through = s.via.map((t) => `a shared ${TYPE_WORDS[t] ?? 'identifier'}`).join(' and ');
  const head = `${s.distance === 1 ? '1 hop' : `${s.distance} hops`} from an account ${FLAG_WORDS[s.flags[0]!]} ${ago(s.daysAgo)}, through ${through}`;
  const others = f.flaggedCount - 1;
  return others > 0
    ? `${head} (${others} more flagged ${others === 1 ? 'account' : 'accounts'} within two hops)`
    : head;
}

/** "14 accounts within two hops through shared identifiers, 12 more than a household" */
export function describeRingSize(f: RingFacts): string {
  const more = f.truncated ? ' or more' : '';
  const head = `${f.size}${more} ${f.size === 1 ? 'account' : 'accounts'} within two hops through shared identifiers`;
  const beyond = f.size - HOUSEHOLD;
  return beyond > 0 ? `${head}, ${beyond}${more} more than a household` : head;
}
