// Lists in the store (docs/api.md, "Rules and lists"). A list is typed by kind; its entries keep who
// added them, when, why and until when, and an entry is never deleted: removal sets removed_at, so
// a rule test reads each list as it was at each decision's time (replay-lists.ts). A deleted list
// keeps its entries for the same reason (deleted_at), and its name can be taken again. Every change
// moves the environment's rule_revisions and records a `rules` feed row in its transaction
// (revisions.ts ruleChange), so every instance applies it from its next request. The statements
// are list-repository.ts's.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import { recordChange, type ChangeFeed } from '../store/change-feed.ts';
import { Conflict, Invalid, NotFound, RAW_IDENTIFIER_DETAIL, type FieldError } from '../lib/domain-errors.ts';
import { enqueueWebhookEvent } from '../webhooks/repository.ts';
import { chunks } from '../store/chunks.ts';
import { newId } from '../lib/ids.ts';
import { HIDDEN_CHARACTERS_MESSAGE, hasHiddenCharacters } from '../lib/plain-text.ts';
import { isCountryCode } from '../model/currency.ts';
import { PAYMENT_METHODS } from '../model/types.ts';
import { hashedIdErrors, rawIdentifierErrors } from '../model/identifier-schemas.ts';
import { rulesNamingList } from './repository.ts';
import { ruleChange, RULES_FEED_KIND, type Db } from './revisions.ts';
import { bumpRevision } from './rule-revision-repository.ts';
import type { ListKind } from './schemas.ts';
import {
  endEntries,
  entriesAddedSince,
  getList,
  insertEntries,
  insertList,
  markListDeleted,
  moveHeld,
  removePresentEntry,
  unremovedEntries,
  type ListRow,
} from './list-repository.ts';
import { charsOf, LIST_BOUND, overBound, type ListBound } from './list-bound.ts';
import type { Auditor } from '../audit-log/auditor.ts';
import { entriesAdded, entryRemoved, listCreated, listDeleted } from './audit-notes.ts';

/** No such list, or no such present entry on it; the message names which (the command line shows it). */
export class ListNotFoundError extends NotFound {
  constructor(message: string) {
    const detail = message.startsWith('no list') ? 'No such list in this environment.' : 'No such entry on this list.';
    super(detail, { message });
  }
}
/** The list's state forbids the change; `rules`, the rules that name it, are the problem's extension. */
export class ListConflictError extends Conflict {
  constructor(
    message: string,
    readonly rules: ReadonlyArray<{ id: string; name: string; status: string }> = [],
  ) {
    super(message, rules.length > 0 ? { extensions: { rules } } : {});
  }
}
/** Values a list of its kind cannot hold: raw identifiers (400 raw_identifier_rejected) or malformed values. */
export class ListValueError extends Invalid {
  constructor(
    readonly raw: FieldError[],
    readonly invalid: FieldError[],
  ) {
    const [raws, first] = [raw.length > 0, invalid[0]];
    super(
      raws ? RAW_IDENTIFIER_DETAIL : `The values do not fit the list's kind: ${first?.field} ${first?.message}`,
      raws ? raw : invalid,
      raws ? 'raw_identifier_rejected' : 'validation_failed',
      [...raw, ...invalid].map((e) => `${e.field} ${e.message}`).join('; '),
    );
  }
}

interface ValueOptions {
  /** VOUCH_REQUIRE_HASHED_IDS: entity and identifier values must be digests, as entity ids must */
  requireHashedIds?: boolean;
}

/**
 * The values as the list stores them (countries upper-cased), or ListValueError. Entity and
 * identifier values follow the raw-identifier refusal of scoring: a list is matched against
 * entity ids and identifier hashes, which are never raw phone numbers, e-mails, IBANs or cards.
 */
