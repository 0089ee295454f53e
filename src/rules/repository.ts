// Rules in the store (docs/api.md, "Rules and lists"). `rules` holds each rule's current version and
// `rule_versions` every version as saved, with who saved it, when and why. Every change of a rule
// or a list runs in one transaction that first moves the environment's rule_revisions counter —
// which also serialises the environment's rule and list changes (the row's write lock), so a list
// cannot be deleted while a rule naming it is saved — then writes the change, a `rules` row on
// the change feed (every process reloads before its next request: revisions.ts, live.ts) and the
// webhook.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, RulesTable, RuleVersionsTable } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { enqueueWebhookEvent } from '../webhooks/repository.ts';
import { newId } from '../lib/ids.ts';
import { Conflict, NotFound } from '../lib/domain-errors.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import { listsNamed, type ListKinds, type RuleBody } from './compile.ts';
import { listKinds } from './list-repository.ts';
import type { RuleStatus } from './schemas.ts';
import { ruleChange, type Db } from './revisions.ts';
import { RULE_LIMITS } from './cel-env.ts';
import type { Auditor } from '../audit-log/auditor.ts';
import { ruleChanged, ruleCreated } from './audit-notes.ts';
import { parseBody, patchedBody, storedBody, type RulePatch } from './rule-body.ts';

export type RuleRow = Selectable<RulesTable>;
export type RuleVersionRow = Selectable<RuleVersionsTable>;

export class RuleConflictError extends Conflict {}

