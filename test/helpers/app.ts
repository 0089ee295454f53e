// Test harness: one app per suite on a fresh store, for every backend available. SQLite always;
// PostgreSQL when VOUCH_TEST_POSTGRES_URL is set (each suite in a database of its own, a copy of
// one migrated template: see test/helpers/pg-stores.ts).
import { randomBytes } from 'node:crypto';
import { copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, before, after } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config/env.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { buildApp, type AppOptions } from '../../src/app.ts';
import { ensureBootstrapAdmin } from '../../src/server.ts';
import { createClient } from '../../src/auth/clients.ts';
import type { Role } from '../../src/lib/principal.ts';
import { newPostgresHome } from './pg-stores.ts';

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
  if (backend === 'sqlite') {
    const path = join(tmpdir(), `vouch-test-${randomBytes(6).toString('hex')}.db`);
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
  // A database of its own, which the server copies from a template database migrated once
  // (test/helpers/pg-stores.ts): ≈ 0.1–0.3 s a store where migrating a schema took 0.4 s alone and
  // ≈ 2 s with four test processes at once. Replaying the template schema's DDL in one round trip
  // (the other candidate) still costs the server the DDL: 0.6–0.9 s, and a schema per store shares
  // its database's migrator view, advisory locks and NOTIFY channels with other suites. Without the
  // right to create databases, a schema of its own migrated from scratch, as before.
  const home = await newPostgresHome(true);
  const store = openStore(home.url, { ...(home.schema ? { schema: home.schema } : {}), poolSize: 5 });
  // Nothing to do on a copy of the template: run anyway, so a stale or broken template is noticed.
  await store.migrate();
  const sep = home.url.includes('?') ? '&' : '?';
  return {
    url: home.schema ? `${home.url}${sep}options=${encodeURIComponent(`-c search_path=${home.schema}`)}` : home.url,
    store,
    async drop() {
      await store.close();
      await home.drop();
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
    ...loadConfig({
      VOUCH_BOOTSTRAP_CLIENT_ID: ADMIN_ID,
      VOUCH_BOOTSTRAP_CLIENT_SECRET: ADMIN_SECRET,
      // The floor the setting accepts: the same code at a quarter of the default's work, since the
      // people tests sign in hundreds of times (test/people/password-cost.test.ts checks the default).
      VOUCH_PASSWORD_COST: '15',
    }),
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
