// Helpers shared by the auth, keys and http suites: forging JWTs with the store's own signing key
// (or a foreign one), a second connection to a suite's store that plays "another process", and a server
// listening with a new user's configuration for the OAuth clients.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { TestContext } from 'node:test';
import { importJWK, SignJWT, decodeJwt, type CryptoKey, type JWK, type JWTPayload, type KeyObject } from 'jose';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { openStore, type Store } from '../../src/store/db.ts';
import { resolveKeyEncryption, unseal } from '../../src/auth/kek.ts';
import { loadConfig, type Config } from '../../src/config/env.ts';
import { buildApp } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { freshStore, ADMIN_ID, ADMIN_SECRET, type Backend } from '../helpers/app.ts';

/**
 * The current private signing key, as a server process would load it: unsealed with the KEK the
 * app resolves for this store and config (the stored row holds it encrypted).
 */
export async function currentSigningKey(
  store: Store,
  config: Pick<Config, 'secretKey' | 'secretKeyFile'>,
): Promise<{ kid: string; key: CryptoKey | KeyObject | Uint8Array; publicJwk: JWK }> {
  const row = await store.db
    .selectFrom('signing_keys')
    .selectAll()
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  const { jwk } = unseal(row.private_jwk, row.kid, resolveKeyEncryption(config, store));
  const key = (await importJWK(JSON.parse(jwk) as JWK, 'EdDSA')) as CryptoKey | KeyObject | Uint8Array;
  return { kid: row.kid, key, publicJwk: JSON.parse(row.public_jwk) as JWK };
}

export interface ForgeOptions {
  header?: Record<string, unknown>;
  claims?: JWTPayload & Record<string, unknown>;
}

/** A token with every RFC 9068 claim the service issues, each overridable. */
export async function signToken(
  key: CryptoKey | KeyObject | Uint8Array,
  kid: string,
  { header = {}, claims = {} }: ForgeOptions = {},
): Promise<string> {
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
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid, ...header } as { alg: string })
    .sign(key);
}

export const b64url = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

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

/** A port nothing listens on now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A server listening with the configuration a new user gets (no VOUCH_ISSUER, no VOUCH_PUBLIC_URL)
 * on a free port, with the bootstrap admin; closed and its store dropped after the test.
 */
export async function listeningWithDefaults(
  t: TestContext,
  backend: Backend,
): Promise<{ app: FastifyInstance; config: Config; port: number }> {
  const port = await freePort();
  const config = {
    ...loadConfig({
      PORT: String(port),
      VOUCH_BOOTSTRAP_CLIENT_ID: ADMIN_ID,
      VOUCH_BOOTSTRAP_CLIENT_SECRET: ADMIN_SECRET,
    }),
    rateLimit: { perSecond: 1000, burst: 1000, tokenPerMinute: 1000, tokenFailuresPerMinute: 1000 },
  };
  const fresh = await freshStore(backend);
  await ensureBootstrapAdmin(fresh.store, config);
  const app = await buildApp({ config, store: fresh.store, logger: false });
  t.after(async () => {
    await app.close();
    await fresh.drop();
  });
  await app.listen({ port, host: config.host });
  return { app, config, port };
}
