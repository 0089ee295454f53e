// Policy versions in the store (docs/api.md, "Policies"). Exactly one is `active` and at most one `shadow`
// (partial unique indexes hold that even against concurrent writers); every change of either is
// written with a `policy` row in the change feed, in the same transaction, so every process
// reloads before its next request (src/policies/live.ts).
import { enqueueWebhookEvent } from '../webhooks/repository.ts';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_POLICY, type Policy } from '../model/policy.ts';
import { validatePolicy } from '../model/policy-document.ts';
import type { Database, PoliciesTable } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import { advisoryXactLock } from '../store/locks.ts';
import { recordChange } from '../store/change-feed.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import { Conflict, NotFound } from '../lib/domain-errors.ts';
import { ENVIRONMENTS, type Environment } from '../lib/principal.ts';
import type { Auditor } from '../audit-log/auditor.ts';
import { auditedActorId } from '../audit-log/repository.ts';
import { namePolicies, namePolicy, type PolicyActors } from './policy-actors.ts';

type PolicyStatus = 'active' | 'shadow' | 'candidate' | 'retired';
type PolicySource = 'builtin' | 'file' | 'upload' | 'fit' | 'derived';
/** A stored version; a read that answers it names its actors (policy-actors.ts). */
export type PolicyRow = Selectable<PoliciesTable> & PolicyActors;

type Db = Kysely<Database> | Transaction<Database>;

/** The feed's kind for policy changes (store/change-feed.ts). */
export const POLICY_FEED_KIND = 'policy';

export class PolicyConflictError extends Conflict {}
/** No such policy version; the message names it (the command line shows it), the detail does not. */
export class PolicyNotFoundError extends NotFound {
  constructor(message: string) {
    super('No such policy version.', { message });
  }
}

export function parseDocument(row: Pick<PolicyRow, 'document'>): Policy {
  return JSON.parse(row.document) as Policy;
}

export async function loadLivePolicies(
  db: Db,
  environment: Environment,
): Promise<{ active?: Policy; shadow?: Policy }> {
  const rows = await db
    .selectFrom('policies')
    .select(['status', 'document'])
    .where('environment', '=', environment)
    .where('status', 'in', ['active', 'shadow'])
    .execute();
  const active = rows.find((r) => r.status === 'active');
  const shadow = rows.find((r) => r.status === 'shadow');
  return { ...(active ? { active: parseDocument(active) } : {}), ...(shadow ? { shadow: parseDocument(shadow) } : {}) };
}

export function getPolicy(db: Db, environment: Environment, version: string): Promise<PolicyRow | undefined> {
  return db
    .selectFrom('policies')
    .selectAll()
    .where('environment', '=', environment)
    .where('version', '=', version)
    .executeTakeFirst();
}

export function activeRow(db: Db, environment: Environment): Promise<PolicyRow | undefined> {
  return db
    .selectFrom('policies')
    .selectAll()
    .where('environment', '=', environment)
    .where('status', '=', 'active')
    .executeTakeFirst();
}

/** The environment's fitted candidates whose parent is `parent` (fit-candidates.ts). */
export function fitCandidatesOf(db: Db, environment: Environment, parent: string) {
  return db
    .selectFrom('policies')
    .selectAll()
    .where('environment', '=', environment)
    .where('source', '=', 'fit')
    .where('status', '=', 'candidate')
    .where('parent_version', '=', parent)
    .execute();
}

export async function listPolicies(
  db: Db,
  environment: Environment,
  limit: number,
  after?: { at: number; version: string },
): Promise<Page<PolicyRow>> {
  let q = db.selectFrom('policies').selectAll().where('environment', '=', environment);
  if (after)
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '<', after.at),
        eb.and([eb('created_at', '=', after.at), eb('version', '<', after.version)]),
      ]),
    );
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('version', 'desc')
    .limit(limit + 1)
    .execute();
  return pageOf(await namePolicies(db, rows), limit);
}

