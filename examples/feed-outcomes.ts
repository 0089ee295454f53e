// Feed outcomes back: trade history and a chargeback as events, then label the decision that let
// the bad trade through, so the next policy fit learns from it.
//   VOUCH_URL=… VOUCH_CLIENT_ID=… VOUCH_CLIENT_SECRET=… npx tsx examples/feed-outcomes.ts
import { randomUUID } from 'node:crypto';
import type { Decision, EventsResponse, LabelResponse, ScoreResponse, VouchClient } from '../sdk/src/index.ts';
import { clientFromEnv, hashId, runIfMain } from './env.ts';

export interface OutcomeRun {
  history: EventsResponse;
  score: ScoreResponse;
  chargeback: EventsResponse;
  label: LabelResponse;
  decision: Decision;
}

export async function main(options: { client?: VouchClient; entityId?: string } = {}): Promise<OutcomeRun> {
  const client = options.client ?? clientFromEnv();
  const entity = options.entityId ?? hashId(`buyer-${randomUUID()}`);
  const counterparty = hashId('seller-7');
  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

  // 1. History: two completed trades.
  const history = await client.sendEvents(
    [1, 2].map((n) => ({
      event_id: `${entity.slice(0, 16)}-done-${n}`,
      type: 'trade.completed' as const,
      entity_id: entity,
      occurred_at: minutesAgo(60 * n),
      amount: 100 * n,
      currency: 'USDT',
      counterparty_id: counterparty,
      trade_id: `${entity.slice(0, 16)}-t${n}`,
    })),
  );

  // 2. A new trade is scored (and let through).
  const tradeId = `${entity.slice(0, 16)}-t3`;
  const score = await client.score({
    entity_id: entity,
    amount: 300,
    currency: 'USDT',
    context: { trade_id: tradeId, payment_method: 'card' },
  });

  // 3. The payment comes back: a chargeback on that trade. Sent with the trade_id, it labels the
  //    decision `fraud` by itself (source "event")...
  const chargeback = await client.sendEvents([
    {
      event_id: `${tradeId}-chargeback`,
      type: 'chargeback',
      entity_id: entity,
      occurred_at: new Date().toISOString(),
      amount: 300,
      currency: 'USDT',
      trade_id: tradeId,
    },
  ]);

  // 4. ...and an operator's label (source "api") records the verdict with a note; it wins over event labels.
  const label = await client.labelDecision(score.decision_id, 'fraud', 'chargeback confirmed by the card issuer');
  const decision = await client.getDecision(score.decision_id);
  return { history, score, chargeback, label, decision };
}

runIfMain(import.meta.url, () => main());
