// Score the counterparty before releasing escrow, and cap the release at `safe_amount`: instead of
// refusing a risky trade outright, release only what the entity is trusted with.
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

export async function main(
  options: { client?: VouchClient; entityId?: string; amount?: number; currency?: string } = {},
): Promise<ReleasePlan> {
  const client = options.client ?? clientFromEnv();
  const amount = options.amount ?? 2500;
  const score = await client.score({
    entity_id: options.entityId ?? hashId('seller-42@example.com'),
    amount,
    currency: options.currency ?? 'USDT',
    context: { side: 'sell', payment_method: 'bank_transfer', trade_id: `trade-${Date.now()}` },
  });
  const release = capRelease(amount, score.safe_amount);
  return { score, requested: amount, release, held: amount - release };
}

runIfMain(import.meta.url, () => main());
