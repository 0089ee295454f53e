// OAuth clients: created by the CLI (or the bootstrap admin), authenticated by the token endpoint.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { generateSecret, safeEqualHex, sha256Hex } from '../lib/digest.ts';
import { parseScopes, type Environment, type Role } from '../lib/principal.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { silentLog, type AuthLog } from './events.ts';
import {
  clientDeactivatedAt,
  clientRow,
  clientRows,
  deactivatedClientIdRows,
  insertClient,
  markClientDeactivated,
  type ClientRow,
} from './client-repository.ts';

export interface ClientRecord {
  client_id: string;
  name: string;
  role: Role;
  scopes: string[];
  status: 'active' | 'inactive';
  /** the data its tokens read and write (docs/api.md, "Integration" test mode); fixed at creation */
  environment: Environment;
  created_at: string;
  deactivated_at: string | null;
}

type Row = ClientRow;

/** Every client id: generated `cli_…` ids and bootstrap ids (VOUCH_BOOTSTRAP_CLIENT_ID) alike. */
const CLIENT_ID = /^[A-Za-z0-9_.-]{1,128}$/;

function toRecord(row: Row): ClientRecord {
  return {
    client_id: row.id,
    name: row.name,
    role: row.role as Role,
    scopes: parseScopes(row.scopes),
    status: row.deactivated_at === null ? 'active' : 'inactive',
    environment: row.environment === 'test' ? 'test' : 'live',
    created_at: new Date(row.created_at).toISOString(),
    deactivated_at: row.deactivated_at === null ? null : new Date(row.deactivated_at).toISOString(),
  };
}

export interface NewClient {
  id?: string;
  name: string;
  role: Role;
  scopes: string[];
  secret?: string;
  environment?: Environment;
}

export async function createClient(
  db: Kysely<Database>,
  input: NewClient,
  log: AuthLog = silentLog,
): Promise<{ client: ClientRecord; secret: string }> {
  const secret = input.secret ?? generateSecret();
  const row: Row = {
    id: input.id ?? `cli_${generateSecret().slice(0, 22)}`,
    name: input.name,
    secret_hash: sha256Hex(secret),
    role: input.role,
    scopes: [...new Set(input.scopes)].join(' '),
    environment: input.environment ?? 'live',
    created_at: Date.now(),
    deactivated_at: null,
  };
  await insertClient(db, row);
  log.info(
    { event: 'client_created', client_id: row.id, role: row.role, scopes: row.scopes, environment: row.environment },
    'client created',
  );
  return { client: toRecord(row), secret };
}

export async function findClient(db: Kysely<Database>, id: string): Promise<ClientRecord | undefined> {
  if (!CLIENT_ID.test(id)) return undefined;
  const row = await clientRow(db, id);
  return row && toRecord(row);
}

export async function listClients(db: Kysely<Database>): Promise<ClientRecord[]> {
  const rows = await clientRows(db);
  return rows.map(toRecord);
}

export type ClientCheck =
  { client: ClientRecord } | { client?: undefined; failure: 'unknown_client' | 'wrong_secret' | 'deactivated_client' };

/** Checks a secret in constant time; an unknown id still pays for a hash so timing reveals nothing. */
export async function checkClient(db: Kysely<Database>, id: string, secret: string): Promise<ClientCheck> {
  // Ids are [A-Za-z0-9_.-]; anything else cannot exist (and a NUL byte would make PostgreSQL fail).
  const row = CLIENT_ID.test(id) ? await clientRow(db, id) : undefined;
  const presented = sha256Hex(secret);
  const ok = safeEqualHex(presented, row?.secret_hash ?? sha256Hex(`absent:${secret}`));
  if (!row) return { failure: 'unknown_client' };
  if (!ok) return { failure: 'wrong_secret' };
  if (row.deactivated_at !== null) return { failure: 'deactivated_client' };
  return { client: toRecord(row) };
}

export async function deactivateClient(
  db: Kysely<Database>,
  feed: ChangeFeed,
  id: string,
  log: AuthLog = silentLog,
  /** runs in the deactivation's transaction when it changes the client (its audit entry) */
  onDeactivated?: (trx: Kysely<Database>, client: ClientRecord) => Promise<void>,
): Promise<ClientRecord | undefined> {
  if (!CLIENT_ID.test(id)) return undefined;
  const now = Date.now();
  let changed = false;
  const updated = await db.transaction().execute(async (trx) => {
    const row = await clientRow(trx, id);
    if (!row) return undefined;
    if (row.deactivated_at !== null) return row;
    await markClientDeactivated(trx, id, now);
    await feed.record(trx, 'client', id);
    changed = true;
    const updated = { ...row, deactivated_at: now };
    await onDeactivated?.(trx, toRecord(updated));
    return updated;
  });
  if (updated) {
    await feed.announce('client', id);
    // Only the call that deactivated it logs (a repeat within the same millisecond must not).
    if (changed) log.info({ event: 'client_deactivated', client_id: id }, 'client deactivated');
  }
  return updated && toRecord(updated);
}

/** Whether a token's subject is a client that exists and is active (tokens.ts caches the answer). */
export async function isClientActive(db: Kysely<Database>, id: string): Promise<boolean> {
  if (!CLIENT_ID.test(id)) return false;
  const row = await clientDeactivatedAt(db, id);
  return row !== undefined && row.deactivated_at === null;
}

export async function deactivatedClientIds(db: Kysely<Database>): Promise<string[]> {
  const rows = await deactivatedClientIdRows(db);
  return rows.map((r) => r.id);
}
