// Analyze a P2P dispute: the buyer says they paid, the seller says nothing arrived. The answer is a
// recommendation with its confidence, the risk flags behind it and the evidence still missing.
//   VOUCH_URL=… VOUCH_CLIENT_ID=… VOUCH_CLIENT_SECRET=… npx tsx examples/analyze-dispute.ts
import { randomUUID } from 'node:crypto';
import type { DisputeResponse, VouchClient } from '../sdk/src/index.ts';
import { clientFromEnv, hashId, runIfMain } from './env.ts';

export async function main(options: { client?: VouchClient } = {}): Promise<DisputeResponse> {
  const client = options.client ?? clientFromEnv();
  const id = randomUUID();
  const result = await client.analyzeDispute({
    dispute_id: `dispute-${id}`,
    trade: {
      trade_id: `trade-${id}`,
      amount: 750,
      currency: 'USDT',
      payment_method: 'bank_transfer',
      created_at: new Date(Date.now() - 3_600_000).toISOString(),
    },
    buyer_id: hashId('buyer-alice'),
    seller_id: hashId('seller-bob'),
    opened_by: 'buyer',
    reason: 'asset_not_released',
    evidence: {
      payment_proof_submitted: true,
      bank_reference_matches: true,
      payer_name_matches: false,
      seller_response_minutes: 45,
      messages_count: 6,
    },
  });
  // What an operator acts on:
  //   result.recommendation  release_to_buyer | return_to_seller | manual_review
  //   result.risk_flags      why (e.g. payer_name_mismatch: third-party payment)
  //   result.missing_evidence what to ask for next
  return result;
}

runIfMain(import.meta.url, () => main());
