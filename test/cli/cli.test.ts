// The `vouch` command as an operator runs it: a bad environment stops it with exit code 2 and one
// line naming the variable, a missing client with 1; `clients create|list|deactivate` against a
// real store print the secret once (and nothing else on standard output), keep only its SHA-256,
// list under a header, and a deactivation reaches a running service.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { backends, freshStore, testConfig, type TestStore } from '../helpers/app.ts';
import { buildApp } from '../../src/app.ts';
import { sha256Hex } from '../../src/lib/digest.ts';
import { eventually } from '../auth/support.ts';
import { freePort, waitFor } from '../helpers/processes.ts';
import { VOUCH } from '../helpers/vouch-command.ts';
import { REPO_ROOT } from '../helpers/repo-root.ts';

const BIN = join(REPO_ROOT, 'bin', 'vouch.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/vouch.js …` with only the given VOUCH_* variables (none inherited from this process). */
function vouch(args: string[], env: Record<string, string>, stdin?: string): Promise<Run> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VOUCH_') && k !== 'PORT' && k !== 'HOST'),
  );
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...VOUCH, ...args],
      { env: { ...base, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin?.end(stdin ?? '');
  });
}

/**
 * The row of `clients list` whose first cell is `id`, keyed by the header's titles: the header is
 * the first line and every column starts where its title does (the table is aligned).
 */
function tableRow(table: string, id: string): Record<string, string> | undefined {
  const [header, ...rows] = table.trimEnd().split('\n');
  const titles = [...header!.matchAll(/\S+/g)].map((m) => ({ title: m[0], at: m.index }));
  const row = rows.find((r) => r.startsWith(`${id} `));
  if (!row) return undefined;
  return Object.fromEntries(
    titles.map(({ title, at }, i) => [
      title,
      (i + 1 < titles.length ? row.slice(at, titles[i + 1]!.at) : row.slice(at)).trimEnd(),
    ]),
  );
}

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('usage and --help', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('vouch alone prints help naming every command, exit 0', async () => {
    const run = await vouch([], {});
    assert.equal(run.code, 0, run.stderr);
    for (const command of ['serve', 'migrate', 'clients', 'signing-keys', 'events'])
      assert.match(run.stdout, new RegExp(`\\b${command}\\b`));
  });

  test('vouch --help documents the exit statuses: 1 for a failed command, 2 for usage', async () => {
    const run = await vouch(['--help'], {});
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /Exit status:\n {2}0 {2}done\n {2}1 {2}the command ran and failed: not found[^\n]*\n {2}2 {2}usage: /,
    );
  });

  test('vouch --version prints the package version, exit 0', async () => {
    const run = await vouch(['--version'], {});
    assert.equal(run.code, 0);
    assert.equal(run.stdout.trim(), PACKAGE_VERSION);
  });

  test('--help on every command prints its usage, exit 0, and touches no store (even with a bad environment)', async () => {
    const db = join(dir, 'help.db');
    const commands = [
      ['serve'],
      ['migrate'],
      ['clients', 'create'],
      ['clients', 'list'],
      ['clients', 'deactivate'],
      ['signing-keys', 'rotate'],
      ['events', 'import'],
    ];
    for (const command of commands) {
      const run = await vouch([...command, '--help'], { VOUCH_DATABASE_URL: `sqlite:${db}`, PORT: 'abc' });
      assert.equal(run.code, 0, `${command.join(' ')}: ${run.stderr}`);
      assert.match(run.stdout, new RegExp(`^Usage: vouch ${command.join(' ')}`), command.join(' '));
      assert.ok(!existsSync(db), `${command.join(' ')} --help created the database`);
    }
  });

  test('an unknown command or a missing argument: exit 2 and a one-line error pointing to --help', async () => {
    const unknown = await vouch(['bogus'], {});
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^vouch: unknown command 'bogus'\n/);
    const missing = await vouch(['clients', 'deactivate'], {});
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^vouch: missing required argument 'client_id'\n/);
    const workers = await vouch(['serve', '--workers', '0'], {});
    assert.equal(workers.code, 2);
    assert.match(workers.stderr, /--workers.*must be an integer from 1 to 256/);
  });
});

