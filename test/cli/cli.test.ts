// The `vouch` command as an operator runs it: a bad environment stops it with exit code 2 and one
// line naming the variable; `clients create|list|deactivate` against a real store print the secret
// once, keep only its SHA-256, and a deactivation reaches a running service.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { backends, freshStore, testConfig, type TestStore } from '../helpers/app.ts';
import { buildApp } from '../../src/app.ts';
import { sha256Hex } from '../../src/keys/format.ts';
import { eventually } from '../auth/support.ts';

const BIN = fileURLToPath(new URL('../../bin/vouch.js', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/vouch.js …` with only the given VOUCH_* variables (none inherited from this process). */
function vouch(args: string[], env: Record<string, string>): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VOUCH_') && k !== 'PORT' && k !== 'HOST'));
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...base, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

test('bad environment variable (PORT=abc): exit code 2 and one line on stderr naming PORT', async () => {
  const run = await vouch(['migrate'], { PORT: 'abc', VOUCH_DATABASE_URL: 'sqlite:/nonexistent/never-created.db' });
  assert.equal(run.code, 2);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr, 'vouch: PORT must be an integer, got "abc"\n');
  assert.ok(!existsSync('/nonexistent/never-created.db'));
});

test('clients create with an unknown role: exit code 2 and a one-line usage error', async () => {
  const run = await vouch(['clients', 'create', '--name', 'x', '--role', 'root', '--scopes', 'keys:read'], { VOUCH_DATABASE_URL: 'sqlite:/nonexistent/never-created.db' });
  assert.equal(run.code, 2);
  assert.equal(run.stderr, 'vouch: unknown role "root" (service, operator, admin)\n');
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

    test('clients create prints client_id and the secret once, the store keeps only its SHA-256; list shows it active; deactivate stops its tokens', async () => {
      const created = await vouch(['clients', 'create', '--name', 'Checkout service', '--role', 'operator', '--scopes', 'keys:read,trust:read'], env);
      assert.equal(created.code, 0, created.stderr);
      const id = /^client_id=(cli_[A-Za-z0-9_-]+)$/m.exec(created.stdout)?.[1];
      const secret = /^client_secret=([A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1];
      assert.ok(id && secret, created.stdout);

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
      const line = listed.stdout.split('\n').find((l) => l.startsWith(id));
      assert.equal(line, `${id}\tactive\toperator\tkeys:read,trust:read\tCheckout service`);
      assert.ok(!listed.stdout.includes(secret) && !listed.stdout.includes(row.secret_hash));

      // The secret works at the token endpoint of the running service.
      const issued = await app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { client_id: id, client_secret: secret } });
      assert.equal(issued.statusCode, 200);
      const token = issued.json().access_token as string;
      const use = () => app.inject({ method: 'GET', url: '/api/v1/keys', headers: { authorization: `Bearer ${token}` } });
      assert.equal((await use()).statusCode, 200);

      const deactivated = await vouch(['clients', 'deactivate', id], env);
      assert.equal(deactivated.code, 0, deactivated.stderr);
      assert.equal(deactivated.stdout, `${id} deactivated\n`);
      const after = await fresh.store.db.selectFrom('clients').select('deactivated_at').where('id', '=', id).executeTakeFirstOrThrow();
      assert.ok(after.deactivated_at !== null);
      // The running service refuses the client's token and its secret (SQLite at once, PostgreSQL on NOTIFY).
      if (backend === 'sqlite') assert.equal((await use()).statusCode, 401);
      else await eventually(async () => (await use()).statusCode === 401);
      const again = await app.inject({ method: 'POST', url: '/api/v1/auth/token', payload: { client_id: id, client_secret: secret } });
      assert.equal(again.statusCode, 401);
    });
  });
}
