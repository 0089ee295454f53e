// The audit log's table (migration 034_people): appended to, never updated or deleted by Vouch.
// Appends are serialised (PostgreSQL: an advisory lock; SQLite has one writer), so each entry
// follows the last one and the chain (chain.ts) has one order.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import { advisoryXactLock } from '../store/locks.ts';
import { newId } from '../lib/ids.ts';
import type { Actor, Environment } from '../lib/principal.ts';
import { entryHash, GENESIS } from './chain.ts';

/** What a change says about itself; before/after are the changed fields (no secrets, no raw identifiers). */
export interface AuditEvent {
  environment: Environment;
  actor: Actor;
  /** e.g. "user.login", "user.login_failed", "user.invited", "user.role_changed", "policy.activated" */
  action: string;
  /** what was changed: "user:usr_…", "policy:v7", "rule:rul_…" */
  target?: string | null;
  before?: unknown;
  after?: unknown;
  at?: number;
}

const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));

/** Appends one entry inside `trx` (the caller's transaction, so the change and its entry commit together). */
export async function appendAudit(
  store: Pick<Store, 'dialect'>,
  trx: Transaction<Database>,
  event: AuditEvent,
): Promise<{ id: string; seq: number; hash: string }> {
  await advisoryXactLock(store, trx, 'vouch:audit_log');
  const last = await trx
    .selectFrom('audit_log')
    .select(['seq', 'hash'])
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  const entry = {
    seq: last ? Number(last.seq) + 1 : 1,
    id: newId('aud'),
    environment: event.environment,
    at: event.at ?? Date.now(),
    actor: JSON.stringify({ type: event.actor.type, id: event.actor.id, name: event.actor.name }),
    action: event.action,
    target: event.target ?? null,
    before: json(event.before),
    after: json(event.after),
  };
  const prevHash = last ? last.hash : GENESIS;
  const hash = entryHash(prevHash, entry);
  await trx
    .insertInto('audit_log')
    .values({ ...entry, actor_id: event.actor.id, prev_hash: prevHash, hash })
    .execute();
  return { id: entry.id, seq: entry.seq, hash };
}

/** Appends one entry in a transaction of its own (a change already committed, or none: a failed login). */
export async function recordAudit(store: Store, event: AuditEvent): Promise<void> {
  await store.db.transaction().execute((trx) => appendAudit(store, trx, event));
}

/** Entries from `afterSeq` on, in order: the chain's walk (and the list, filtered). */
export function auditPage(db: Kysely<Database>, afterSeq: number, limit: number) {
  return db.selectFrom('audit_log').selectAll().where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
}

/** The filters of the audit-log page (docs/api.md, "Audit log"); `action` is one action or "kind.*". */
export interface AuditFilter {
  environment: Environment;
  actor?: string;
  action?: string;
  from?: number;
  to?: number;
  /** the last seq of the page before */
  beforeSeq?: number;
}

/** One page of an environment's entries, newest first: `limit` + 1 rows, the extra one telling there is more. */
export function auditEntries(db: Kysely<Database>, filter: AuditFilter, limit: number) {
  const { environment, actor, action, from, to, beforeSeq } = filter;
  let q = db
    .selectFrom('audit_log')
    .selectAll()
    .where('environment', '=', environment)
    .orderBy('seq', 'desc')
    .limit(limit + 1);
  if (actor !== undefined) q = q.where('actor_id', '=', actor);
  // A kind's actions as a range of the text ("rule." up to "rule/"): LIKE would read "_" as a wildcard.
  if (action?.endsWith('.*')) {
    const prefix = action.slice(0, -1);
    q = q.where('action', '>=', prefix).where('action', '<', `${prefix.slice(0, -1)}/`);
  } else if (action !== undefined) q = q.where('action', '=', action);
  if (from !== undefined) q = q.where('at', '>=', from);
  if (to !== undefined) q = q.where('at', '<', to);
  if (beforeSeq !== undefined) q = q.where('seq', '<', beforeSeq);
  return q.execute();
}

/**
 * The principal id the newest entry of `action` on `target` names: read back inside the change's
 * own transaction right after its entry is written, it is who made the change, whichever way it
 * came (a request, an approval on behalf of its requester, the command line), so a record keeps the
 * same actor its audit entry does. Undefined when the change wrote no entry.
 */
export async function auditedActorId(
  db: Kysely<Database>,
  action: string,
  target: string,
): Promise<string | undefined> {
  const entry = await db
    .selectFrom('audit_log')
    .select('actor_id')
    .where('action', '=', action)
    .where('target', '=', target)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return entry?.actor_id;
}