test('bad environment variable (PORT=abc): exit code 2 and one line on stderr naming PORT', async () => {
  const run = await vouch(['migrate'], { PORT: 'abc', VOUCH_DATABASE_URL: 'sqlite:/nonexistent/never-created.db' });
  assert.equal(run.code, 2);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr, 'vouch: PORT must be an integer, got "abc"\n');
  assert.ok(!existsSync('/nonexistent/never-created.db'));
});

test('clients create with an unknown environment: exit code 2 naming the allowed ones, and no store touched', async () => {
  const run = await vouch(
    ['clients', 'create', '--name', 'x', '--role', 'service', '--scopes', 'keys:read', '--environment', 'prod'],
    { VOUCH_DATABASE_URL: 'sqlite:/nonexistent/never-created.db' },
  );
  assert.equal(run.code, 2);
  assert.match(run.stderr, /--environment.*'prod' is invalid.*live, test/);
  assert.equal(run.stdout, '');
});

test('clients create with an unknown role: exit code 2 and a one-line usage error', async () => {
  const run = await vouch(['clients', 'create', '--name', 'x', '--role', 'root', '--scopes', 'keys:read'], {
    VOUCH_DATABASE_URL: 'sqlite:/nonexistent/never-created.db',
  });
  assert.equal(run.code, 2);
  assert.match(
    run.stderr,
    /^vouch: option '--role <role>' argument 'root' is invalid\. unknown role "root" \(service, operator, admin\)\n/,
  );
});

