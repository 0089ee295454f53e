// The outbox of the outbox for entity.flagged. Ingestion commits one row per request with its flag facts (one per
// entity); the delivery worker claims the row with a lease, plans the events (one per flagged entity and one per
// neighbour — an entity sharing a non-hub identifier with one of them — bounded below: at most one event per entity and
// request, each delivered once per webhook), stores the plan, and writes it into the outbox a slice per transaction, so
// neither the ingest commit nor any later one holds the write lock for long. A worker that dies midway leaves the row,
// its plan and its progress; the next holder continues where it stopped.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import { claimRows } from '../store/claims.ts';
import type { Environment } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';
import { newId } from '../lib/ids.ts';
import { existingWebhookIds, flaggedSubscriberCandidates, writeEvents } from './repository.ts';
import {
  deleteFanout,
  insertFanoutRow,
  leaseFanout,
  oldestFreeFanoutQuery,
  setFanoutProgress,
  storeFanoutPlan,
} from './fanout-repository.ts';
import { identifierHolders, nonHubIdentifiersOf } from '../entities/neighbour-repository.ts';

/**
 * Neighbour events one request may create, whatever the number of entities it flags. Beyond it
 * no more are written, and every event for an entity the request flagged itself says
 * `linked_truncated: true`.
 */
export const MAX_NEIGHBOURS_PER_REQUEST = 100;
/**
 * Neighbours announced through one identifier: a hub (a shared office network, a popular device
 * model) must not use up the request's budget and hide the neighbours of more telling ones.
 */
export const MAX_NEIGHBOURS_PER_IDENTIFIER = 25;
/** Identifiers of the flagged entities looked at per request; beyond it, linked_truncated too. */
const MAX_IDENTIFIERS_EXAMINED = 1000;
/** Events written to the outbox per transaction while a plan is expanded. */
const SLICE = 100;

export interface FlagFact {
  entityId: string;
  reason: 'fraud.reported' | 'entity.blocklisted';
  occurredAt: string;
}

/** One request's facts, one per entity: its reasons, and the latest of its flagging events. */
export interface CoalescedFact {
  entity_id: string;
  reason: FlagFact['reason'];
  reasons: Array<FlagFact['reason']>;
  occurred_at: string;
}

export function coalesceFacts(facts: readonly FlagFact[]): CoalescedFact[] {
  const byEntity = new Map<string, CoalescedFact>();
  for (const f of facts) {
    const known = byEntity.get(f.entityId);
    if (!known) {
      byEntity.set(f.entityId, {
        entity_id: f.entityId,
        reason: f.reason,
        reasons: [f.reason],
        occurred_at: f.occurredAt,
      });
      continue;
    }
    if (!known.reasons.includes(f.reason)) known.reasons.push(f.reason);
    if (Date.parse(f.occurredAt) > Date.parse(known.occurred_at))
      Object.assign(known, { reason: f.reason, occurred_at: f.occurredAt });
  }
  return [...byEntity.values()].map((f) => ({ ...f, reasons: [...f.reasons].sort() }));
}

/**
 * Inside the ingest transaction: one row, whatever the number of facts and neighbours. `fanout` is
 * the deciding policy's maxIdentifierFanout: identifiers with more holders are hubs, whose holders
 * are not neighbours (docs/api.md, "Rings").
 */
export async function insertFanout(
  trx: Transaction<Database>,
  environment: Environment,
  clientId: string,
  facts: CoalescedFact[],
  fanout: number,
  now = Date.now(),
): Promise<void> {
  await insertFanoutRow(trx, {
    id: newId('wfo'),
    environment,
    owner_client_id: clientId,
    facts: JSON.stringify({ facts, fanout }),
    created_at: now,
  });
}

/** Rows stored before the fanout was recorded hold the bare list: they take the built-in policy's. */
const LEGACY_FANOUT = 25;

function parseFacts(text: string): { facts: CoalescedFact[]; fanout: number } {
  const parsed = JSON.parse(text) as CoalescedFact[] | { facts: CoalescedFact[]; fanout: number };
  return Array.isArray(parsed) ? { facts: parsed, fanout: LEGACY_FANOUT } : parsed;
}

interface Plan {
  /** the subscribers when the request committed: a webhook created later does not receive it */
  webhooks: string[];
  events: Array<Record<string, unknown>>;
}

interface Neighbour {
  flagged: CoalescedFact;
  via: { type: string; hash: string };
  links: number;
}

/**
 * The events of one request: each flagged entity's own, then its neighbours', within the caps.
 * Neighbours are the ring's first hop (src/rings/graph.ts): holders of a shared identifier that
 * is not a hub.
 */
