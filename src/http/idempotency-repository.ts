// The idempotency_keys table's reads and writes (docs/api.md, "Idempotency"; issue 41 item 1, one
// owner per table): idempotency.ts keeps the claim's protocol and idempotency-rows.ts the erasure's
// rewrite, and both call these. Each takes the executor: a Kysely instance or a transaction.
// A claim's row is addressed by the table's primary key (rowOf).
import type { ExpressionBuilder, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Environment } from '../lib/principal.ts';
import type { ClaimId } from './idempotency-seal.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type IdempotencyRow = Selectable<Database['idempotency_keys']>;

/** The row of one claim, as a where-clause (the table's primary key). */
function rowOf(id: ClaimId) {
  return [
    (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
      eb.and([
        eb('environment', '=', id.environment),
        eb('client_id', '=', id.clientId),
        eb('principal_id', '=', id.principalId),
        eb('idem_key', '=', id.key),
      ]),
  ] as const;
}

/** Deletes every claim past its expiry. The statement is sent before this returns its promise. */
export function deleteExpiredClaims(db: Db, now: number): Promise<unknown> {
  return db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
}

/** Inserts a pending claim; false when the key is already claimed. */
export async function insertPendingClaim(
  db: Db,
  { environment, clientId, principalId, key }: ClaimId,
  print: string,
  now: number,
  expiresAt: number,
): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      environment,
      client_id: clientId,
      principal_id: principalId,
      idem_key: key,
      fingerprint: print,
      state: 'pending',
      response: null,
      created_at: now,
      expires_at: expiresAt,
    })
    .onConflict((oc) => oc.columns(['environment', 'client_id', 'principal_id', 'idem_key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function deletePendingClaim(db: Db, id: ClaimId): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where(...rowOf(id))
    .where('state', '=', 'pending')
    .execute();
}

export async function claimRow(db: Db, id: ClaimId): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where(...rowOf(id))
    .executeTakeFirst();
}

/** Deletes the claim if it has expired by `now` (one still valid is left alone). */
export async function deleteClaimIfExpired(db: Db, id: ClaimId, now: number): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where(...rowOf(id))
    .where('expires_at', '<=', now)
    .execute();
}

/** Settles a claim still pending with its (sealed) response. */
export async function settlePendingClaim(db: Db, id: ClaimId, response: string): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', response })
    .where(...rowOf(id))
    .where('state', '=', 'pending')
    .execute();
}

/** Takes over a stale pending claim made at `createdAt`; false when someone else changed it first. */
export async function takeOverPendingClaim(db: Db, id: ClaimId, createdAt: number, now: number): Promise<boolean> {
  const taken = await db
    .updateTable('idempotency_keys')
    .set({ created_at: now })
    .where(...rowOf(id))
    .where('state', '=', 'pending')
    .where('created_at', '=', createdAt)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) > 0;
}

/** Stores a claim's (sealed) response, whatever its state. */
export async function storeClaimResponse(db: Db, id: ClaimId, response: string): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', response })
    .where(...rowOf(id))
    .execute();
}

/** Where a page of stored responses starts: after this key, in (client, principal, key) order. */
export interface StoredResponseCursor {
  client_id: string;
  principal_id: string;
  idem_key: string;
}

/** One page of an environment's settled claims, in key order, after `after` when given. */
export async function storedResponsePage(
  db: Db,
  environment: Environment,
  after: StoredResponseCursor | undefined,
  limit: number,
): Promise<(StoredResponseCursor & { response: string | null })[]> {
  let q = db
    .selectFrom('idempotency_keys')
    .select(['client_id', 'principal_id', 'idem_key', 'response'])
    .where('environment', '=', environment)
    .where('state', '=', 'done')
    .orderBy('client_id')
    .orderBy('principal_id')
    .orderBy('idem_key')
    .limit(limit);
  if (after) {
    const a = after;
    q = q.where((eb) =>
      eb.or([
        eb('client_id', '>', a.client_id),
        eb.and([eb('client_id', '=', a.client_id), eb('principal_id', '>', a.principal_id)]),
        eb.and([
          eb('client_id', '=', a.client_id),
          eb('principal_id', '=', a.principal_id),
          eb('idem_key', '>', a.idem_key),
        ]),
      ]),
    );
  }
  return q.execute();
}

/** Replaces a claim's stored (sealed) response. */
export async function replaceClaimResponse(db: Db, id: ClaimId, response: string): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ response })
    .where(...rowOf(id))
    .execute();
}