export interface NewPolicy {
  policy: Policy;
  source: PolicySource;
  parentVersion?: string | null;
  createdBy?: string | null;
  report?: unknown;
  status?: PolicyStatus;
}

/** Inserts a candidate; PolicyConflictError when the version exists in that environment. */
export async function insertPolicy(db: Db, environment: Environment, p: NewPolicy): Promise<PolicyRow> {
  const row: PolicyRow = {
    environment,
    version: p.policy.version,
    status: p.status ?? 'candidate',
    source: p.source,
    parent_version: p.parentVersion ?? null,
    created_at: Date.now(),
    created_by: p.createdBy ?? null,
    activated_by: null,
    document: JSON.stringify(p.policy),
    report: p.report === undefined ? null : JSON.stringify(p.report),
  };
  const inserted = await db
    .insertInto('policies')
    .values(row)
    .onConflict((oc) => oc.columns(['environment', 'version']).doNothing())
    .returning('version')
    .execute();
  if (inserted.length === 0) throw new PolicyConflictError(`policy version ${p.policy.version} already exists`);
  return namePolicy(db, { ...row });
}

/** On the change feed in the change's transaction: every process reloads its policies (live.ts). */
function recordPolicyChange(
  trx: Transaction<Database>,
  store: Store,
  environment: Environment,
  version: string,
): Promise<void> {
  return recordChange(trx, POLICY_FEED_KIND, `${environment}:${version}`, store);
}

/**
 * Makes `version` the active policy; the previous one is retired. Returns the new row. In `within`
 * when given (an approved four-eyes change runs in its approval's transaction), else in its own.
 */
export async function activatePolicy(
  store: Store,
  environment: Environment,
  version: string,
  audit?: Auditor,
  within?: Transaction<Database>,
): Promise<PolicyRow> {
  const run = async (trx: Transaction<Database>): Promise<PolicyRow> => {
    await advisoryXactLock(store, trx, POLICY_LOCK);
    const row = await getPolicy(trx, environment, version);
    if (!row) throw new PolicyNotFoundError(`no policy version ${version}`);
    if (row.status === 'active') return namePolicy(trx, row);
    const previous = await activeRow(trx, environment);
    const inEnvironment = trx.updateTable('policies').where('environment', '=', environment);
    await inEnvironment.set({ status: 'retired' }).where('status', '=', 'active').execute();
    await inEnvironment.set({ status: 'active' }).where('version', '=', version).execute();
    await recordPolicyChange(trx, store, environment, version);
    // Announced in the same transaction (the outbox), to every subscriber of that environment (docs/api.md,
    // "Integration").
    await enqueueWebhookEvent(trx, environment, 'policy.activated', {
      version,
      previous_version: previous?.version ?? null,
      source: row.source,
      activated_at: new Date().toISOString(),
    });
    await audit?.(trx, policyNote('policy.activated', version, 'active', previous?.version ?? null, version));
    // Who activated it is who its entry names (a start-up activation writes none: null).
    const by = audit ? ((await auditedActorId(trx, 'policy.activated', `policy:${version}`)) ?? null) : null;
    await inEnvironment.set({ activated_by: by }).where('version', '=', version).execute();
    return namePolicy(trx, { ...row, status: 'active', activated_by: by });
  };
  return within ? run(within) : store.db.transaction().execute(run);
}

/** A policy status change as the audit log keeps it: which version held the status before and after. */
const policyNote = (action: string, version: string, status: string, before: string | null, after: string | null) => ({
  action,
  target: `policy:${version}`,
  before: { [status]: before },
  after: { [status]: after },
});