for (const backend of backends()) {
  describe(`vouch clients [${backend}]`, () => {
    let fresh: TestStore;
    let app: FastifyInstance;
    let env: Record<string, string>;

    before(async () => {
      fresh = await freshStore(backend);
      env = { VOUCH_DATABASE_URL: fresh.url };
      // A running service on the same store, to see the CLI's changes as another process would.
      app = await buildApp({ config: testConfig(), store: fresh.store, logger: false });
      await app.ready();
    });

    after(async () => {
      await app.close();
      await fresh.drop();
    });

    test('signing-keys rotate makes exactly one new key; with --help it makes none', async () => {
      const count = async () => (await fresh.store.db.selectFrom('signing_keys').select('kid').execute()).length;
      const before = await count();
      assert.equal((await vouch(['signing-keys', 'rotate', '--help'], env)).code, 0);
      assert.equal(await count(), before);
      const rotated = await vouch(['signing-keys', 'rotate'], { ...env, VOUCH_LOG_LEVEL: 'info' });
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.match(rotated.stdout, /^new signing key \S+\n$/);
      assert.match(rotated.stderr, /"event":"signing_key_rotated"/);
      assert.equal(await count(), before + 1);
    });

    test('events import - reads standard input; a rejected line makes the exit status 1, a clean import 0', async () => {
      const ok = {
        event_id: `cli-stdin-${backend}-1`,
        type: 'fraud.reported',
        entity_id: 'f'.repeat(64),
        occurred_at: new Date().toISOString(),
      };
      const clean = await vouch(['events', 'import', '-'], env, `${JSON.stringify(ok)}\n`);
      assert.equal(clean.code, 0, clean.stderr);
      assert.match(clean.stdout, /^accepted 1, duplicates 0, rejected 0\n/);
      const bad = { ...ok, event_id: `cli-stdin-${backend}-2`, type: 'trade.exploded' };
      const mixed = await vouch(['events', 'import', '-'], env, `${JSON.stringify(ok)}\n${JSON.stringify(bad)}\n`);
      assert.equal(mixed.code, 1);
      assert.match(mixed.stdout, /^accepted 0, duplicates 1, rejected 1\n {2}line 2: /);
      assert.match(mixed.stderr, /1 line\(s\) rejected/);
    });

    test('clients create at a terminal: standard output holds only the credentials, and no log line appears anywhere', async () => {
      const created = await vouch(
        ['clients', 'create', '--name', 'Quiet', '--role', 'service', '--scopes', 'trust:read'],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      assert.match(
        created.stdout,
        /^client_id=cli_[A-Za-z0-9_-]+\nclient_secret=[A-Za-z0-9_-]{43}\n# the secret is shown once; store it now\n$/,
      );
      assert.equal(created.stderr, '');
    });

    test('clients list: a header line first, then one aligned row per client; --json gives the records', async () => {
      const created = await vouch(
        ['clients', 'create', '--name', 'Listed one', '--role', 'service', '--scopes', 'trust:read,audit:read'],
        env,
      );
      const id = /^client_id=(\S+)$/m.exec(created.stdout)?.[1];
      assert.ok(id, created.stdout);
      const listed = await vouch(['clients', 'list'], env);
      assert.equal(listed.code, 0, listed.stderr);
      const lines = listed.stdout.trimEnd().split('\n');
      assert.match(lines[0]!, /^CLIENT_ID +STATUS +ENVIRONMENT +ROLE +SCOPES +NAME$/);
      assert.deepEqual(tableRow(listed.stdout, id), {
        CLIENT_ID: id,
        STATUS: 'active',
        ENVIRONMENT: 'live',
        ROLE: 'service',
        SCOPES: 'trust:read,audit:read',
        NAME: 'Listed one',
      });
      // Aligned: every row's second column starts under STATUS.
      const statusAt = lines[0]!.indexOf('STATUS');
      for (const line of lines.slice(1)) assert.match(line.slice(statusAt), /^(active|inactive) /, line);

      const json = await vouch(['clients', 'list', '--json'], env);
      assert.equal(json.code, 0, json.stderr);
      const records = JSON.parse(json.stdout) as Record<string, unknown>[];
      assert.deepEqual(
        { ...records.find((r) => r.client_id === id), created_at: undefined },
        {
          client_id: id,
          name: 'Listed one',
          role: 'service',
          scopes: ['trust:read', 'audit:read'],
          status: 'active',
          environment: 'live',
          created_at: undefined,
          deactivated_at: null,
        },
      );
    });

    test('clients deactivate of a client that does not exist: exit status 1 (not the usage status 2), one line, nothing on stdout', async () => {
      const run = await vouch(['clients', 'deactivate', 'cli_doesNotExist'], env);
      assert.equal(run.code, 1);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, 'vouch: no client cli_doesNotExist\n');
    });

    test('clients create refuses a name with control characters (usage, exit 2) and stores nothing', async () => {
      const count = async () => (await fresh.store.db.selectFrom('clients').select('id').execute()).length;
      const before = await count();
      const run = await vouch(
        ['clients', 'create', '--name', 'evil\u001b[2Jname', '--role', 'service', '--scopes', 'trust:read'],
        env,
      );
      assert.equal(run.code, 2);
      assert.match(run.stderr, /--name.*printable characters on one line/);
      assert.equal(await count(), before);
    });

    test('clients create --environment test: list shows it test; its token works in test mode (a new key is vch_test_, live keys are out of reach)', async () => {
      const created = await vouch(
        [
          'clients',
          'create',
          '--name',
          'Sandbox',
          '--role',
          'operator',
          '--scopes',
          'keys:read,keys:write',
          '--environment',
          'test',
        ],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      const id = /^client_id=(cli_[A-Za-z0-9_-]+)$/m.exec(created.stdout)?.[1];
      const secret = /^client_secret=([A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1];
      assert.ok(id && secret, created.stdout);
      assert.equal(
        (
          await fresh.store.db
            .selectFrom('clients')
            .select('environment')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).environment,
        'test',
      );
      const listed = await vouch(['clients', 'list'], env);
      assert.deepEqual(tableRow(listed.stdout, id), {
        CLIENT_ID: id,
        STATUS: 'active',
        ENVIRONMENT: 'test',
        ROLE: 'operator',
        SCOPES: 'keys:read,keys:write',
        NAME: 'Sandbox',
      });
      const issued = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: id, client_secret: secret },
      });
      assert.equal(issued.statusCode, 200, issued.body);
      const headers = { authorization: `Bearer ${issued.json().access_token as string}` };
      const key = await app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers,
        payload: { name: 'sandbox key', scopes: ['keys:read'] },
      });
      assert.equal(key.statusCode, 201, key.body);
      assert.match(key.json().key, /^vch_test_/);
      assert.equal(
        (
          await app.inject({
            method: 'POST',
            url: '/api/v1/keys',
            headers,
            payload: { name: 'x', scopes: ['keys:read'], environment: 'live' },
          })
        ).statusCode,
        403,
      );
    });

    test('clients create prints client_id and the secret once, the store keeps only its SHA-256; list shows it active; deactivate stops its tokens', async () => {
      const created = await vouch(
        ['clients', 'create', '--name', 'Checkout service', '--role', 'operator', '--scopes', 'keys:read,trust:read'],
        { ...env, VOUCH_LOG_LEVEL: 'info' },
      );
      assert.equal(created.code, 0, created.stderr);
      const id = /^client_id=(cli_[A-Za-z0-9_-]+)$/m.exec(created.stdout)?.[1];
      const secret = /^client_secret=([A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1];
      assert.ok(id && secret, created.stdout);
      assert.equal(
        created.stdout,
        `client_id=${id}\nclient_secret=${secret}\n# the secret is shown once; store it now\n`,
      );

      // With VOUCH_LOG_LEVEL set, one info line on stderr names the new client, never its secret.
      const logged = created.stderr
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.ok(
        logged.some((l) => l.event === 'client_created' && l.client_id === id && l.level === 30),
        created.stderr,
      );
      assert.ok(!created.stderr.includes(secret));
      const row = await fresh.store.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.secret_hash, sha256Hex(secret));
      assert.ok(!Object.values(row).some((v) => String(v).includes(secret)));
      assert.equal(row.role, 'operator');
      assert.equal(row.scopes, 'keys:read trust:read');
      if (backend === 'sqlite') {
        const path = fresh.url.slice('sqlite:'.length);
        for (const file of [path, `${path}-wal`]) {
          if (existsSync(file)) assert.ok(!readFileSync(file).includes(secret), `${file} holds the secret`);
        }
      }

      const listed = await vouch(['clients', 'list'], env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(tableRow(listed.stdout, id), {
        CLIENT_ID: id,
        STATUS: 'active',
        ENVIRONMENT: 'live',
        ROLE: 'operator',
        SCOPES: 'keys:read,trust:read',
        NAME: 'Checkout service',
      });
      assert.ok(!listed.stdout.includes(secret) && !listed.stdout.includes(row.secret_hash));

      // The secret works at the token endpoint of the running service.
      const issued = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: id, client_secret: secret },
      });
      assert.equal(issued.statusCode, 200);
      const token = issued.json().access_token as string;
      const use = () =>
        app.inject({ method: 'GET', url: '/api/v1/keys', headers: { authorization: `Bearer ${token}` } });
      assert.equal((await use()).statusCode, 200);

      const deactivated = await vouch(['clients', 'deactivate', id], { ...env, VOUCH_LOG_LEVEL: 'info' });
      assert.equal(deactivated.code, 0, deactivated.stderr);
      assert.equal(deactivated.stdout, `${id} deactivated\n`);
      assert.match(deactivated.stderr, /"event":"client_deactivated"/);
      const after = await fresh.store.db
        .selectFrom('clients')
        .select('deactivated_at')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.ok(after.deactivated_at !== null);
      // The running service refuses the client's token and its secret (SQLite at once, PostgreSQL on NOTIFY).
      if (backend === 'sqlite') assert.equal((await use()).statusCode, 401);
      else await eventually(async () => (await use()).statusCode === 401);
      const again = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/token',
        payload: { client_id: id, client_secret: secret },
      });
      assert.equal(again.statusCode, 401);
    });
  });
}

test('the first start prints where /docs is and how to get a credential while no client exists', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vouch-first-start-'));
  const port = await freePort();
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('VOUCH_') && k !== 'PORT' && k !== 'HOST' && k !== 'NODE_TEST_CONTEXT',
    ),
  );
  const child = spawn(process.execPath, [BIN, 'serve', '--workers', '1'], {
    env: { ...base, VOUCH_DATABASE_URL: `sqlite:${join(dir, 'v.db')}`, PORT: String(port), VOUCH_LOG_LEVEL: 'warn' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await waitFor('the start-up hints', () => stderr.includes('--role admin'), 30_000);
    assert.match(
      stderr,
      new RegExp(
        `vouch: serving on http://127\\.0\\.0\\.1:${port} \\(API reference: http://127\\.0\\.0\\.1:${port}/docs\\)`,
      ),
    );
    assert.match(stderr, /no API client exists yet/);
    assert.match(stderr, /npx vouch clients create --name ops --role admin --scopes \S*keys:read/);
    assert.match(stderr, /VOUCH_BOOTSTRAP_CLIENT_ID and VOUCH_BOOTSTRAP_CLIENT_SECRET/);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
});
