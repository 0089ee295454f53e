// The `decisions` table's owner for its writes and single reads (issue 41, "one owner per table"):
// the group commit's insert (decisions.ts), a claim's answer, one decision as a caller may see it,
// the three label writers (labels.ts: api > event > review) and what an erasure rewrites
// (docs/api.md, "Erasure"), and the shared score cache's read of one decision (scoreAnswerSql).
// Each function takes the executor, the store or the caller's transaction, so the callers'
// transactions are unchanged; reads over many decisions are in decision-history-repository.ts and
// decision-stats-repository.ts.
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { insertRows, type RowGroup } from '../store/row-inserts.ts';
import { likeEscaped } from '../store/like.ts';

type Db = Kysely<Database>;

const COLUMNS = [
  'id',
  'kind',
  'environment',
  'principal_id',
  'owner_client_id',
  'subject_id',
  'request_digest',
  'result',
  'policy_version',
  'created_at',
  'cache_key',
  'cache_state',
  // scores only (docs/api.md, "Outcomes and labels"): see learningColumns in src/model/feature-vector.ts
  'features',
  'feature_set',
  'trade_id',
  'risk_level',
  'shadow_version',
  'shadow_score',
  'request',
  'network_peers',
  // scores only (029_rules_reviews): docs/rules.md
  'outcome',
  'rules',
  'shadow_rules',
  'rule_inputs',
  // 032_decision_claims: a retry of a claim left pending finds its decision (http/idempotency.ts)
  'claim',
] as const;

/** A group's decisions as store/row-inserts.ts's insertRowsAtomically takes them, beside the reviews they open. */
export function decisionRows(rows: readonly object[]): RowGroup {
  return { table: 'decisions', columns: COLUMNS, rows };
}

/**
 * A group's decisions inserted in `trx`: the statements are compiled once per chunk size
 * (store/row-inserts.ts), not built per group.
 */
export function insertDecisions(
  db: Db,
  trx: Transaction<Database>,
  rows: readonly Partial<Record<(typeof COLUMNS)[number], unknown>>[],
): Promise<void> {
  return insertRows(db, trx, 'decisions', COLUMNS, rows);
}

/** The kind and stored result of the decision made under an Idempotency-Key claim (032_decision_claims). */
export function decisionByClaim(db: Db, environment: string, claim: string) {
  return db
    .selectFrom('decisions')
    .select(['kind', 'result'])
    .where('claim', '=', claim)
    .where('environment', '=', environment)
    .executeTakeFirst();
}

/** The decision `id` of `environment`, and of client `owner` unless undefined (an admin sees every client's). */
export function visibleDecision(db: Db, id: string, environment: string, owner: string | undefined) {
  let q = db.selectFrom('decisions').selectAll().where('id', '=', id).where('environment', '=', environment);
  if (owner !== undefined) q = q.where('owner_client_id', '=', owner);
  return q.executeTakeFirst();
}

/** What the shared score cache checks of a stored decision before adopting it (trust/answer-cache.ts). */
export interface ScoreAnswerRow {
  principal_id: string;
  cache_key: string | null;
  cache_state: string | null;
  result: string;
}

/**
 * The score decision `id` of `env` with, in the same statement, the store state its answer must
 * still match: `state` is the entity tables' owner's columns and joins for that read
 * (entities/profile-repository.ts stateFragments), handed in by the caller. The arguments are
 * placeholders of a statement compiled once (store/prepared.ts).
 */
export function scoreAnswerSql<S>(
  env: unknown,
  id: unknown,
  state: { columns: RawBuilder<S>; joins: RawBuilder<unknown> },
): RawBuilder<ScoreAnswerRow & S> {
  return sql<ScoreAnswerRow & S>`
        select d.principal_id, d.cache_key, d.cache_state, d.result, ${state.columns}
        from decisions d ${state.joins}
        where d.id = ${id} and d.kind = 'score' and d.environment = ${env}`;
}