/** Makes `version` the shadow policy (the previous shadow goes back to candidate). */
export async function shadowPolicy(
  store: Store,
  environment: Environment,
  version: string,
  audit?: Auditor,
): Promise<PolicyRow> {
  return store.db.transaction().execute(async (trx) => {
    await advisoryXactLock(store, trx, POLICY_LOCK);
    const row = await getPolicy(trx, environment, version);
    if (!row) throw new PolicyNotFoundError(`no policy version ${version}`);
    if (row.status === 'active')
      throw new PolicyConflictError(`policy ${version} is the active policy; it cannot also be the shadow`);
    if (row.status === 'shadow') return namePolicy(trx, row);
    const previous = await shadowVersion(trx, environment);
    const inEnvironment = trx.updateTable('policies').where('environment', '=', environment);
    await inEnvironment.set({ status: 'candidate' }).where('status', '=', 'shadow').execute();
    await inEnvironment.set({ status: 'shadow' }).where('version', '=', version).execute();
    await recordPolicyChange(trx, store, environment, version);
    await audit?.(trx, policyNote('policy.shadowed', version, 'shadow', previous ?? null, version));
    return namePolicy(trx, { ...row, status: 'shadow' });
  });
}

async function shadowVersion(trx: Db, environment: Environment): Promise<string | undefined> {
  const row = await trx
    .selectFrom('policies')
    .select('version')
    .where('environment', '=', environment)
    .where('status', '=', 'shadow')
    .executeTakeFirst();
  return row?.version;
}

/** Ends shadow mode; returns the version that was the shadow, if any. */
export async function clearShadow(
  store: Store,
  environment: Environment,
  audit?: Auditor,
): Promise<string | undefined> {
  return store.db.transaction().execute(async (trx) => {
    await advisoryXactLock(store, trx, POLICY_LOCK);
    const version = await shadowVersion(trx, environment);
    if (version === undefined) return undefined;
    await trx
      .updateTable('policies')
      .set({ status: 'candidate' })
      .where('environment', '=', environment)
      .where('version', '=', version)
      .execute();
    await recordPolicyChange(trx, store, environment, version);
    await audit?.(trx, policyNote('policy.shadow_cleared', version, 'shadow', version, null));
    return version;
  });
}

/** Serializes policy status changes where writers run side by side (PostgreSQL; store/locks.ts): "vpol". */
const POLICY_LOCK = 0x76706f6c;

/**
 * At start (docs/api.md, "Policies"), in each environment: the built-in policy is stored once; a configured
 * policy (VOUCH_POLICY_FILE) is stored when its version is new and then activated. A restart with
 * the same file does not undo an activation made through the API since; a file with a new version
 * does. With no active policy at all (a fresh store), the configured or built-in one is activated.
 * Test mode starts from what live starts from, then goes its own way.
 */
export async function ensurePolicies(store: Store, configured?: Policy): Promise<void> {
  for (const environment of ENVIRONMENTS) await ensureEnvironmentPolicies(store, environment, configured);
}

async function ensureEnvironmentPolicies(store: Store, environment: Environment, configured?: Policy): Promise<void> {
  const fromFile = configured !== undefined && !isDeepStrictEqual(configured, DEFAULT_POLICY);
  let activate: string | undefined;
  await store.db.transaction().execute(async (trx) => {
    await advisoryXactLock(store, trx, POLICY_LOCK);
    if (fromFile) {
      const existing = await getPolicy(trx, environment, configured.version);
      if (!existing) {
        await insertPolicy(trx, environment, {
          policy: validatePolicy(configured, 'policy file'),
          source: 'file',
          createdBy: 'VOUCH_POLICY_FILE',
        });
        activate = configured.version;
      }
    }
    if (!(await getPolicy(trx, environment, DEFAULT_POLICY.version))) {
      await insertPolicy(trx, environment, { policy: DEFAULT_POLICY, source: 'builtin' });
    }
    if (!activate && !(await activeRow(trx, environment)))
      activate = fromFile ? configured.version : DEFAULT_POLICY.version;
  });
  if (activate) await activatePolicy(store, environment, activate);
}