export function normaliseValues(kind: ListKind, values: readonly string[], options: ValueOptions = {}): string[] {
  const out = kind === 'country' ? values.map((v) => v.toUpperCase()) : [...values];
  const raw: FieldError[] = [];
  const invalid: FieldError[] = [];
  if (kind === 'entity' || kind === 'identifier') {
    const holder = {};
    const fields = out.map((v, i): [string, string, object] => [`values.${i}`, v, holder]);
    raw.push(...rawIdentifierErrors(fields));
    invalid.push(...hashedIdErrors(fields, options));
  }
  out.forEach((v, i) => {
    if (hasHiddenCharacters(v)) invalid.push({ field: `values.${i}`, message: HIDDEN_CHARACTERS_MESSAGE });
    else if (kind === 'country' && !isCountryCode(v))
      invalid.push({ field: `values.${i}`, message: 'is not an assigned ISO 3166-1 alpha-2 country code' });
    else if (kind === 'payment_method' && !(PAYMENT_METHODS as readonly string[]).includes(v))
      invalid.push({ field: `values.${i}`, message: `must be one of ${PAYMENT_METHODS.join(', ')}` });
  });
  if (raw.length > 0 || invalid.length > 0) throw new ListValueError(raw.slice(0, 50), invalid.slice(0, 50));
  return out;
}

interface Change {
  environment: Environment;
  by: string;
  now: number;
  /** the change's audit log entry goes through it, in the change's transaction */
  audit?: Auditor;
}

type ListChange = 'created' | 'deleted' | 'entries_added' | 'entry_removed';

/** list.changed: counts, never the values (an entity list holds entity ids). */
function listChanged(
  trx: Db,
  environment: Environment,
  list: Pick<ListRow, 'name' | 'kind'>,
  change: ListChange,
  by: string,
  now: number,
  extra: Record<string, unknown> = {},
) {
  return enqueueWebhookEvent(
    trx,
    environment,
    'list.changed',
    { list: list.name, kind: list.kind, change, ...extra, changed_by: by, changed_at: new Date(now).toISOString() },
    { now },
  );
}

export async function createList(
  db: Kysely<Database>,
  feed: Pick<ChangeFeed, 'record'>,
  c: Change,
  input: { name: string; kind: ListKind; description?: string },
): Promise<ListRow> {
  return ruleChange(db, feed, c.environment, async (trx) => {
    if (await getList(trx, c.environment, input.name)) throw new ListConflictError(`a list named ${input.name} exists`);
    const row: ListRow = {
      id: newId('lst'),
      environment: c.environment,
      name: input.name,
      kind: input.kind,
      description: input.description ?? null,
      created_at: c.now,
      created_by: c.by,
      deleted_at: null,
      held_entries: 0,
      held_chars: 0,
    };
    await insertList(trx, row);
    await listChanged(trx, c.environment, row, 'created', c.by, c.now);
    await c.audit?.(trx, listCreated(row));
    return row;
  });
}

/** Deletes the list (its entries stay, for rule tests); ListConflictError while an active or shadow rule names it. */
export async function deleteList(
  db: Kysely<Database>,
  feed: Pick<ChangeFeed, 'record'>,
  c: Change,
  name: string,
): Promise<ListRow> {
  return ruleChange(db, feed, c.environment, async (trx) => {
    const row = await getList(trx, c.environment, name);
    if (!row) throw new ListNotFoundError(`no list ${name}`);
    const naming = await rulesNamingList(trx, c.environment, name);
    if (naming.length > 0)
      throw new ListConflictError(
        `list ${name} is named by ${naming.length} active or shadow rule(s): ${naming.map((r) => r.name).join(', ')}`,
        naming,
      );
    await markListDeleted(trx, row.id, c.now);
    await listChanged(trx, c.environment, row, 'deleted', c.by, c.now);
    await c.audit?.(trx, listDeleted(row));
    return { ...row, deleted_at: c.now };
  });
}

interface AddOptions extends ValueOptions {
  reason?: string | null;
  /** ms */
  expiresAt?: number | null;
  /** a reason and expiry of each value's own, by the value as stored (a file's lines); else the two above */
  entries?: ReadonlyMap<string, { reason: string | null; expiresAt: number | null }>;
  /** records the feed row through it (with PostgreSQL's NOTIFY); else the row is written directly */
  feed?: Pick<ChangeFeed, 'record'>;
  /** the environment's bound (tests lower it); LIST_BOUND */
  bound?: ListBound;
  /** the addition's audit log entry (counts, never values) goes through it */
  audit?: Auditor;
}

