// API key records in the store. Only the SHA-256 of a key is kept; the key itself exists once,
// in the creation response.
import type { Kysely } from 'kysely';
import { Conflict } from '../lib/domain-errors.ts';
import type { Database } from '../store/schema.ts';
import { announceKeyDeactivated } from '../webhooks/events.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { parseScopes, type Role } from '../lib/principal.ts';
import { apiKeyPrefix, generateApiKey, type ApiKeyEnv } from './format.ts';
import { sha256Hex } from '../lib/digest.ts';
import { newId } from '../lib/ids.ts';
import { pageOf, type Page } from '../lib/pagination.ts';
import type { Auditor } from '../audit-log/auditor.ts';
import { actorIn, type Actors } from '../audit-log/actors.ts';
import type { Actor } from '../lib/principal.ts';

export type KeyRow = Database['api_keys'];
export const KEY_STATUSES = ['active', 'expired', 'inactive'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

export interface KeyRecord {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  role: Role;
  environment: ApiKeyEnv;
  status: KeyStatus;
  owner_client_id: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  deactivated_at: string | null;
  /** who created it, named as now (docs/api.md, "Audit log", "Who"); null for keys made before 2026-11-29 */
  created_by: Actor | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function keyStatus(row: Pick<KeyRow, 'deactivated_at' | 'expires_at'>, now = Date.now()): KeyStatus {
  if (row.deactivated_at !== null) return 'inactive';
  if (row.expires_at !== null && row.expires_at <= now) return 'expired';
  return 'active';
}

/** The key as answered; `actors` names its creator (resolveActors over the page's `created_by`). */
export function toKeyRecord(row: KeyRow, lastUsed: number | undefined, actors: Actors): KeyRecord {
  const used = Math.max(row.last_used_at ?? 0, lastUsed ?? 0);
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: parseScopes(row.scopes),
    role: row.role as Role,
    environment: row.environment as ApiKeyEnv,
    status: keyStatus(row),
    owner_client_id: row.owner_client_id,
    created_at: iso(row.created_at)!,
    expires_at: iso(row.expires_at),
    last_used_at: used === 0 ? null : iso(used),
    deactivated_at: iso(row.deactivated_at),
    created_by: actorIn(actors, row.created_by),
  };
}

export interface NewKey {
  ownerClientId: string;
  name: string;
  scopes: string[];
  role: Role;
  environment: ApiKeyEnv;
  expiresAt: number | null;
  /** the principal id creating it (a rotation: the rotator's) */
  createdBy: string | null;
}

/**
 * Each key has its own rate limit, so the number a client holds is capped (docs/operations.md, "Limits per client").
 * A rotation replaces a key rather than adding one: keys in their grace period after a rotation
 * are not counted against the cap, so a client at the cap can still rotate every key it has; they
 * have a cap of their own, so chains of quick rotations cannot pile up live keys either.
 */
export const MAX_ACTIVE_KEYS_PER_CLIENT = 100;

/**
 * Refuses a key the owner has no room for. The first statement writes (to the owner's client
 * rows, changing nothing), so that concurrent creations for one owner queue behind each other:
 * PostgreSQL locks those rows, SQLite takes its write lock before reading.
 */
async function ensureRoom(trx: Kysely<Database>, owner: string, rotation: boolean): Promise<void> {
  await trx
    .updateTable('clients')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', owner)
    .execute();
  const now = Date.now();
  const { n } = await trx
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner_client_id', '=', owner)
    .where('deactivated_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where('rotated_at', rotation ? 'is not' : 'is', null)
    .executeTakeFirstOrThrow();
  // A rotation has already marked its key as rotated, so that key is among those counted.
  if (rotation ? Number(n) > MAX_ACTIVE_KEYS_PER_CLIENT : Number(n) >= MAX_ACTIVE_KEYS_PER_CLIENT) {
    throw new Conflict(
      rotation
        ? `This client already has ${MAX_ACTIVE_KEYS_PER_CLIENT} rotated keys in their grace period; deactivate some of them or wait for them to expire, then rotate again.`
        : `This client already has ${MAX_ACTIVE_KEYS_PER_CLIENT} active API keys, the most it may hold; deactivate one first.`,
    );
  }
}

export async function insertKey(
  db: Kysely<Database>,
  input: NewKey,
  { rotation = false }: { rotation?: boolean } = {},
): Promise<{ row: KeyRow; key: string }> {
  if (!db.isTransaction) return db.transaction().execute((trx) => insertKey(trx, input, { rotation }));
  await ensureRoom(db, input.ownerClientId, rotation);
  const key = generateApiKey(input.environment);
  const row: KeyRow = {
    id: newId('key'),
    name: input.name,
    prefix: apiKeyPrefix(key),
    key_hash: sha256Hex(key),
    scopes: [...new Set(input.scopes)].join(' '),
    role: input.role,
    environment: input.environment,
    owner_client_id: input.ownerClientId,
    created_at: Date.now(),
    expires_at: input.expiresAt,
    last_used_at: null,
    deactivated_at: null,
    rotated_at: null,
    created_by: input.createdBy,
  };
  await db.insertInto('api_keys').values(row).execute();
  return { row, key };
}

/** `owner` undefined means the caller is an admin and sees every key. */
export async function findKey(
  db: Kysely<Database>,
  id: string,
  owner: string | undefined,
): Promise<KeyRow | undefined> {
  let query = db.selectFrom('api_keys').selectAll().where('id', '=', id);
  if (owner !== undefined) query = query.where('owner_client_id', '=', owner);
  return query.executeTakeFirst();
}

/**
 * Claims a live key for rotation (rotated_at is null): true when this call set it. A conditional
 * write, so of concurrent rotations exactly one claims the key (rotation.ts).
 */
export async function claimKeyRotation(
  db: Kysely<Database>,
  id: string,
  owner: string | undefined,
  now: number,
): Promise<boolean> {
  let claim = db
    .updateTable('api_keys')
    .set({ rotated_at: now })
    .where('id', '=', id)
    .where('rotated_at', 'is', null)
    .where('deactivated_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  if (owner !== undefined) claim = claim.where('owner_client_id', '=', owner);
  return Number((await claim.executeTakeFirst()).numUpdatedRows) === 1;
}

export async function setKeyExpiry(db: Kysely<Database>, id: string, expiresAt: number | null): Promise<void> {
  await db.updateTable('api_keys').set({ expires_at: expiresAt }).where('id', '=', id).execute();
}

export async function findKeyByHash(db: Kysely<Database>, hash: string): Promise<KeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
}

export interface ListOptions {
  owner: string | undefined;
  status: KeyStatus | undefined;
  /** undefined: keys of both environments */
  environment?: ApiKeyEnv | undefined;
  limit: number;
  /** the id of the last key of the previous page; ULIDs sort by creation time */
  after: string | undefined;
}

export async function listKeys(db: Kysely<Database>, options: ListOptions): Promise<Page<KeyRow>> {
  const now = Date.now();
  let query = db
    .selectFrom('api_keys')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(options.limit + 1);
  if (options.owner !== undefined) query = query.where('owner_client_id', '=', options.owner);
  if (options.after !== undefined) query = query.where('id', '<', options.after);
  if (options.environment !== undefined) query = query.where('environment', '=', options.environment);
  if (options.status === 'inactive') query = query.where('deactivated_at', 'is not', null);
  if (options.status === 'expired') query = query.where('deactivated_at', 'is', null).where('expires_at', '<=', now);
  if (options.status === 'active') {
    query = query
      .where('deactivated_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  }
  return pageOf(await query.execute(), options.limit);
}

export type DeactivateOutcome =
  | { kind: 'not_found' }
  | { kind: 'forbidden'; detail: string }
  | { kind: 'deactivated'; row: KeyRow; changed: boolean };

/** A reason the caller may not act on this key, or undefined when it may. */
export type Refusal = (row: KeyRow) => string | undefined;

export async function deactivateKey(
  db: Kysely<Database>,
  feed: ChangeFeed,
  id: string,
  owner: string | undefined,
  refuse: Refusal = () => undefined,
  /** the principal deactivating it, named in the key.deactivated webhook */
  by = '',
  audit?: Auditor,
): Promise<DeactivateOutcome> {
  const now = Date.now();
  const outcome = await db.transaction().execute(async (trx): Promise<DeactivateOutcome> => {
    let query = trx.selectFrom('api_keys').selectAll().where('id', '=', id);
    if (owner !== undefined) query = query.where('owner_client_id', '=', owner);
    const row = await query.executeTakeFirst();
    if (!row) return { kind: 'not_found' };
    const refusal = refuse(row);
    if (refusal !== undefined) return { kind: 'forbidden', detail: refusal };
    if (row.deactivated_at !== null) return { kind: 'deactivated', row, changed: false };
    await trx.updateTable('api_keys').set({ deactivated_at: now }).where('id', '=', id).execute();
    await feed.record(trx, 'key', id);
    await announceKeyDeactivated(trx, row, now, by);
    await audit?.(trx, {
      action: 'key.deactivated',
      target: `key:${id}`,
      before: { status: keyStatus(row, now) },
      after: { status: 'inactive' },
    });
    return { kind: 'deactivated', row: { ...row, deactivated_at: now }, changed: true };
  });
  if (outcome.kind === 'deactivated' && outcome.changed) await feed.announce('key', id);
  return outcome;
}

export async function recordKeyUsage(db: Kysely<Database>, usage: Map<string, number>): Promise<void> {
  if (usage.size === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const [id, at] of usage) {
      await trx
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
        .execute();
    }
  });
}

/** The names of the API keys among `ids` (at most a chunk of them: store/chunks.ts). */
export function keyNamesIn(db: Kysely<Database>, ids: readonly string[]) {
  return db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', ids).execute();
}
