// The signing_keys table's reads and writes (issue 41 item 1, one owner per table): signing-keys.ts
// keeps sealing, rotation and the key ring and calls these, as does the start-up in server.ts.
// Each takes the executor: a Kysely instance or a transaction.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

export type SigningKeyRow = Database['signing_keys'];

export async function insertSigningKey(db: Kysely<Database>, row: SigningKeyRow): Promise<void> {
  await db.insertInto('signing_keys').values(row).execute();
}

/** Retires every key not yet retired (the current one). */
export async function retireCurrentSigningKeys(db: Kysely<Database>, now: number): Promise<void> {
  await db.updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null).execute();
}

/** The current key's kid, if there is one. */
export async function currentSigningKid(db: Kysely<Database>): Promise<{ kid: string } | undefined> {
  return db.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).executeTakeFirst();
}

export async function sealedPrivateKeys(db: Kysely<Database>): Promise<{ private_jwk: string }[]> {
  return db.selectFrom('signing_keys').select('private_jwk').execute();
}

export async function sealedPrivateKeysByKid(db: Kysely<Database>): Promise<{ kid: string; private_jwk: string }[]> {
  return db.selectFrom('signing_keys').select(['kid', 'private_jwk']).execute();
}

/**
 * Replaces a key's sealed private key only if it is still `previous` (another process may have
 * resealed it meanwhile); returns the number of rows changed, 0 or 1.
 */
export async function resealPrivateKey(
  db: Kysely<Database>,
  kid: string,
  previous: string,
  sealed: string,
): Promise<bigint> {
  const result = await db
    .updateTable('signing_keys')
    .set({ private_jwk: sealed })
    .where('kid', '=', kid)
    .where('private_jwk', '=', previous)
    .executeTakeFirst();
  return result.numUpdatedRows;
}

/** Every key, oldest first. */
export async function signingKeyRows(db: Kysely<Database>): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'asc').execute();
}