/**
 * Adds values to a list of the environment (docs/api.md, "Rules and lists"): a value already present
 * counts as already_present and keeps its entry; one whose entry expired gets a new entry. Moves
 * rule_revisions and writes the `rules` feed row in the transaction it is given (or its own);
 * the caller announces on the feed after commit. Throws ListNotFoundError, ListValueError, or
 * ListConflictError beyond LIST_BOUND (the whole call then changes nothing).
 */
export async function addListEntries(
  db: Kysely<Database> | Transaction<Database>,
  environment: Environment,
  listName: string,
  values: readonly string[],
  by: string,
  options: AddOptions,
  now: number,
): Promise<{ added: number; already_present: number }> {
  if (!db.isTransaction)
    return db.transaction().execute((trx) => addListEntries(trx, environment, listName, values, by, options, now));
  const trx = db;
  const revision = await bumpRevision(trx, environment);
  const list = await getList(trx, environment, listName);
  if (!list) throw new ListNotFoundError(`no list ${listName}`);
  const wanted = [...new Set(normaliseValues(list.kind as ListKind, values, options))];
  const present = new Map<string, number | null>();
  for (const part of chunks(wanted)) {
    const rows = await unremovedEntries(trx, list.id, part);
    for (const r of rows) present.set(r.value, r.expires_at === null ? null : Number(r.expires_at));
  }
  const expired = [...present].filter(([, exp]) => exp !== null && exp <= now).map(([v]) => v);
  // An expired entry ends at its expiry (replay reads the earlier of removal and expiry); the new one starts now.
  for (const part of chunks(expired)) await endEntries(trx, list.id, part, by, revision, now);
  const renewed = new Set(expired);
  const fresh = wanted.filter((v) => !present.has(v) || renewed.has(v));
  // An entry of the value removed in this very millisecond holds (list, value, now): the new one
  // starts a millisecond later.
  const taken = new Map<string, number>();
  for (const part of chunks(fresh)) {
    const rows = await entriesAddedSince(trx, list.id, part, now);
    for (const r of rows) taken.set(r.value, Number(r.at) + 1);
  }
  const rows = fresh.map((value) => ({
    list_id: list.id,
    value,
    added_at: taken.get(value) ?? now,
    added_by: by,
    reason: (options.entries?.get(value) ?? options).reason ?? null,
    expires_at: (options.entries?.get(value) ?? options).expiresAt ?? null,
    removed_at: null,
    removed_by: null,
    changed_revision: revision,
  }));
  for (const part of chunks(rows, 100)) await insertEntries(trx, part);
  await moveHeld(trx, list.id, rows.length - expired.length, charsOf(fresh) - charsOf(expired));
  const bound = options.bound ?? LIST_BOUND;
  if (rows.length > 0 && (await overBound(trx, environment, now, bound))) {
    throw new ListConflictError(
      `the lists of this environment would hold more than ${bound.entries.toLocaleString('en')} present entries ` +
        `or ${bound.chars.toLocaleString('en')} characters of values; remove some first`,
    );
  }
  const result = { added: rows.length, already_present: wanted.length - rows.length };
  await listChanged(trx, environment, list, 'entries_added', by, now, result);
  await options.audit?.(trx, entriesAdded(list, result.added, result.already_present));
  if (options.feed) await options.feed.record(trx, RULES_FEED_KIND, environment);
  // Without the feed object (a caller outside the app): the row alone; processes poll for it before each request.
  else await recordChange(trx, RULES_FEED_KIND, environment);
  return result;
}

/** Marks the value's present entry removed; ListNotFoundError when the list or a present entry is missing. */
export async function removeListEntry(
  db: Kysely<Database>,
  feed: Pick<ChangeFeed, 'record'>,
  c: Change,
  listName: string,
  value: string,
): Promise<void> {
  await ruleChange(db, feed, c.environment, async (trx, revision) => {
    const list = await getList(trx, c.environment, listName);
    if (!list) throw new ListNotFoundError(`no list ${listName}`);
    const stored = list.kind === 'country' ? value.toUpperCase() : value;
    const done = await removePresentEntry(trx, list.id, stored, c.by, revision, c.now);
    if (done === 0) throw new ListNotFoundError(`${value} is not on list ${listName}`);
    await moveHeld(trx, list.id, -1, -stored.length);
    await listChanged(trx, c.environment, list, 'entry_removed', c.by, c.now, { removed: 1 });
    await c.audit?.(trx, entryRemoved(list));
  });
}
