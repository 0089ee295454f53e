// What a change hands its audit entry to (docs/api.md, "Audit log"): an Auditor knows the store,
// the environment and who acts, so a repository that changes something only says what changed,
// inside its own transaction. Made per request from the principal, or for the CLI.
import { userInfo } from 'node:os';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import { actorOf, type Actor, type Environment, type Principal } from '../lib/principal.ts';
import { rawIdentifierInText } from '../lib/identifiers.ts';
import { appendAudit } from './repository.ts';
import { knownActors } from './actors.ts';

/** What one change says about itself; before/after name the changed fields (no secrets, no raw identifiers). */
export interface AuditNote {
  /** e.g. "rule.updated", "key.created", "change.approved" */
  action: string;
  /** what was changed: "rule:rul_…", "key:key_…", "list:blocked-emails" */
  target: string;
  before?: unknown;
  after?: unknown;
}

/**
 * Appends the note to the audit log: inside `db` when it is a transaction (the change and its
 * entry commit together), else in a transaction of its own.
 */
export type Auditor = (db: Kysely<Database>, note: AuditNote) => Promise<void>;

type ActorSource = Actor | ((trx: Transaction<Database>) => Promise<Actor>);

export function auditorFor(store: Pick<Store, 'dialect'>, environment: Environment, who: ActorSource): Auditor {
  const write = async (trx: Transaction<Database>, note: AuditNote) => {
    const actor = typeof who === 'function' ? await who(trx) : who;
    await appendAudit(store, trx, { environment, actor, ...note });
  };
  return async (db, note) => {
    if (db.isTransaction) await write(db as Transaction<Database>, note);
    else await db.transaction().execute((trx) => write(trx, note));
  };
}

/**
 * The actor a principal acts as, named: a person carries their name; a machine's is its client's
 * or key's name, read from the store (a name is what a reader of the log recognises, the id is
 * what they filter on).
 */
export async function namedActor(db: Kysely<Database>, principal: Principal): Promise<Actor> {
  const actor = actorOf(principal);
  if (principal.name !== undefined || principal.kind === 'user') return actor;
  // An id no table holds (a deleted client) keeps the principal's own description.
  const found = (await knownActors(db, [principal.id])).get(principal.id);
  return found ? { ...actor, name: found.name } : actor;
}

/** The auditor of a request's principal, in its environment; the name is read once, when first needed. */
export function principalAuditor(store: Pick<Store, 'dialect'>, principal: Principal): Auditor {
  let named: Actor | undefined;
  return auditorFor(store, principal.environment, async (trx) => (named ??= await namedActor(trx, principal)));
}

/**
 * Free text (a reason, a note, a description) as the log may keep it: the log is never edited, so
 * a text that looks like a raw phone number, e-mail, IBAN or card is withheld rather than kept for good.
 */
export function loggableText(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return rawIdentifierInText(text) ? '(withheld: looks like a raw identifier)' : text;
}

/**
 * Who acts from the command line (docs/api.md, "Audit log"): the host's operator, as a client
 * named `cli`; the operating-system account is added to the name when there is one.
 */
export function cliActor(): Actor {
  let account = '';
  try {
    account = userInfo().username;
  } catch {
    // a container user without a passwd entry: the name alone
  }
  return { type: 'client', id: 'cli', name: account ? `vouch cli (${account})` : 'vouch cli' };
}
