// Row types of every table, as Kysely sees them. Times are epoch milliseconds (BIGINT).
import type {
  ListEntriesTable,
  ListsTable,
  ReviewsTable,
  RuleRevisionsTable,
  RuleTestLeasesTable,
  RulesTable,
  RuleVersionsTable,
} from './schema-rules.ts';
export type { ListsTable, ReviewsTable, RulesTable, RuleVersionsTable };
import type { AuditLogTable, PendingChangesTable, UserSessionsTable, UsersTable } from './schema-people.ts';
import type {
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEventsTable,
  WebhookFanoutsTable,
  WebhooksTable,
} from './schema-webhooks.ts';
import type { ApiKeysTable, ClientsTable, RevocationsTable, SigningKeysTable } from './schema-credentials.ts';

interface EventsTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  /** the client that sent the event ('' for events stored before 003_event_scope and for CLI imports) */
  client_id: string;
  event_id: string;
  entity_id: string;
  type: string;
  occurred_at: number;
  payload: string;
  ingested_at: number;
}

export interface EntitiesTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  entity_id: string;
  version: number;
  first_seen_at: number;
  last_event_at: number;
  trades_completed: number;
  trades_cancelled: number;
  disputes_opened: number;
  disputes_won: number;
  disputes_lost: number;
  chargebacks: number;
  fraud_reports: number;
  blocklisted: number;
  blocklist_changed_at: number;
  decay_at: number;
  d_trades_completed: number;
  d_trades_cancelled: number;
  d_disputes_lost: number;
  d_chargebacks: number;
  d_fraud_reports: number;
  /** last completed trade, 0 before the first (006_p2p_features) */
  last_trade_at: number;
  /** last fraud report, blocklisting, chargeback or lost dispute, 0 before the first (017_rings) */
  flagged_at: number;
  /** disputes lost with that reason on their dispute.resolved event (019_loss_reasons) */
  disputes_lost_third_party_payment: number;
  disputes_lost_fake_proof: number;
  disputes_lost_underpayment: number;
  disputes_lost_no_payment: number;
  /** disputes lost for one of those four reasons, decayed like the d_ counts (023_fraudulent_losses) */
  d_disputes_lost_fraudulent: number;
}

export interface EntityCurrencyTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  entity_id: string;
  currency: string;
  trades: number;
  volume: number;
  log_mean: number;
  log_m2: number;
}

interface EntityHourlyTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  entity_id: string;
  /** ten-minute bucket: floor(epoch ms / 600 000) */
  bucket: number;
  currency: string;
  trades: number;
  volume: number;
}

interface EntityCounterpartiesTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  entity_id: string;
  counterparty_id: string;
  trades: number;
}

export interface IdentifiersTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  id_type: string;
  hash: string;
  entity_id: string;
  created_at: number;
}

/** Per-identifier counts behind the linkage signal (002_identifier_stats). */
interface IdentifierStatsTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  id_type: string;
  hash: string;
  entities: number;
  flagged_entities: number;
  version: number;
}

