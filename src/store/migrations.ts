// Schema migrations, written once for both dialects; only the auto-increment column differs.
import { Kysely, Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './dialect.ts';
import { identifierStats } from './migrations/002_identifier_stats.ts';
import { eventScope } from './migrations/003_event_scope.ts';
import { keyRotation } from './migrations/004_key_rotation.ts';
import { learning } from './migrations/005_learning.ts';
import { p2pFeatures } from './migrations/006_p2p_features.ts';
import { idempotency } from './migrations/007_idempotency.ts';
import { environments } from './migrations/009_environments.ts';
import { webhooks } from './migrations/008_webhooks.ts';
import { webhookIsolation } from './migrations/010_webhook_isolation.ts';
import { policyJobs } from './migrations/011_policy_jobs.ts';
import { featureSet } from './migrations/013_feature_set.ts';
import { principalBound } from './migrations/014_principal_bound.ts';
import { network } from './migrations/015_network.ts';
import { decisionRequest } from './migrations/016_decision_request.ts';
import { networkScoring } from './migrations/018_network_scoring.ts';
import { rings } from './migrations/017_rings.ts';
import { lossReasons } from './migrations/019_loss_reasons.ts';
import { networkIncremental } from './migrations/020_network_incremental.ts';
import { fraudulentLosses } from './migrations/023_fraudulent_losses.ts';
import { changeCounter } from './migrations/024_change_counter.ts';
import { networkPeerLimits } from './migrations/025_network_peer_limits.ts';
import { networkFairness } from './migrations/027_network_fairness.ts';
import { policyJobTurns } from './migrations/028_policy_job_turns.ts';
import { rulesAndReviews } from './migrations/029_rules_reviews.ts';
import { listEntryRevisions } from './migrations/030_list_entry_revisions.ts';
import { listHeld } from './migrations/031_list_held.ts';
import { decisionClaims } from './migrations/032_decision_claims.ts';
import { ruleTestLeases } from './migrations/033_rule_test_leases.ts';
import { people } from './migrations/034_people.ts';
import { totp } from './migrations/035_totp.ts';
import { withoutRowid } from './migrations/036_without_rowid.ts';
import { keyOwners } from './migrations/037_key_owners.ts';
import { recordActors } from './migrations/038_record_actors.ts';
import { compactDecisions } from './migrations/039_compact_decisions.ts';
import { jobProgress } from './migrations/021_job_progress.ts';

function initial(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('clients')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('deactivated_at', 'bigint')
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('owner_client_id', 'text', (c) => c.notNull().references('clients.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('last_used_at', 'bigint')
        .addColumn('deactivated_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('api_keys_owner_created')
        .on('api_keys')
        .columns(['owner_client_id', 'created_at'])
        .execute();
      await db.schema.createIndex('api_keys_created').on('api_keys').columns(['created_at', 'id']).execute();

      await db.schema
        .createTable('signing_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('private_jwk', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('retired_at', 'bigint')
        .execute();

      await db.schema
        .createTable('revocations')
        .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
          dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('events')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('entity_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('occurred_at', 'bigint', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('ingested_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_entity').on('events').columns(['entity_id', 'occurred_at']).execute();

      await db.schema
        .createTable('entities')
        .addColumn('entity_id', 'text', (c) => c.primaryKey())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .addColumn('first_seen_at', 'bigint', (c) => c.notNull())
        .addColumn('last_event_at', 'bigint', (c) => c.notNull())
        .addColumn('trades_completed', 'bigint', (c) => c.notNull())
        .addColumn('trades_cancelled', 'bigint', (c) => c.notNull())
        .addColumn('disputes_opened', 'bigint', (c) => c.notNull())
        .addColumn('disputes_won', 'bigint', (c) => c.notNull())
        .addColumn('disputes_lost', 'bigint', (c) => c.notNull())
        .addColumn('chargebacks', 'bigint', (c) => c.notNull())
        .addColumn('fraud_reports', 'bigint', (c) => c.notNull())
        .addColumn('blocklisted', 'integer', (c) => c.notNull())
        .addColumn('blocklist_changed_at', 'bigint', (c) => c.notNull())
        .addColumn('decay_at', 'bigint', (c) => c.notNull())
        .addColumn('d_trades_completed', 'double precision', (c) => c.notNull())
        .addColumn('d_trades_cancelled', 'double precision', (c) => c.notNull())
        .addColumn('d_disputes_lost', 'double precision', (c) => c.notNull())
        .addColumn('d_chargebacks', 'double precision', (c) => c.notNull())
        .addColumn('d_fraud_reports', 'double precision', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('entity_currency')
        .addColumn('entity_id', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('trades', 'bigint', (c) => c.notNull())
        .addColumn('volume', 'double precision', (c) => c.notNull())
        .addColumn('log_mean', 'double precision', (c) => c.notNull())
        .addColumn('log_m2', 'double precision', (c) => c.notNull())
        .addPrimaryKeyConstraint('entity_currency_pk', ['entity_id', 'currency'])
        .execute();

      await db.schema
        .createTable('entity_hourly')
        .addColumn('entity_id', 'text', (c) => c.notNull())
        .addColumn('bucket', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('trades', 'bigint', (c) => c.notNull())
        .addColumn('volume', 'double precision', (c) => c.notNull())
        .addPrimaryKeyConstraint('entity_hourly_pk', ['entity_id', 'bucket', 'currency'])
        .execute();

      await db.schema
        .createTable('entity_counterparties')
        .addColumn('entity_id', 'text', (c) => c.notNull())
        .addColumn('counterparty_id', 'text', (c) => c.notNull())
        .addColumn('trades', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('entity_counterparties_pk', ['entity_id', 'counterparty_id'])
        .execute();

      await db.schema
        .createTable('identifiers')
        .addColumn('id_type', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('entity_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('identifiers_pk', ['id_type', 'hash', 'entity_id'])
        .execute();
      await db.schema.createIndex('identifiers_entity').on('identifiers').columns(['entity_id']).execute();

      await db.schema
        .createTable('decisions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('principal_id', 'text', (c) => c.notNull())
        .addColumn('owner_client_id', 'text', (c) => c.notNull())
        .addColumn('subject_id', 'text', (c) => c.notNull())
        .addColumn('request_digest', 'text', (c) => c.notNull())
        .addColumn('result', 'text', (c) => c.notNull())
        .addColumn('policy_version', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}

/**
 * Every migration, in order. Names are fixed once released: Kysely runs the ones a store has not
 * seen yet, sorted by name. Feature modules own their migrations' contents; this list owns the order.
 */
export const MIGRATIONS: Record<string, (dialect: Dialect) => Migration> = {
  '001_initial': initial,
  '002_identifier_stats': identifierStats,
  '003_event_scope': eventScope,
  '004_key_rotation': keyRotation,
  '005_learning': learning,
  '006_p2p_features': p2pFeatures,
  '007_idempotency': idempotency,
  '008_webhooks': webhooks,
  '009_environments': environments,
  '010_webhook_isolation': webhookIsolation,
  '011_policy_jobs': policyJobs,
  '013_feature_set': featureSet,
  '014_principal_bound': principalBound,
  '015_network': network,
  '016_decision_request': decisionRequest,
  '018_network_scoring': networkScoring,
  '017_rings': rings,
  '019_loss_reasons': lossReasons,
  '020_network_incremental': networkIncremental,
  '023_fraudulent_losses': fraudulentLosses,
  '021_job_progress': jobProgress,
  '024_change_counter': changeCounter,
  '025_network_peer_limits': networkPeerLimits,
  '027_network_fairness': networkFairness,
  '028_policy_job_turns': policyJobTurns,
  '029_rules_reviews': rulesAndReviews,
  '030_list_entry_revisions': listEntryRevisions,
  '031_list_held': listHeld,
  '032_decision_claims': decisionClaims,
  '033_rule_test_leases': ruleTestLeases,
  '034_people': people,
  '035_totp': totp,
  '036_without_rowid': withoutRowid,
  '037_key_owners': keyOwners,
  '038_record_actors': recordActors,
  '039_compact_decisions': compactDecisions,
};

class CodeMigrations implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(Object.entries(MIGRATIONS).map(([name, make]) => [name, make(this.dialect)]));
  }
}

export async function migrate(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in any schema unless told which; several Vouch
  // schemas may share a PostgreSQL database, so pin it to the current one.
  const migrationTableSchema =
    dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db,
    provider: new CodeMigrations(dialect),
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