/** The decision `id`, which the caller knows exists (a review's). */
export function decisionById(db: Db, id: string) {
  return db.selectFrom('decisions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** An operator's label (source api), replacing any other. */
export function setApiLabel(
  db: Db,
  id: string,
  label: 'fraud' | 'legit',
  note: string | null,
  by: string,
  now: number,
) {
  return db
    .updateTable('decisions')
    .set({ label, label_source: 'api', label_note: note, labelled_at: now, labelled_by: by })
    .where('id', '=', id)
    .execute();
}

/**
 * Label `fraud` (source event) on the score decisions of one entity and trade, of the events'
 * client unless it is the host's operator (''): api labels stay, event and review labels give way.
 */
export function setEventFraudLabel(
  trx: Db,
  environment: Environment,
  clientId: string,
  entityId: string,
  tradeId: string,
  now: number,
) {
  let update = trx
    .updateTable('decisions')
    .set({
      label: 'fraud',
      label_source: 'event',
      label_note: null,
      labelled_at: now,
      labelled_by: clientId === '' ? null : clientId,
    })
    .where('environment', '=', environment);
  if (clientId !== '') update = update.where('owner_client_id', '=', clientId);
  return (
    update
      .where('subject_id', '=', entityId)
      .where('trade_id', '=', tradeId)
      .where('kind', '=', 'score')
      // api labels stay; event and review labels give way to this one (labels.ts, at its head)
      .where((eb) => eb.or([eb('label_source', 'is', null), eb('label_source', 'in', ['event', 'review'])]))
      .executeTakeFirst()
  );
}

/** A reviewer's verdict as the label (source review), only where no api or event label exists. */
export function setReviewLabel(
  trx: Db,
  decisionId: string,
  label: 'fraud' | 'legit',
  note: string | null,
  by: string,
  now: number,
) {
  return trx
    .updateTable('decisions')
    .set({ label, label_source: 'review', label_note: note, labelled_at: now, labelled_by: by })
    .where('id', '=', decisionId)
    .where((eb) => eb.or([eb('label_source', 'is', null), eb('label_source', '=', 'review')]))
    .executeTakeFirst();
}

/** An erased entity's score decisions name its digest (docs/api.md, "Erasure"). */
export function renameDecisionSubject(trx: Db, env: Environment, id: string, digest: string) {
  return trx
    .updateTable('decisions')
    .set({ subject_id: digest })
    .where('environment', '=', env)
    .where('subject_id', '=', id)
    .execute();
}

/** Decisions whose stored result matches the LIKE `pattern` (a filter only: SQLite's is case-insensitive). */
export function decisionResultsLike(trx: Db, env: Environment, pattern: string) {
  return trx
    .selectFrom('decisions')
    .select(['id', 'result as text'])
    .where('environment', '=', env)
    .where(likeEscaped('result', pattern))
    .execute();
}

export function setDecisionResult(trx: Db, id: string, text: string) {
  return trx.updateTable('decisions').set({ result: text }).where('id', '=', id).execute();
}

/** Decisions whose label note matches the LIKE `pattern`. */
export function decisionLabelNotesLike(trx: Db, env: Environment, pattern: string) {
  return trx
    .selectFrom('decisions')
    .select(['id', 'label_note'])
    .where('environment', '=', env)
    .where(likeEscaped('label_note', pattern))
    .execute();
}

export function setDecisionLabelNote(trx: Db, id: string, note: string) {
  return trx.updateTable('decisions').set({ label_note: note }).where('id', '=', id).execute();
}

/** What a score decision stored for its rules: the matched and shadow rules' reads, the rule inputs. */
export const DECISION_RULE_COLUMNS = ['rules', 'shadow_rules', 'rule_inputs'] as const;

/** Decisions with any of the rule columns matching the LIKE `pattern`: one pass, not one per column. */
export function decisionRuleColumnsLike(trx: Db, env: Environment, pattern: string) {
  return trx
    .selectFrom('decisions')
    .select(['id', 'rules', 'shadow_rules', 'rule_inputs'])
    .where('environment', '=', env)
    .where((eb) => eb.or(DECISION_RULE_COLUMNS.map((column) => likeEscaped(column, pattern))))
    .execute();
}

export function setDecisionRuleColumns(
  trx: Db,
  id: string,
  changes: Partial<Record<(typeof DECISION_RULE_COLUMNS)[number], string>>,
) {
  return trx.updateTable('decisions').set(changes).where('id', '=', id).execute();
}
