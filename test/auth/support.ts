// Helpers shared by the auth, keys and http suites: forging JWTs with the store's own signing key
// (or a foreign one), and a second connection to a suite's store that plays "another process".
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT, decodeJwt, type CryptoKey, type JWK, type JWTPayload, type KeyObject } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { openStore, type Store } from '../../src/store/db.ts';
import { resolveKeyEncryption, unseal } from '../../src/auth/kek.ts';
import { loadConfig, type Config } from '../../src/config/env.ts';

/**
 * The current private signing key, as a server process would load it: unsealed with the KEK the
 * app resolves for this store and config (the stored row holds it encrypted).
 */
export async function currentSigningKey(store: Store, config: Pick<Config, 'secretKey' | 'secretKeyFile'>): Promise<{ kid: string; key: CryptoKey | KeyObject | Uint8Array; publicJwk: JWK }> {
  const row = await store.db.selectFrom('signing_keys').selectAll().where('retired_at', 'is', null).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
  const { jwk } = unseal(row.private_jwk, row.kid, resolveKeyEncryption(config, store));
  const key = (await importJWK(JSON.parse(jwk) as JWK, 'EdDSA')) as CryptoKey | KeyObject | Uint8Array;
  return { kid: row.kid, key, publicJwk: JSON.parse(row.public_jwk) as JWK };
}

export interface ForgeOptions {
  header?: Record<string, unknown>;
  claims?: JWTPayload & Record<string, unknown>;
}

/** A token with every RFC 9068 claim the service issues, each overridable. */
export async function signToken(key: CryptoKey | KeyObject | Uint8Array, kid: string, { header = {}, claims = {} }: ForgeOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    // The test apps' issuer: the default, the listen address as a URL.
    iss: loadConfig({}).issuer,
    aud: 'vouch-api',
    sub: 'admin-test',
    client_id: 'admin-test',
    iat: now,
    exp: now + 600,
    jti: randomUUID(),
    scope: 'keys:read keys:write',
    role: 'admin',
    ...claims,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid, ...header } as { alg: string }).sign(key);
}

export const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Replaces the payload of a compact JWS and keeps its header and signature. */
export function tamper(token: string, change: (claims: Record<string, unknown>) => void): string {
  const [header, , signature] = token.split('.');
  const claims = decodeJwt(token) as Record<string, unknown>;
  change(claims);
  return `${header}.${b64url(claims)}.${signature}`;
}

/** A URL for the same database and (PostgreSQL) schema, usable by the CLI. */
export function storeUrl(store: Store): string {
  if (store.sqlite) return `sqlite:${store.sqlite.name}`;
  const config = store.pgConfig!;
  const base = String(config.connectionString);
  if (!config.options) return base;
  return `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(config.options)}`;
}

/** Another connection to the suite's store, as another process (a CLI run, another instance) would have. */
export function secondStore(store: Store): Store {
  if (store.sqlite) return openStore(`sqlite:${store.sqlite.name}`);
  const options = store.pgConfig!.options ?? '';
  const schema = /search_path=(\S+)/.exec(options)?.[1];
  return openStore(String(store.pgConfig!.connectionString), { ...(schema ? { schema } : {}), poolSize: 2 });
}

/**
 * SQLite sees another connection's commit before the next request (PRAGMA data_version);
 * PostgreSQL delivers it by NOTIFY, which arrives a moment after the commit. Retries `attempt`
 * until it returns true, for at most `ms`.
 */
export async function eventually(attempt: () => Promise<boolean>, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await attempt()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function header(res: LightMyRequestResponse, name: string): string {
  const value = res.headers[name];
  return Array.isArray(value) ? value.join(', ') : String(value ?? '');
}
