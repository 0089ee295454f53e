// Builders for trust events and hashed identifiers used across the trust and dispute tests.
import { createHash } from 'node:crypto';
import type { TestContext } from './app.ts';
import { bearer } from './app.ts';

export const hash = (s: string) => createHash('sha256').update(s).digest('hex');

let seq = 0;
export function event(
  type: string,
  entity: string,
  extra: Record<string, unknown> = {},
  ageMs = 3_600_000,
): Record<string, unknown> {
  seq += 1;
  return {
    event_id: `ev-${process.pid}-${Date.now()}-${seq}`,
    type,
    entity_id: entity,
    occurred_at: new Date(Date.now() - ageMs).toISOString(),
    ...extra,
  };
}

/** `count` completed trades spread over `days` days, ending a day ago. */
export function tradeHistory(
  entity: string,
  count: number,
  days: number,
  amount = 100,
  currency = 'USD',
): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) =>
    event(
      'trade.completed',
      entity,
      { amount: amount * (0.8 + ((i * 7) % 5) / 10), currency, counterparty_id: hash(`cp-${i % 17}`) },
      86_400_000 + Math.floor((i / count) * days * 86_400_000),
    ),
  );
}

export async function postEvents(ctx: TestContext, token: string, events: Record<string, unknown>[]) {
  const res = await ctx.inject({
    method: 'POST',
    url: '/api/v1/trust/events',
    headers: bearer(token),
    payload: { events },
  });
  if (res.statusCode !== 200) throw new Error(`events rejected: ${res.statusCode} ${res.body}`);
  return res.json() as { accepted: number; duplicates: number };
}

export async function score(ctx: TestContext, token: string, body: Record<string, unknown>) {
  return ctx.inject({ method: 'POST', url: '/api/v1/trust/score', headers: bearer(token), payload: body });
}
