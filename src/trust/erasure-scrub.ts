// What an erasure (erasure.ts) rewrites rather than deletes: rows that name the erased id beside
// other data — other entities' events, counterparty rows, decisions (and what they stored for their
// rules), webhook events and fan-outs, label notes — name its digest instead. A LIKE finds
// candidate rows; the replacement is exact.
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { canonicalJson } from './cache.ts';
import { containsJsonString, replaceDeep, replaceToken } from './erasure-text.ts';
import {
  DECISION_RULE_COLUMNS,
  decisionLabelNotesLike,
  decisionResultsLike,
  decisionRuleColumnsLike,
  setDecisionLabelNote,
  setDecisionResult,
  setDecisionRuleColumns,
} from '../audit/decision-repository.ts';
import { fanoutsLike, revokeFanoutLeases, rewriteFanout } from '../webhooks/fanout-repository.ts';
import { setWebhookEventData, webhookEventsLike } from '../webhooks/repository.ts';
import { eventsLike, setEventPayload } from '../entities/event-repository.ts';
import {
  addCounterparties,
  counterpartyRowsNaming,
  deleteCounterpartyRowsNaming,
} from '../entities/aggregate-repository.ts';
import { containsPattern } from '../store/like.ts';

const CHUNK = 200;

/**
 * Flag fan-outs not yet expanded into webhook events name the entity in their facts and plan. Every
 * lease of the environment is taken back first: a worker's plan read before the erasure is never
 * written, and its row is planned again from what the erasure left.
 */
export async function scrubFanouts(
  trx: Transaction<Database>,
  env: Environment,
  id: string,
  digest: string,
): Promise<void> {
  await revokeFanoutLeases(trx, env);
  const rewrite = (text: string) => JSON.stringify(replaceDeep(JSON.parse(text), id, digest));
  for (const row of await fanoutsLike(trx, env, containsJsonString(id)))
    await rewriteFanout(trx, row.id, rewrite(row.facts), row.plan === null ? null : rewrite(row.plan));
}

/** Label notes that name the id (operators write free text) name the digest instead. */
export async function scrubLabelNotes(
  trx: Transaction<Database>,
  env: Environment,
  id: string,
  digest: string,
): Promise<void> {
  const pattern = containsPattern(id);
  const rows = await decisionLabelNotesLike(trx, env, pattern);
  for (const row of rows) {
    const note = replaceToken(row.label_note ?? '', id, digest);
    if (note !== row.label_note) await setDecisionLabelNote(trx, row.id, note);
  }
}

/**
 * What a score decision stored for its rules (the matched and shadow rules' reads, the rule inputs'
 * context) names the digest: one pass over the environment's decisions for the three columns, not
 * one per column.
 */
export async function scrubDecisionRules(
  trx: Transaction<Database>,
  env: Environment,
  id: string,
  digest: string,
): Promise<void> {
  const rows = await decisionRuleColumnsLike(trx, env, containsJsonString(id));
  for (const row of rows) {
    const changes: Partial<Record<(typeof DECISION_RULE_COLUMNS)[number], string>> = {};
    for (const column of DECISION_RULE_COLUMNS) {
      const before = row[column];
      if (before === null || before === undefined) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(before);
      } catch {
        continue;
      }
      const text = JSON.stringify(replaceDeep(parsed, id, digest));
      if (text !== before) changes[column] = text;
    }
    if (Object.keys(changes).length > 0) await setDecisionRuleColumns(trx, row.id, changes);
  }
}

/**
 * Rows of `table` whose JSON column mentions the id: rewritten with the digest. The LIKE is only a
 * filter (SQLite's is case-insensitive); the replacement is exact.
 */
export async function scrubJson(
  trx: Transaction<Database>,
  env: Environment,
  table: 'events' | 'decisions' | 'webhook_events',
  id: string,
  digest: string,
  canonical: boolean,
): Promise<void> {
  const pattern = containsJsonString(id);
  const rows =
    table === 'events'
      ? await eventsLike(trx, env, pattern)
      : table === 'decisions'
        ? await decisionResultsLike(trx, env, pattern)
        : await webhookEventsLike(trx, env, pattern);
  for (const row of rows) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.text);
    } catch {
      continue;
    }
    const replaced = replaceDeep(parsed, id, digest);
    const text = canonical ? canonicalJson(replaced) : JSON.stringify(replaced);
    if (text === row.text) continue;
    if (table === 'events') {
      const r = row as { client_id: string; event_id: string };
      await setEventPayload(trx, env, r.client_id, r.event_id, text);
    } else if (table === 'decisions') {
      await setDecisionResult(trx, (row as { id: string }).id, text);
    } else {
      await setWebhookEventData(trx, (row as { id: string }).id, text);
    }
  }
}

/** Other entities' counterparty rows naming the erased one now name its digest (merged if that row exists). */
export async function scrubCounterparties(
  trx: Transaction<Database>,
  env: Environment,
  id: string,
  digest: string,
): Promise<void> {
  const rows = await counterpartyRowsNaming(trx, env, id);
  for (let i = 0; i < rows.length; i += CHUNK) {
    const batch = rows
      .slice(i, i + CHUNK)
      .map((r) => ({ environment: env, entity_id: r.entity_id, counterparty_id: digest, trades: Number(r.trades) }));
    await addCounterparties(trx, batch);
  }
  await deleteCounterpartyRowsNaming(trx, env, id);
}
