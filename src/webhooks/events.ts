// The facts other modules announce, built where they happen and written to the outbox in their transaction: high-risk,
// review-required and declined scores and dispute analyses (from the decision writer), flagged entities (from
// ingestion, through the fan-out row of fanout.ts), deactivated keys. policy.activated is enqueued by policy activation
// itself.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import { enqueueWebhookEvent, hasSubscribers, webhooksMatchingAny, type WebhookEventType } from './repository.ts';
import { coalesceFacts, insertFanout, type FlagFact } from './fanout.ts';

export type { FlagFact };
import type { Environment } from '../lib/principal.ts';

interface DecisionLike {
  id: string;
  kind: string;
  environment: string;
  /** scores: the stored level, which saves parsing the result to tell whether it is high */
  risk_level?: string | null;
  /** scores: the stored outcome (docs/rules.md), likewise */
  outcome?: string | null;
  /** scores: the review the decision opens, written in the same transaction (audit/decisions.ts) */
  review?: { id: string } | null;
  owner_client_id: string;
  result: string;
}

type DecisionEventType = Extract<
  WebhookEventType,
  'decision.high_risk' | 'decision.review_required' | 'decision.declined' | 'dispute.analyzed'
>;

const HIGH_LEVELS = new Set(['high', 'critical']);
const REVIEW_OUTCOMES = new Set(['review', 'hold']);

/**
 * The webhook events a stored decision announces, by its stored columns (no parse): any dispute
 * analysis; a score at high or above (decision.high_risk), one whose outcome asks for a review or
 * a hold (decision.review_required) or declines it (decision.declined). One score may announce
 * two: a high one sent to review, a critical one declined.
 */
function decisionEventTypes(row: DecisionLike): DecisionEventType[] {
  if (row.kind === 'dispute_analysis') return ['dispute.analyzed'];
  if (row.kind !== 'score') return [];
  const types: DecisionEventType[] = [];
  let level = row.risk_level;
  let outcome = row.outcome;
  if (level === undefined || outcome === undefined) {
    // A row without the columns (a caller that does not set them): read them from the result.
    const result = parsed(row);
    level ??= typeof result?.risk_level === 'string' ? result.risk_level : null;
    outcome ??= typeof result?.outcome === 'string' ? result.outcome : null;
  }
  if (level && HIGH_LEVELS.has(level)) types.push('decision.high_risk');
  if (outcome && REVIEW_OUTCOMES.has(outcome)) types.push('decision.review_required');
  else if (outcome === 'decline') types.push('decision.declined');
  return types;
}

function parsed(row: DecisionLike): Record<string, unknown> | undefined {
  try {
    return JSON.parse(row.result) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The events a stored decision announces, with their data. */
function decisionEvents(row: DecisionLike): Array<{ type: DecisionEventType; data: Record<string, unknown> }> {
  const types = decisionEventTypes(row);
  if (types.length === 0) return [];
  const result = parsed(row);
  if (!result) return [];
  if (row.kind === 'dispute_analysis') return [{ type: 'dispute.analyzed', data: result }];
  // Everything the response carried (score, level, signals, outcome, matched rules, policy), minus the per-request
  // flag.
  const { cached: _cached, ...data } = result;
  return types.map((type) => ({
    type,
    data:
      type === 'decision.review_required'
        ? { ...data, decision_id: row.id, review_id: row.review?.id ?? null }
        : { ...data, decision_id: row.id },
  }));
}

/** For DecisionWriter: writes the events of a batch of decisions inside the batch's transaction. */
export const decisionWebhooks = {
  relevant: (row: DecisionLike) => decisionEventTypes(row).length > 0,
  /**
   * Whether any webhook of a row's environment subscribes to its event type: one query on the
   * small webhooks table per batch, so that a batch nobody listens to is a plain insert rather
   * than a transaction with a subscriber lookup per decision.
   */
  async anySubscriber(db: Kysely<Database>, rows: readonly DecisionLike[]): Promise<boolean> {
    const wanted = rows.flatMap((r) => decisionEventTypes(r).map((type) => ({ environment: r.environment, type })));
    if (wanted.length === 0) return false;
    const types = [...new Set(wanted.map((w) => w.type))];
    const hooks = await webhooksMatchingAny(
      db,
      types.map((t) => `%${t}%`),
    );
    return wanted.some((w) =>
      hooks.some((h) => h.environment === w.environment && h.events.split(' ').includes(w.type)),
    );
  },
  async write(trx: Transaction<Database>, rows: readonly DecisionLike[]): Promise<void> {
    for (const row of rows) {
      for (const event of decisionEvents(row)) {
        await enqueueWebhookEvent(trx, row.environment === 'test' ? 'test' : 'live', event.type, event.data, {
          owner: row.owner_client_id,
        });
      }
    }
  },
};

export async function announceKeyDeactivated(
  trx: Transaction<Database>,
  key: { id: string; name: string; prefix: string; owner_client_id: string; environment: string },
  at: number,
  by: string,
): Promise<void> {
  await enqueueWebhookEvent(
    trx,
    key.environment === 'test' ? 'test' : 'live',
    'key.deactivated',
    {
      key_id: key.id,
      name: key.name,
      prefix: key.prefix,
      environment: key.environment,
      owner_client_id: key.owner_client_id,
      deactivated_at: new Date(at).toISOString(),
      deactivated_by: by,
    },
    { owner: key.owner_client_id, now: at },
  );
}

/**
 * entity.flagged for a batch's reported or blocklisted entities and their neighbours: in the
 * batch's transaction only one compact fan-out row (the facts, one per entity), which the delivery
 * worker expands into events and deliveries afterwards (fanout.ts). A report over a hundred
 * entities sharing a device thus commits one extra row, not tens of thousands, while it holds the
 * write lock; the row commits with the facts, so nothing acknowledged is lost.
 */
export async function announceFlags(
  trx: Transaction<Database>,
  environment: Environment,
  clientId: string,
  facts: readonly FlagFact[],
  fanout: number,
): Promise<void> {
  if (facts.length === 0 || clientId === '' || !(await hasSubscribers(trx, environment, 'entity.flagged', clientId)))
    return;
  await insertFanout(trx, environment, clientId, coalesceFacts(facts), fanout);
}

/** The flagging facts among a batch's newly accepted events. */
export function flagFacts(events: ReadonlyArray<{ type: string; entity_id: string; occurred_at: string }>): FlagFact[] {
  return events
    .filter((e) => e.type === 'fraud.reported' || e.type === 'entity.blocklisted')
    .map((e) => ({ entityId: e.entity_id, reason: e.type as FlagFact['reason'], occurredAt: e.occurred_at }));
}
