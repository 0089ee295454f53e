// The facts other modules announce, built where they happen and written to the outbox in their
// transaction: high-risk scores and dispute analyses (from the decision writer), flagged entities
// (from ingestion), deactivated keys. policy.activated is enqueued by policy activation itself.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import { enqueueWebhookEvent, hasSubscribers, type WebhookEventType } from './repository.ts';
import type { Environment } from '../auth/principal.ts';

export { enqueueWebhookEvent };

interface DecisionLike {
  id: string;
  kind: string;
  environment: string;
  /** scores: the stored level, which saves parsing the result to tell whether it is high */
  risk_level?: string | null;
  owner_client_id: string;
  result: string;
}

const HIGH_LEVELS = new Set(['high', 'critical']);

/** The webhook event a stored decision announces, if any: a score at high or above, or any dispute analysis. */
export function decisionEvent(row: DecisionLike): { type: 'decision.high_risk' | 'dispute.analyzed'; data: Record<string, unknown> } | undefined {
  if (row.kind !== 'score' && row.kind !== 'dispute_analysis') return undefined;
  let result: Record<string, unknown>;
  try {
    result = JSON.parse(row.result) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (row.kind === 'dispute_analysis') return { type: 'dispute.analyzed', data: result };
  if (!HIGH_LEVELS.has(String(result.risk_level))) return undefined;
  // Everything the response carried (score, level, signals, policy), minus the per-request flag.
  const { cached: _cached, ...data } = result;
  return { type: 'decision.high_risk', data: { ...data, decision_id: row.id } };
}

/** The event type a decision would announce, without building the event. */
function decisionEventType(row: DecisionLike): WebhookEventType | undefined {
  if (row.kind === 'dispute_analysis') return 'dispute.analyzed';
  if (row.kind !== 'score') return undefined;
  if (row.risk_level !== undefined && row.risk_level !== null) return HIGH_LEVELS.has(row.risk_level) ? 'decision.high_risk' : undefined;
  return decisionEvent(row)?.type;
}

/** For DecisionWriter: writes the events of a batch of decisions inside the batch's transaction. */
export const decisionWebhooks = {
  relevant: (row: DecisionLike) => decisionEventType(row) !== undefined,
  /**
   * Whether any webhook of a row's environment subscribes to its event type: one query on the
   * small webhooks table per batch, so that a batch nobody listens to is a plain insert rather
   * than a transaction with a subscriber lookup per decision.
   */
  async anySubscriber(db: Kysely<Database>, rows: readonly DecisionLike[]): Promise<boolean> {
    const wanted = rows.map((r) => ({ environment: r.environment, type: decisionEventType(r) })).filter((w) => w.type !== undefined);
    if (wanted.length === 0) return false;
    const types = [...new Set(wanted.map((w) => w.type!))];
    const hooks = await db.selectFrom('webhooks').select(['environment', 'events'])
      .where((eb) => eb.or(types.map((t) => eb('events', 'like', `%${t}%`)))).execute();
    return wanted.some((w) => hooks.some((h) => h.environment === w.environment && h.events.split(' ').includes(w.type!)));
  },
  async write(trx: Transaction<Database>, rows: readonly DecisionLike[]): Promise<void> {
    for (const row of rows) {
      const event = decisionEvent(row);
      if (event) await enqueueWebhookEvent(trx, row.environment === 'test' ? 'test' : 'live', event.type, event.data, { owner: row.owner_client_id });
    }
  },
};

export async function announceKeyDeactivated(trx: Transaction<Database>, key: { id: string; name: string; prefix: string; owner_client_id: string; environment: string }, at: number, by: string): Promise<void> {
  await enqueueWebhookEvent(trx, key.environment === 'test' ? 'test' : 'live', 'key.deactivated', {
    key_id: key.id, name: key.name, prefix: key.prefix, environment: key.environment, owner_client_id: key.owner_client_id,
    deactivated_at: new Date(at).toISOString(), deactivated_by: by,
  }, { owner: key.owner_client_id, now: at });
}

/** Neighbours announced per flagged entity: a hub identifier must not turn one report into thousands of events. */
export const MAX_LINKED_ANNOUNCED = 100;

export interface FlagFact {
  entityId: string;
  reason: 'fraud.reported' | 'entity.blocklisted';
  occurredAt: string;
}

/**
 * entity.flagged for each entity a batch reported or blocklisted, and for entities sharing one of
 * its identifiers (up to MAX_LINKED_ANNOUNCED each), for the ingesting client's webhooks.
 */
export async function announceFlags(trx: Transaction<Database>, environment: Environment, clientId: string, facts: readonly FlagFact[]): Promise<void> {
  if (facts.length === 0 || clientId === '' || !(await hasSubscribers(trx, environment, 'entity.flagged', clientId))) return;
  for (const fact of facts) {
    const base = { reason: fact.reason, occurred_at: fact.occurredAt, flagged_entity_id: fact.entityId };
    await enqueueWebhookEvent(trx, environment, 'entity.flagged', { entity_id: fact.entityId, ...base, via: null }, { owner: clientId });
    const neighbours = await trx.selectFrom('identifiers as mine')
      .innerJoin('identifiers as other', (j) => j.onRef('other.environment', '=', 'mine.environment').onRef('other.id_type', '=', 'mine.id_type').onRef('other.hash', '=', 'mine.hash'))
      .select(['other.entity_id', 'mine.id_type', 'mine.hash'])
      .where('mine.environment', '=', environment).where('other.environment', '=', environment)
      .where('mine.entity_id', '=', fact.entityId).where('other.entity_id', '!=', fact.entityId)
      .orderBy('other.entity_id').limit(MAX_LINKED_ANNOUNCED * 4).execute();
    const seen = new Set<string>();
    for (const n of neighbours) {
      if (seen.has(n.entity_id) || seen.size >= MAX_LINKED_ANNOUNCED) continue;
      seen.add(n.entity_id);
      await enqueueWebhookEvent(trx, environment, 'entity.flagged', { entity_id: n.entity_id, ...base, via: { type: n.id_type, hash: n.hash } }, { owner: clientId });
    }
  }
}

/** The flagging facts among a batch's newly accepted events. */
export function flagFacts(events: ReadonlyArray<{ type: string; entity_id: string; occurred_at: string }>): FlagFact[] {
  return events.filter((e) => e.type === 'fraud.reported' || e.type === 'entity.blocklisted')
    .map((e) => ({ entityId: e.entity_id, reason: e.type as FlagFact['reason'], occurredAt: e.occurred_at }));
}
