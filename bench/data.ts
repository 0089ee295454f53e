// A realistic synthetic marketplace history: mostly completed trades, with cancellations,
// disputes, chargebacks, fraud reports, blocklistings and shared identifiers at realistic rates.
import { createHash } from 'node:crypto';
import type { TrustEvent } from '../src/trust/schemas.ts';

/** Small, fast, seeded PRNG (mulberry32), so every run loads the same history. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const entityId = (i: number) => createHash('sha256').update(`entity-${i}`).digest('hex');

const CURRENCIES = ['USD', 'EUR', 'NGN', 'USDT', 'BTC'];
const AMOUNT = { USD: 150, EUR: 140, NGN: 120_000, USDT: 150, BTC: 0.004 } as Record<string, number>;

/** Yields batches of events in time order over the last `days` days. */
export function* history(
  entities: number,
  events: number,
  batchSize = 1000,
  seed = 42,
  days = 180,
): Generator<TrustEvent[]> {
  const random = rng(seed);
  const now = Date.now();
  const span = days * 86_400_000;
  let batch: TrustEvent[] = [];
  for (let i = 0; i < events; i++) {
    const e = Math.floor(random() * entities);
    const id = entityId(e);
    const t = now - span + Math.floor((i / events) * span);
    const occurred_at = new Date(t).toISOString();
    const r = random();
    const event_id = `bench-${seed}-${i}`;
    let ev: TrustEvent;
    if (r < 0.85) {
      const currency = CURRENCIES[e % CURRENCIES.length]!;
      const amount = Math.round(AMOUNT[currency]! * Math.exp((random() - 0.5) * 1.5) * 1e6) / 1e6;
      ev = {
        event_id,
        type: 'trade.completed',
        entity_id: id,
        occurred_at,
        amount,
        currency,
        counterparty_id: entityId(Math.floor(random() * entities)),
      };
    } else if (r < 0.93) ev = { event_id, type: 'trade.cancelled', entity_id: id, occurred_at };
    else if (r < 0.96) ev = { event_id, type: 'dispute.opened', entity_id: id, occurred_at };
    else if (r < 0.985)
      ev = {
        event_id,
        type: 'dispute.resolved',
        entity_id: id,
        occurred_at,
        resolution: random() < 0.6 ? 'in_favor' : 'against',
      };
    else if (r < 0.99) ev = { event_id, type: 'chargeback', entity_id: id, occurred_at };
    else if (r < 0.993) ev = { event_id, type: 'fraud.reported', entity_id: id, occurred_at };
    else if (r < 0.994) ev = { event_id, type: 'entity.blocklisted', entity_id: id, occurred_at };
    else {
      // Devices and bank accounts shared by small clusters of entities.
      const cluster = Math.floor(random() * (entities / 4));
      ev = {
        event_id,
        type: 'identifier.linked',
        entity_id: id,
        occurred_at,
        linked_identifiers: [
          {
            type: random() < 0.5 ? 'device' : 'bank_account',
            hash: createHash('sha256').update(`id-${cluster}`).digest('hex'),
          },
        ],
      };
    }
    batch.push(ev);
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** A score request for one of `entities` entities, at a realistic amount (every bench scores the same shape). */
export function scoreBody(random: () => number, entities: number) {
  return {
    entity_id: entityId(Math.floor(random() * entities)),
    amount: Math.round(50 + random() * 500),
    currency: 'USD',
    context: {
      counterparty_id: entityId(Math.floor(random() * entities)),
      payment_method: 'bank_transfer',
      side: 'sell',
    },
  };
}
