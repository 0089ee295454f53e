// Each peer's evaluation budget (docs/network.md, "What the budget bounds"): at most
// `budget_per_day` evaluations in any 24 hours, counted in the store so every instance of the
// deployment shares it. Counts are kept per ten minutes of UTC time (network_budget.day holds
// the slot, YYYY-MM-DDTHH:M); a request is granted when the current slot's count and the 24 hours
// of slots before it leave room, so what was spent is given back 24 h to 24 h 10 min later —
// never at a fixed reset (a UTC-midnight reset let a peer spend two days' budget in minutes).
// This file owns network_budget (issue 41 item 1, one owner per table); each function takes the
// executor: a Kysely instance or a transaction.
import { sql } from 'kysely';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';

const SLOT_MS = 600_000;
/** The current slot and the 24 hours of slots before it: any 24 hours lie within such a span. */
const WINDOW_SLOTS = 24 * 6 + 1;

const slotKey = (ms: number) => new Date(ms).toISOString().slice(0, 15);
/**
 * The oldest slot still counted at `now` (a row of the former per-day format for today sorts inside the window too).
 */
const windowStart = (now: number) => slotKey(now - (WINDOW_SLOTS - 1) * SLOT_MS);

export interface BudgetGrant {
  granted: boolean;
  /** evaluations counted in the window, this request's included when granted */
  used: number;
  /** when not granted: seconds until enough of the window has expired for `count` to fit */
  retryAfterSeconds: number;
}

/** Takes `count` evaluations from the peer's rolling 24-hour budget; nothing is taken when they do not fit. */
export async function consumeBudget(
  db: NetworkDb,
  peer: Pick<NetworkPeersTable, 'id' | 'budget_per_day'>,
  count: number,
  now = Date.now(),
): Promise<BudgetGrant> {
  const budget = Number(peer.budget_per_day);
  const slot = slotKey(now);
  const from = windowStart(now);
  if (count <= budget) {
    await db
      .insertInto('network_budget')
      .values({ peer_id: peer.id, day: slot, used: 0 })
      .onConflict((oc) => oc.columns(['peer_id', 'day']).doNothing())
      .execute();
    // One statement, conditional on the row it updates: concurrent requests (other instances too)
    // are serialised on this slot's row, and the earlier slots it sums no longer change.
    const result = await db
      .updateTable('network_budget')
      .set((eb) => ({ used: eb('used', '+', count) }))
      .where('peer_id', '=', peer.id)
      .where('day', '=', slot)
      .where(
        sql<boolean>`used + ${count} + (select coalesce(sum(b.used), 0) from network_budget b where b.peer_id = ${peer.id} and b.day >= ${from} and b.day < ${slot}) <= ${budget}`,
      )
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0)
      return { granted: true, used: await usedInWindow(db, peer.id, now), retryAfterSeconds: 0 };
  }
  return {
    granted: false,
    used: await usedInWindow(db, peer.id, now),
    retryAfterSeconds: await secondsUntilFits(db, peer.id, budget, count, now),
  };
}

/** Seconds until slots expire from the window enough for `count` more (a full day when it never fits). */
async function secondsUntilFits(
  db: NetworkDb,
  peerId: string,
  budget: number,
  count: number,
  now: number,
): Promise<number> {
  if (count > budget) return 86_400;
  const rows = await db
    .selectFrom('network_budget')
    .select(['day', 'used'])
    .where('peer_id', '=', peerId)
    .where('day', '>=', windowStart(now))
    .orderBy('day')
    .execute();
  let used = rows.reduce((sum, row) => sum + Number(row.used), 0);
  for (const row of rows) {
    if (used + count <= budget) break;
    used -= Number(row.used);
    // A slot's count leaves the window when the slot 24 h 10 min after its start begins.
    const expires = slotStart(row.day) + WINDOW_SLOTS * SLOT_MS;
    if (used + count <= budget) return Math.max(1, Math.ceil((expires - now) / 1000));
  }
  return 1;
}

/** The start (epoch ms) of a slot; a row of the former per-day format counts from that day's start. */
const slotStart = (key: string) => Date.parse(key.length === 10 ? `${key}T00:00:00Z` : `${key}0:00Z`);

/** Slots out of every window are no longer needed. */
export async function pruneBudgets(db: NetworkDb, now = Date.now()): Promise<void> {
  await db.deleteFrom('network_budget').where('day', '<', windowStart(now)).execute();
}

/** Evaluations a peer has used in the last 24 hours (the window its budget is counted over). */
export async function usedInWindow(db: NetworkDb, peerId: string, now = Date.now()): Promise<number> {
  const row = await db
    .selectFrom('network_budget')
    .select(sql<number | string | null>`sum(used)`.as('n'))
    .where('peer_id', '=', peerId)
    .where('day', '>=', windowStart(now))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** A removed peer's counts (peers.ts: removePeer, in its transaction). */
export async function deletePeerBudget(trx: NetworkDb, peerId: string): Promise<void> {
  await trx.deleteFrom('network_budget').where('peer_id', '=', peerId).execute();
}
