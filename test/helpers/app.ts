// Test harness: one app per suite on a fresh store, for every backend available. SQLite always;
// PostgreSQL when VOUCH_TEST_POSTGRES_URL is set (each suite in a schema of its own, in a database
// this test process has to itself: see postgresDatabase).
import { randomBytes } from 'node:crypto';
import { copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, before, after } from 'node:test';
import pg from 'pg';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config/env.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { buildApp, type AppOptions } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { createClient } from '../../src/auth/clients.ts';
import type { Role } from '../../src/lib/principal.ts';

export const ADMIN_ID = 'admin-test';
export const ADMIN_SECRET = 'admin-test-secret-0123456789';

export type Backend = 'sqlite' | 'postgres';

export function backends(): Backend[] {
  return process.env.VOUCH_TEST_POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

export interface TestStore {
  url: string;
  store: Store;
  drop(): Promise<void>;
}

/** Advisory-lock class of the database claims (two-key form, apart from any bigint key): 'vouc'. */
const DATABASE_CLAIM = 0x766f7563;
/** At most this many test processes on one server keep a database each; beyond, they share VOUCH_TEST_POSTGRES_URL. */
const DATABASE_SLOTS = 32;
/** The names freshStore and storeMigratedBefore give their schemas. */
const TEST_SCHEMA = /^[tm]_[0-9a-f]{12}$/;

let database: Promise<string> | undefined;

/**
 * The database this test process keeps its schemas in (a URL): one of a pool of databases next to
 * VOUCH_TEST_POSTGRES_URL's (`<name>_p1`, `<name>_p2`, …, made on first use and kept), claimed for
 * the life of the process by a session advisory lock in VOUCH_TEST_POSTGRES_URL's database. Test
 * files running at once then never share a database, and what PostgreSQL keeps per database does
 * not cross between them: Kysely's migrator reads the columns of every table in every schema of the
 * database (a schema another file drops meanwhile fails it: `relation "t_….entities" does not
 * exist`) and takes one database-wide migration lock; advisory locks and NOTIFY channels are
 * database-wide too. The claim ends with the process, however it ends (the session closes), and
 * the next claimant drops the schemas a killed process left. Without the right to create
 * databases, every process shares VOUCH_TEST_POSTGRES_URL, as before.
 */
export function postgresDatabase(): Promise<string> {
  database ??= claimDatabase(process.env.VOUCH_TEST_POSTGRES_URL!);
  return database;
}

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

async function claimDatabase(shared: string): Promise<string> {
  const claim = new pg.Client({ connectionString: shared });
  // The claim must not crash the process if the server drops the session.
  claim.on('error', () => {});
  try {
    await claim.connect();
    const { rows } = await claim.query<{ name: string }>('select current_database() as name');
    const prefix = rows[0]!.name;
    for (let slot = 1; slot <= DATABASE_SLOTS; slot++) {
      const lock = await claim.query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [
        DATABASE_CLAIM,
        slot,
      ]);
      if (!lock.rows[0]!.ok) continue;
      const name = `${prefix}_p${slot}`;
      const exists = await claim.query('select 1 from pg_database where datname = $1', [name]);
      if (exists.rowCount === 0) await claim.query(`create database "${name.replace(/"/g, '""')}"`);
      const url = databaseUrl(shared, name);
      await dropLeftovers(url);
      // Held open until the process ends, without keeping it from ending.
      (claim as pg.Client & { unref(): void }).unref(); // pg has it, its types do not
      return url;
    }
  } catch {
    // no right to create databases (or the pool is full): share the given one, as before
  }
  await claim.end().catch(() => {});
  return shared;
}

/** Schemas in a database just claimed were left by a process that ended without dropping them. */
async function dropLeftovers(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ nspname: string }>('select nspname from pg_namespace');
    for (const { nspname } of rows) if (TEST_SCHEMA.test(nspname)) await c.query(`drop schema ${nspname} cascade`);
  } finally {
    await c.end();
  }
}

let sqliteTemplate: Promise<string> | undefined;

/**
 * One SQLite file a process, migrated once and closed (its WAL folded in), that each fresh SQLite
 * store starts as a copy of: running the migrations cost ≈ 0.2 s of CPU a store, copying the file
 * a few ms. The store still runs `migrate()` on its copy, which finds nothing to do.
 */
function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const path = join(tmpdir(), `vouch-template-${process.pid}-${randomBytes(4).toString('hex')}.db`);
    const store = openStore(`sqlite:${path}`);
    await store.migrate();
    await store.close();
    process.once('exit', () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    });
    return path;
  })();
  return sqliteTemplate;
}

