// PostgreSQL test databases: each fresh store is a database of its own, copied by the server from
// one template database migrated once (docs/decisions.md, "The test pyramid"). Running the
// migrations cost a store ≈ 266 statements of server-side DDL (≈ 0.4 s alone, 1–2.5 s with four
// test processes at once); `create database … template …` copies the template's files in one
// statement. A database per store also isolates more than a schema per store did: Kysely's
// migrator reads the tables of every schema of its database (a schema another suite dropped
// meanwhile failed it), and advisory locks and NOTIFY channels are database-wide.
//
// Names, next to VOUCH_TEST_POSTGRES_URL's database `<name>`:
//   <name>_tpl_<hash>        the template, migrated once; <hash> covers the migrations' sources
//   <name>_p<slot>_<random>  a store of the process holding slot <slot>
// A process claims a slot for its life by a session advisory lock; the next claimant of a slot
// drops the databases a process holding it left (killed before its stores' teardown).
// Without the right to create databases, every store is a schema of its own in the given database,
// migrated from scratch, as before.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import pg from 'pg';
import { openStore } from '../../src/store/db.ts';
import { REPO_ROOT } from './repo-root.ts';

/** Advisory-lock class of the test databases (two-key form, apart from any bigint key): 'vouc'. */
const LOCK_CLASS = 0x766f7563;
/** Key, in LOCK_CLASS, of building a template; slots are 1…DATABASE_SLOTS. */
const TEMPLATE_BUILD = 0;
/** At most this many test processes on one server hold a slot; beyond, they use schemas. */
const DATABASE_SLOTS = 32;
/** Databases dropped together: concurrent drops share the checkpoint each one waits for. */
const DROP_BATCH = 4;
/** Bump to rebuild every template when how it is built changes. */
const TEMPLATE_FORMAT = '1';

/** A database (or, without CREATEDB, a schema) of a store's own. */
export interface PostgresHome {
  /** The database's URL (without a search_path: `schema` says which, when not public). */
  url: string;
  schema?: string;
  drop(): Promise<void>;
}

interface Claim {
  /** VOUCH_TEST_POSTGRES_URL, where the databases are created from and the locks are held. */
  shared: string;
  /** `<name>_p<slot>`, the prefix of this process's databases; undefined when it cannot create any. */
  prefix?: string;
  /** `<name>_tpl_`, the prefix of templates. */
  templates: string;
  /** Creates databases and schemas. */
  admin: pg.Pool;
  /** Drops databases, in the background (see dropLater): a create never queues behind a drop. */
  dropper: pg.Pool;
}

let claimed: Promise<Claim> | undefined;
let template: Promise<string> | undefined;

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

/** A new database, a copy of the migrated template (`migrated`) or empty; or a new schema. */
export async function newPostgresHome(migrated: boolean): Promise<PostgresHome> {
  const claim = await (claimed ??= claimSlot(process.env.VOUCH_TEST_POSTGRES_URL!));
  const tag = randomBytes(6).toString('hex');
  if (!claim.prefix) {
    const schema = `${migrated ? 't' : 'm'}_${tag}`;
    await claim.admin.query(`create schema ${schema}`);
    return { url: claim.shared, schema, drop: () => claim.admin.query(`drop schema ${schema} cascade`).then(() => {}) };
  }
  const name = `${claim.prefix}_${tag}`;
  if (migrated) await copyTemplate(claim, name);
  else await claim.admin.query(`create database ${quoted(name)}`);
  return {
    url: databaseUrl(claim.shared, name),
    async drop() {
      dropLater(claim, name);
    },
  };
}

async function copyTemplate(claim: Claim, name: string): Promise<void> {
  try {
    await claim.admin.query(`create database ${quoted(name)} template ${quoted(await (template ??= built(claim)))}`);
  } catch (error) {
    // Another checkout's migrations may have replaced the template meanwhile: build it again, once.
    if ((error as { code?: string }).code !== '3D000') throw error;
    template = built(claim);
    await claim.admin.query(`create database ${quoted(name)} template ${quoted(await template)}`);
  }
}

async function claimSlot(shared: string): Promise<Claim> {
  const pool = (max: number) => {
    const p = new pg.Pool({ connectionString: shared, max, idleTimeoutMillis: 5000, allowExitOnIdle: true });
    p.on('error', () => {});
    return p;
  };
  const admin = pool(2);
  const dropper = pool(DROP_BATCH);
  const lock = new pg.Client({ connectionString: shared });
  // The claim must not crash the process if the server drops the session.
  lock.on('error', () => {});
  await lock.connect();
  const { rows } = await lock.query<{ name: string; create: boolean }>(
    `select current_database() as name,
            (select rolcreatedb or rolsuper from pg_roles where rolname = current_user) as create`,
  );
  const { name, create } = rows[0]!;
  const templates = `${name}_tpl_`;
  for (let slot = 1; create && slot <= DATABASE_SLOTS; slot++) {
    const got = await lock.query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [LOCK_CLASS, slot]);
    if (!got.rows[0]!.ok) continue;
    const claim = { shared, prefix: `${name}_p${slot}`, templates, admin, dropper };
    await dropLeftovers(claim);
    process.on('beforeExit', () => dropUnwanted(claim));
    // Held open until the process ends, without keeping it from ending.
    (lock as pg.Client & { unref(): void }).unref(); // pg has it, its types do not
    return claim;
  }
  await lock.end().catch(() => {});
  return { shared, templates, admin, dropper };
}