export interface DecisionsTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  id: string;
  kind: string;
  principal_id: string;
  owner_client_id: string;
  subject_id: string;
  request_digest: string;
  result: string;
  policy_version: string;
  created_at: number;
  /** scores only: the score cache key this decision answers (trust/cache.ts) */
  cache_key: string | null;
  /** scores only: the store state (entity and identifier versions) it was computed from */
  cache_state: string | null;
  /**
   * scores only (005_learning): every signal's value, JSON, full double precision (docs/api.md, "Outcomes and labels"):
   * an array in STORED_FEATURE_ORDER (039_compact_decisions), or the object of names rows kept before; read with
   * decodeFeatures (src/model/feature-vector.ts)
   */
  features?: string | null;
  /**
   * scores only (013_feature_set): the definition `features` follows; null = the first (src/model/feature-vector.ts)
   */
  feature_set?: number | null;
  /** scores only: the request's context.trade_id */
  trade_id?: string | null;
  /** what was asked, JSON, without entity ids (016_decision_request): see audit/routes.ts */
  request?: string | null;
  /**
   * scores only (018_network_scoring): the peers whose flags made up network_flags, JSON [{id, name, contribution}];
   * null when none
   */
  network_peers?: string | null;
  /** scores only: the result's risk level, for filtering */
  risk_level?: string | null;
  /** scores only: the shadow policy's version and score at decision time, never returned */
  shadow_version?: string | null;
  shadow_score?: number | null;
  /** 'fraud' | 'legit' once labelled; label_source 'api' | 'event' */
  label?: string | null;
  label_source?: string | null;
  label_note?: string | null;
  labelled_at?: number | null;
  labelled_by?: string | null;
  /** scores only (029_rules_reviews): approve | review | hold | decline (docs/rules.md) */
  outcome?: string | null;
  /** scores only: the matched active rules, JSON [{id, name, version, action, reads, …}]; null when none */
  rules?: string | null;
  /** scores only: the matched shadow rules with their would-be outcome, JSON; never changed the outcome */
  shadow_rules?: string | null;
  /**
   * scores only: what a rule reads that the features do not hold (amount_ref, context, entity facts, the policy's safe
   * amount), JSON, less what the row holds (039_compact_decisions; src/model/stored-rule-inputs.ts reads either form)
   */
  rule_inputs?: string | null;
  /** (032) the digest of the Idempotency-Key claim the decision answered (http/idempotency.ts), or null */
  claim?: string | null;
}

/** Policy versions (005_learning, docs/api.md, "Policies"). */
export interface PoliciesTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  version: string;
  /** 'active' | 'shadow' | 'candidate' | 'retired' */
  status: string;
  /** 'builtin' | 'file' | 'upload' | 'fit' */
  source: string;
  parent_version: string | null;
  created_at: number;
  created_by: string | null;
  /** the principal id that last made it active (038_record_actors); null before, and for the built-in */
  activated_by: string | null;
  /** the policy document, JSON */
  document: string;
  /** the fit report, JSON (fitted policies only) */
  report: string | null;
}

/** Idempotency-Key claims and their sealed responses (007_idempotency). */
/** One row per erasure (014_principal_bound): who, when, how much; the entity only as its salted digest. */
interface ErasuresTable {
  id: string;
  environment: string;
  entity_digest: string;
  principal_id: string;
  client_id: string;
  events_deleted: number;
  erased_at: number;
}

interface IdempotencyKeysTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  client_id: string;
  /** the credential (key id, or client id for a token) whose response this is (014_principal_bound) */
  principal_id: string;
  idem_key: string;
  fingerprint: string;
  /** 'pending' while the first request runs, then 'done' */
  state: string;
  response: string | null;
  created_at: number;
  expires_at: number;
}

/** Per-deployment values generated once (007_idempotency), e.g. the erasure salt. */
interface SettingsTable {
  name: string;
  value: string;
  /** who last put it (a principal id) and when (038_record_actors); null for the generated values */
  updated_by: string | null;
  updated_at: number | null;
}

export interface Database {
  clients: ClientsTable;
  api_keys: ApiKeysTable;
  signing_keys: SigningKeysTable;
  revocations: RevocationsTable;
  events: EventsTable;
  entities: EntitiesTable;
  entity_currency: EntityCurrencyTable;
  entity_hourly: EntityHourlyTable;
  entity_counterparties: EntityCounterpartiesTable;
  identifiers: IdentifiersTable;
  identifier_stats: IdentifierStatsTable;
  decisions: DecisionsTable;
  rules: RulesTable;
  rule_versions: RuleVersionsTable;
  rule_revisions: RuleRevisionsTable;
  lists: ListsTable;
  list_entries: ListEntriesTable;
  rule_test_leases: RuleTestLeasesTable;
  reviews: ReviewsTable;
  policies: PoliciesTable;
  idempotency_keys: IdempotencyKeysTable;
  erasures: ErasuresTable;
  settings: SettingsTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_fanouts: WebhookFanoutsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  users: UsersTable;
  user_sessions: UserSessionsTable;
  audit_log: AuditLogTable;
  pending_changes: PendingChangesTable;
}
