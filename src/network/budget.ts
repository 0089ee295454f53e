// Each peer's daily evaluation budget (docs/network.md, "What the budget bounds"): counted per UTC
// day in the store, so every instance of the deployment shares it.
import type { NetworkDb, NetworkPeersTable } from './tables.ts';

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function secondsToNextUtcDay(now = Date.now()): number {
  const next = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now) / 1000));
}

/** Takes `count` evaluations from today's budget; false (nothing taken) when they do not fit. */
export async function consumeBudget(db: NetworkDb, peer: Pick<NetworkPeersTable, 'id' | 'budget_per_day'>, count: number, now = Date.now()): Promise<boolean> {
  const budget = Number(peer.budget_per_day);
  if (count > budget) return false;
  const day = utcDay(now);
  await db.insertInto('network_budget').values({ peer_id: peer.id, day, used: 0 }).onConflict((oc) => oc.columns(['peer_id', 'day']).doNothing()).execute();
  const result = await db.updateTable('network_budget').set((eb) => ({ used: eb('used', '+', count) }))
    .where('peer_id', '=', peer.id).where('day', '=', day).where('used', '<=', budget - count).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Days before today are no longer needed. */
export async function pruneBudgets(db: NetworkDb, now = Date.now()): Promise<void> {
  await db.deleteFrom('network_budget').where('day', '<', utcDay(now)).execute();
}

/** Evaluations a peer has used today. */
export async function usedToday(db: NetworkDb, peerId: string, now = Date.now()): Promise<number> {
  const row = await db.selectFrom('network_budget').select('used').where('peer_id', '=', peerId).where('day', '=', utcDay(now)).executeTakeFirst();
  return Number(row?.used ?? 0);
}