async function planEvents(
  db: Kysely<Database>,
  environment: Environment,
  facts: CoalescedFact[],
  fanout: number,
): Promise<Array<Record<string, unknown>>> {
  const flagged = new Map(facts.map((f) => [f.entity_id, f]));
  const holders = new Map<string, { type: string; hash: string; flagged: string[] }>();
  for (const ids of chunks([...flagged.keys()])) {
    const rows = await nonHubIdentifiersOf(db, environment, ids, fanout);
    for (const r of rows) {
      const key = `${r.id_type}\u0000${r.hash}`;
      const h = holders.get(key) ?? { type: r.id_type, hash: r.hash, flagged: [] };
      h.flagged.push(r.entity_id);
      holders.set(key, h);
    }
  }
  const neighbours = new Map<string, Neighbour>();
  let truncated = false;
  const identifiers = [...holders.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, h]) => h);
  for (const [index, ident] of identifiers.entries()) {
    if (index >= MAX_IDENTIFIERS_EXAMINED) {
      truncated = true;
      break;
    }
    const limit = ident.flagged.length + MAX_NEIGHBOURS_PER_IDENTIFIER + 1;
    const rows = await identifierHolders(db, environment, ident.type, ident.hash, limit);
    const others = rows.map((r) => r.entity_id).filter((id) => !flagged.has(id));
    if (rows.length === limit || others.length > MAX_NEIGHBOURS_PER_IDENTIFIER) truncated = true;
    const source = flagged.get([...ident.flagged].sort()[0]!)!;
    for (const id of others.slice(0, MAX_NEIGHBOURS_PER_IDENTIFIER)) {
      const known = neighbours.get(id);
      if (known) known.links += 1;
      else if (neighbours.size < MAX_NEIGHBOURS_PER_REQUEST)
        neighbours.set(id, { flagged: source, via: { type: ident.type, hash: ident.hash }, links: 1 });
      else truncated = true;
    }
    if (truncated && neighbours.size >= MAX_NEIGHBOURS_PER_REQUEST) break;
  }
  const own = facts.map((f) => ({ ...f, flagged_entity_id: f.entity_id, via: null, linked_truncated: truncated }));
  const linked = [...neighbours.entries()].map(([id, n]) => ({
    entity_id: id,
    reason: n.flagged.reason,
    reasons: n.flagged.reasons,
    occurred_at: n.flagged.occurred_at,
    flagged_entity_id: n.flagged.entity_id,
    via: n.via,
    flagged_links: n.links,
  }));
  return [...own, ...linked];
}

/** Claims the oldest fan-out row no worker holds, for `leaseMs` (store/claims.ts). */
async function claimFanout(store: Store, leaseMs: number, now: number) {
  const until = now + leaseMs;
  const [row] = await claimRows(store, {
    choose: (db, skipLocked) => skipLocked(oldestFreeFanoutQuery(db, now)).execute(),
    take: (db, [due]) => leaseFanout(db, due!.id, until, now),
  });
  if (!row) return undefined;
  return {
    id: row.id,
    environment: (row.environment === 'test' ? 'test' : 'live') as Environment,
    owner: row.owner_client_id,
    facts: row.facts,
    plan: row.plan,
    progress: Number(row.progress),
    created_at: Number(row.created_at),
    lease: until,
  };
}

class LeaseLost extends Error {}

/**
 * Expands one pending fan-out row, if any: returns whether one was found (the worker then looks
 * for the next, and delivers what it wrote).
 */
export async function expandOneFanout(store: Store, leaseMs: number): Promise<boolean> {
  const { db } = store;
  const claim = await claimFanout(store, leaseMs, Date.now());
  if (!claim) return false;
  let plan: Plan;
  if (claim.plan !== null) plan = JSON.parse(claim.plan) as Plan;
  else {
    const hooks = await flaggedSubscriberCandidates(db, claim.environment, claim.owner, claim.created_at);
    const webhooks = hooks.filter((w) => w.events.split(' ').includes('entity.flagged')).map((w) => w.id);
    const { facts, fanout } = parseFacts(claim.facts);
    plan = { webhooks, events: webhooks.length === 0 ? [] : await planEvents(db, claim.environment, facts, fanout) };
    if (!(await storeFanoutPlan(db, claim.id, claim.lease, JSON.stringify(plan)))) return true;
  }
  try {
    for (let from = claim.progress; ; from += SLICE) {
      const last = from + SLICE >= plan.events.length;
      await db.transaction().execute(async (trx) => {
        const changed = last
          ? await deleteFanout(trx, claim.id, claim.lease)
          : await setFanoutProgress(trx, claim.id, claim.lease, from + SLICE);
        if (Number(changed) === 0) throw new LeaseLost();
        const slice = plan.events.slice(from, from + SLICE);
        // A webhook deleted since the plan was made gets nothing.
        const alive =
          plan.webhooks.length === 0 || slice.length === 0
            ? []
            : (await existingWebhookIds(trx, plan.webhooks)).map((w) => w.id);
        if (alive.length > 0)
          await writeEvents(trx, claim.environment, 'entity.flagged', claim.owner, slice, alive, Date.now());
      });
      if (last) return true;
    }
  } catch (err) {
    if (err instanceof LeaseLost) return true;
    throw err;
  }
}
