// Row types of the credentials' tables: clients, their API keys, the token signing keys and the
// revocations feed (store/change-feed.ts). Times are epoch milliseconds. Split out of schema.ts,
// which re-assembles them into the Database type.
import type { Generated } from 'kysely';

export interface ClientsTable {
  /** 'live' | 'test' (009_environments): the partition every query of this table names */
  environment: string;
  id: string;
  name: string;
  secret_hash: string;
  role: string;
  scopes: string;
  created_at: number;
  deactivated_at: number | null;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string;
  role: string;
  environment: string;
  owner_client_id: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  deactivated_at: number | null;
  /** set once by the one rotation that made this key's successor (004_key_rotation) */
  rotated_at: number | null;
  /** the principal id that created it (038_record_actors); null for keys made before */
  created_by: string | null;
}

export interface SigningKeysTable {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

export interface RevocationsTable {
  seq: Generated<number>;
  kind: string;
  subject: string;
  created_at: number;
}