/** A fresh, migrated store on the given backend. */
export async function freshStore(backend: Backend): Promise<TestStore> {
  const tag = randomBytes(6).toString('hex');
  if (backend === 'sqlite') {
    const path = join(tmpdir(), `vouch-test-${tag}.db`);
    copyFileSync(await migratedSqliteTemplate(), path);
    const store = openStore(`sqlite:${path}`);
    await store.migrate();
    return {
      url: `sqlite:${path}`,
      store,
      async drop() {
        await store.close();
        for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
      },
    };
  }
  const base = await postgresDatabase();
  const schema = `t_${tag}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const store = openStore(base, { schema, poolSize: 5 });
  await store.migrate();
  const sep = base.includes('?') ? '&' : '?';
  return {
    url: `${base}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    store,
    async drop() {
      await store.close();
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    },
  };
}

export interface TestContext {
  backend: Backend;
  app: FastifyInstance;
  store: Store;
  config: Config;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** An access token for the bootstrap admin (all scopes), or for a client with the given scopes. */
  token(scopes?: string[], role?: Role): Promise<string>;
  /** Creates a client and returns its credentials. */
  client(scopes: string[], role?: Role): Promise<{ id: string; secret: string }>;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ VOUCH_BOOTSTRAP_CLIENT_ID: ADMIN_ID, VOUCH_BOOTSTRAP_CLIENT_SECRET: ADMIN_SECRET }),
    rateLimit: { perSecond: 100_000, burst: 200_000, tokenPerMinute: 100_000, tokenFailuresPerMinute: 100_000 },
    ...overrides,
  };
}

/** What a suite may hand the app besides the configuration (e.g. a fixed Decider for outcomes tests). */
export type AppExtras = Pick<AppOptions, 'decider' | 'webhookWorker'>;

export async function startApp(
  backend: Backend,
  overrides: Partial<Config> = {},
  extras: AppExtras = {},
): Promise<TestContext & { close(): Promise<void> }> {
  const fresh = await freshStore(backend);
  const config = testConfig(overrides);
  await ensureBootstrapAdmin(fresh.store, config);
  const app = await buildApp({ config, store: fresh.store, logger: false, ...extras });
  await app.ready();
  const tokenFor = async (id: string, secret: string, scope?: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: id, client_secret: secret, ...(scope ? { scope } : {}) },
    });
    if (res.statusCode !== 200) throw new Error(`token request failed: ${res.statusCode} ${res.body}`);
    return res.json().access_token as string;
  };
  const ctx = {
    backend,
    app,
    store: fresh.store,
    config,
    inject: (options: InjectOptions) => app.inject(options),
    async client(scopes: string[], role: Role = 'service') {
      const { client, secret } = await createClient(fresh.store.db, { name: 'test', role, scopes });
      return { id: client.client_id, secret };
    },
    async token(scopes?: string[], role: Role = 'service') {
      if (!scopes) return tokenFor(ADMIN_ID, ADMIN_SECRET);
      const c = await ctx.client(scopes, role);
      return tokenFor(c.id, c.secret);
    },
    async close() {
      await app.close();
      await fresh.drop();
    },
  };
  return ctx;
}

/**
 * Runs `body` once per backend with a fresh app shared by the suite's tests. The context is
 * read through the getter because it exists only once `before` has run.
 */
export function describeEachBackend(
  title: string,
  body: (ctx: () => TestContext, backend: Backend) => void,
  overrides: Partial<Config> = {},
  extras: AppExtras = {},
): void {
  for (const backend of backends()) {
    describe(`${title} [${backend}]`, () => {
      let ctx: (TestContext & { close(): Promise<void> }) | undefined;
      before(async () => {
        ctx = await startApp(backend, overrides, extras);
      });
      after(async () => {
        await ctx?.close();
      });
      // `backend` lets a suite declare a store-specific test only where it applies (never a skip).
      body(() => {
        if (!ctx) throw new Error('test context not ready');
        return ctx;
      }, backend);
    });
  }
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Asserts the RFC 9457 shape and returns the body. */
export function problem(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  if (res.statusCode !== status) throw new Error(`expected ${status} ${code}, got ${res.statusCode}: ${res.body}`);
  if (!String(res.headers['content-type']).startsWith('application/problem+json'))
    throw new Error(`not problem+json: ${res.headers['content-type']}`);
  const body = res.json() as Record<string, unknown>;
  if (
    body.code !== code ||
    body.status !== status ||
    typeof body.title !== 'string' ||
    typeof body.detail !== 'string' ||
    body.type !== `/problems/${code}` ||
    typeof body.request_id !== 'string'
  ) {
    throw new Error(`bad problem body: ${res.body}`);
  }
  if (res.headers['x-request-id'] !== body.request_id) throw new Error('X-Request-Id does not match request_id');
  return body;
}