/** A stored rule's current version and body, for POST /rules/{id}/test (test-routes.ts). */
export function ruleToTest(db: Db, environment: Environment, id: string) {
  return db
    .selectFrom('rules')
    .select(['id', 'version', 'body'])
    .where('environment', '=', environment)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function getRule(db: Db, environment: Environment, id: string): Promise<RuleRow | undefined> {
  return db
    .selectFrom('rules')
    .selectAll()
    .where('environment', '=', environment)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Newest first; the cursor is the last rule's id (ids sort by creation time). */
export async function listRules(
  db: Db,
  environment: Environment,
  options: { status?: RuleStatus; limit: number; after?: string },
): Promise<Page<RuleRow>> {
  let q = db.selectFrom('rules').selectAll().where('environment', '=', environment);
  if (options.status) q = q.where('status', '=', options.status);
  if (options.after) q = q.where('id', '<', options.after);
  return pageOf(
    await q
      .orderBy('id', 'desc')
      .limit(options.limit + 1)
      .execute(),
    options.limit,
  );
}

export function listVersions(db: Db, environment: Environment, id: string): Promise<RuleVersionRow[]> {
  return db
    .selectFrom('rule_versions')
    .selectAll()
    .where('environment', '=', environment)
    .where('rule_id', '=', id)
    .orderBy('version', 'desc')
    .execute();
}

/** The rules a score evaluates: active and shadow, of one environment. */
export function liveRules(db: Db, environment: Environment): Promise<RuleRow[]> {
  return db
    .selectFrom('rules')
    .selectAll()
    .where('environment', '=', environment)
    .where('status', 'in', ['active', 'shadow'])
    .orderBy('id')
    .execute();
}

export const isLive = (status: string): boolean => status === 'active' || status === 'shadow';

/**
 * Every score evaluates every active and shadow rule, so an environment holds at most
 * RULE_LIMITS.maxLiveRules of them (docs/rules.md, "Limits"). Runs inside the change's transaction,
 * which holds the environment's revision lock, so two concurrent activations cannot both pass.
 */
async function checkLiveRuleRoom(trx: Db, environment: Environment): Promise<void> {
  const row = await trx
    .selectFrom('rules')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('environment', '=', environment)
    .where('status', 'in', ['active', 'shadow'])
    .executeTakeFirst();
  if (Number(row?.n ?? 0) >= RULE_LIMITS.maxLiveRules) {
    throw new RuleConflictError(
      `the environment already has ${RULE_LIMITS.maxLiveRules} active and shadow rules, the most it may have; set one to draft or retire it first`,
    );
  }
}

/** The active and shadow rules whose condition (or cap) names the list: they keep it from being deleted. */
export async function rulesNamingList(
  db: Db,
  environment: Environment,
  name: string,
): Promise<Array<{ id: string; name: string; status: string }>> {
  const rows = await liveRules(db, environment);
  return rows
    .filter((r) => {
      const body = parseBody(r);
      return (
        listsNamed(body.condition).includes(name) ||
        (typeof body.cap === 'string' && listsNamed(body.cap).includes(name))
      );
    })
    .map((r) => ({ id: r.id, name: parseBody(r).name, status: r.status }));
}

export interface Change {
  environment: Environment;
  by: string;
  now: number;
  reason?: string | null;
  /** the change's audit log entry goes through it, in the change's transaction */
  audit?: Auditor;
  /** an approved four-eyes change: the version it was asked for, else it conflicts (docs/api.md, "Four eyes") */
  expectVersion?: number;
}

async function writeVersion(trx: Transaction<Database>, row: RuleRow, reason: string | null): Promise<void> {
  await trx
    .insertInto('rule_versions')
    .values({
      rule_id: row.id,
      version: row.version,
      environment: row.environment,
      status: row.status,
      body: row.body,
      changed_at: row.updated_at,
      changed_by: row.updated_by,
      reason,
    })
    .execute();
}

async function announceWebhook(
  trx: Transaction<Database>,
  row: RuleRow,
  change: 'created' | 'updated' | 'retired',
  previousStatus: string | null,
  reason: string | null,
): Promise<void> {
  const body = parseBody(row);
  // The environment's rules are shared by its clients: every subscriber of the type hears (owner null).
  await enqueueWebhookEvent(
    trx,
    row.environment as Environment,
    'rule.changed',
    {
      rule_id: row.id,
      name: body.name,
      version: row.version,
      status: row.status,
      previous_status: previousStatus,
      change,
      action: body.action ?? null,
      changed_by: row.updated_by,
      changed_at: new Date(Number(row.updated_at)).toISOString(),
      reason,
    },
    { now: Number(row.updated_at) },
  );
}

/** `check` throws when the body does not check against the environment's lists (read in the same transaction). */
export type BodyCheck = (body: RuleBody, lists: ListKinds) => void;

export async function createRule(
  db: Kysely<Database>,
  feed: Pick<ChangeFeed, 'record'>,
  c: Change,
  body: RuleBody,
  status: RuleStatus,
  check: BodyCheck,
): Promise<RuleRow> {
  return ruleChange(db, feed, c.environment, async (trx) => {
    check(body, await listKinds(trx, c.environment));
    if (isLive(status)) await checkLiveRuleRoom(trx, c.environment);
    const row: RuleRow = {
      id: newId('rul'),
      environment: c.environment,
      name: body.name,
      version: 1,
      status,
      body: JSON.stringify(storedBody(body)),
      created_at: c.now,
      created_by: c.by,
      updated_at: c.now,
      updated_by: c.by,
    };
    await trx.insertInto('rules').values(row).execute();
    await writeVersion(trx, row, c.reason ?? null);
    await announceWebhook(trx, row, 'created', null, c.reason ?? null);
    await c.audit?.(trx, ruleCreated(row, c.reason ?? null));
    return row;
  });
}

/**
 * A new version: the fields given replace the current ones (null clears action, cap or
 * description). A retired rule is final (RuleConflictError); `retire` makes one.
 */
export async function updateRule(
  db: Kysely<Database>,
  feed: Pick<ChangeFeed, 'record'>,
  c: Change,
  id: string,
  patch: RulePatch,
  check: BodyCheck | null,
): Promise<RuleRow> {
  return ruleChange(db, feed, c.environment, async (trx) => {
    const current = await getRule(trx, c.environment, id);
    if (!current) throw new NotFound('No such rule in this environment.', { message: `no rule ${id}` });
    if (current.status === 'retired')
      throw new RuleConflictError(`rule ${id} is retired; a retired rule cannot change (create a new one)`);
    if (c.expectVersion !== undefined && current.version !== c.expectVersion)
      throw new RuleConflictError(
        `rule ${id} has changed since this change was asked for (version ${c.expectVersion}, now ${current.version})`,
      );
    const { status, ...fields } = patch;
    const body = patchedBody(current, fields);
    if (check) check(body, await listKinds(trx, c.environment));
    if (status !== undefined && isLive(status) && !isLive(current.status)) await checkLiveRuleRoom(trx, c.environment);
    const row: RuleRow = {
      ...current,
      name: body.name,
      version: current.version + 1,
      status: status ?? current.status,
      body: JSON.stringify(body),
      updated_at: c.now,
      updated_by: c.by,
    };
    await trx
      .updateTable('rules')
      .set({
        name: row.name,
        version: row.version,
        status: row.status,
        body: row.body,
        updated_at: row.updated_at,
        updated_by: row.updated_by,
      })
      .where('id', '=', id)
      .execute();
    await writeVersion(trx, row, c.reason ?? null);
    await announceWebhook(trx, row, status === 'retired' ? 'retired' : 'updated', current.status, c.reason ?? null);
    await c.audit?.(trx, ruleChanged(current, row, c.reason ?? null));
    return row;
  });
}

export function retireRule(
  db: Kysely<Database>,
  feed: Pick<ChangeFeed, 'record'>,
  c: Change,
  id: string,
): Promise<RuleRow> {
  return updateRule(db, feed, c, id, { status: 'retired' }, null);
}