let unwanted: string[] = [];

/**
 * Drops a store's database, in the background and with others: PostgreSQL 15 has DROP DATABASE
 * wait for a checkpoint it requests, which writes what every store has dirtied (8 drops one after
 * the other: 8 checkpoints, 1.0 s; at once: 2, 0.15 s), and no later store needs this one gone.
 * What is still unwanted when the process has nothing else to do is dropped then ('beforeExit');
 * under `--test-force-exit`, whose exit skips that, by the next process to claim the slot.
 */
function dropLater(claim: Claim, name: string): void {
  unwanted.push(name);
  if (unwanted.length >= DROP_BATCH) dropUnwanted(claim);
}

function dropUnwanted(claim: Claim): void {
  for (const name of unwanted)
    claim.dropper.query(`drop database if exists ${quoted(name)} with (force)`).catch(() => {});
  unwanted = [];
}

/**
 * What a process that held the slot left: its stores' databases (and the database a slot had when
 * stores were schemas in it). The slot was free, so that process has ended; listed before this
 * process makes any, dropped in the background.
 */
async function dropLeftovers(claim: Claim): Promise<void> {
  const { rows } = await claim.admin.query<{ datname: string }>('select datname from pg_database');
  const left = new RegExp(`^${claim.prefix!.replace(/\W/g, '\\$&')}(_[0-9a-f]{12})?$`);
  for (const { datname } of rows) if (left.test(datname)) unwanted.push(datname);
  dropUnwanted(claim);
}

/**
 * The template's name, built when no template of the migrations' current sources exists: under an
 * advisory lock (one process builds, the others wait and then copy), migrated, closed, then marked
 * a template that takes no connections (a copy fails while the template has a session). A build
 * cut short leaves a database not yet marked, which the next build drops first. Templates of other
 * sources are dropped then (a copy from one being dropped waits, then fails; copyTemplate rebuilds).
 */
async function built(claim: Claim): Promise<string> {
  const name = `${claim.templates}${SOURCES_HASH}`;
  const c = new pg.Client({ connectionString: claim.shared });
  c.on('error', () => {});
  await c.connect();
  try {
    await c.query('select pg_advisory_lock($1, $2)', [LOCK_CLASS, TEMPLATE_BUILD]);
    const { rows } = await c.query<{ datname: string; datistemplate: boolean }>(
      'select datname, datistemplate from pg_database where starts_with(datname, $1)',
      [claim.templates],
    );
    if (rows.some((r) => r.datname === name && r.datistemplate)) return name;
    for (const r of rows) {
      if (r.datistemplate) await c.query(`alter database ${quoted(r.datname)} is_template false`);
      await c.query(`drop database ${quoted(r.datname)} with (force)`);
    }
    await c.query(`create database ${quoted(name)}`);
    const store = openStore(databaseUrl(claim.shared, name), { poolSize: 1 });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
    await c.query(`alter database ${quoted(name)} with is_template true allow_connections false`);
    return name;
  } finally {
    await c.end(); // ends the session, and with it the lock
  }
}

/**
 * A digest of the migrations' sources (src/store/migrations.ts, src/store/migrations/, and what
 * they import from src/, by path and content), so an edited or added migration makes a new template.
 */
function migrationsHash(): string {
  const hash = createHash('sha256').update(TEMPLATE_FORMAT);
  const seen = new Set<string>();
  const dir = join(REPO_ROOT, 'src/store/migrations');
  const queue = [
    join(REPO_ROOT, 'src/store/migrations.ts'),
    ...readdirSync(dir)
      .sort()
      .map((f) => join(dir, f)),
  ];
  while (queue.length) {
    const file = queue.shift()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    hash.update(`\0${relative(REPO_ROOT, file)}\0${text}`);
    for (const m of text.matchAll(/from '(\.[^']+\.ts)'/g)) queue.push(resolve(dirname(file), m[1]!));
  }
  return hash.digest('hex').slice(0, 12);
}

/**
 * Read once, as this process loads (with the migrations it will run): a migration edited later
 * names a template this process never builds from its older code.
 */
const SOURCES_HASH = migrationsHash();
