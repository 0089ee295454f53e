// Score the counterparty before releasing escrow, and cap the release at `safe_amount`: instead of
// refusing a risky trade outright, release only what the entity is trusted with. The outcome (the
// desk's rules on top of the score, docs/rules.md) comes first: `hold` and `decline` release
// nothing now (a hold waits for the desk's review), `approve` and `review` release up to
// safe_amount (a review is looked at after the fact, as Radar's are).
//   VOUCH_URL=… VOUCH_CLIENT_ID=… VOUCH_CLIENT_SECRET=… npx tsx examples/score-before-release.ts
import type { ScoreResponse, VouchClient } from '../sdk/src/index.ts';
import { clientFromEnv, hashId, runIfMain } from './env.ts';

export interface ReleasePlan {
  score: ScoreResponse;
  requested: number;
  /** what to release now: the requested amount, capped at safe_amount */
  release: number;
  /** what to hold back for review */
  held: number;
}

/** The release for a trade: min(amount, safe_amount); all of it when no amount would score high. */
export function capRelease(amount: number, safeAmount: number | null | undefined): number {
  if (safeAmount === null || safeAmount === undefined) return amount;
  return Math.min(amount, safeAmount);
}

/** Assets Vouch's built-in policy treats as crypto: quoted, like safe_amount, to 8 decimals. */
const CRYPTO = new Set(['BTC', 'ETH', 'USDT', 'USDC', 'DAI', 'LTC', 'TRX', 'BNB', 'SOL', 'XRP', 'TON']);

/** The decimals of a currency's smallest unit, as safe_amount is computed: crypto 8, fiat its ISO 4217 digits. */
export function minorUnitDigits(currency: string): number {
  if (CRYPTO.has(currency)) return 8;
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/**
 * The release and the hold in whole minor units: `amount − safe_amount` in floating point prints
 * 1635.7293968499998; counted in minor units the two add up to the amount exactly. The release is
 * rounded down, so it never exceeds safe_amount.
 */
export function splitRelease(
  amount: number,
  safeAmount: number | null | undefined,
  currency: string,
): { release: number; held: number } {
  const scale = 10 ** minorUnitDigits(currency);
  const total = Math.round(amount * scale);
  // Rounded, then one unit less if that went above the cap: a value already on the grid
  // (864.27060315) stays itself whichever way its product with the scale happens to round.
  const cap = capRelease(amount, safeAmount);
  const nearest = Math.round(cap * scale);
  const release = Math.min(total, nearest / scale > cap ? nearest - 1 : nearest);
  return { release: release / scale, held: (total - release) / scale };
}

export async function main(
  options: { client?: VouchClient; entityId?: string; amount?: number; currency?: string } = {},
): Promise<ReleasePlan> {
  const client = options.client ?? clientFromEnv();
  const amount = options.amount ?? 2500;
  const currency = options.currency ?? 'USDT';
  const score = await client.score({
    entity_id: options.entityId ?? hashId('seller-42@example.com'),
    amount,
    currency,
    context: { side: 'sell', payment_method: 'bank_transfer', trade_id: `trade-${Date.now()}` },
  });
  if (score.outcome === 'hold' || score.outcome === 'decline')
    return { score, requested: amount, release: 0, held: amount };
  return { score, requested: amount, ...splitRelease(amount, score.safe_amount, currency) };
}

runIfMain(import.meta.url, () => main());
