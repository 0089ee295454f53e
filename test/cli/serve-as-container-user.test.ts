// Issue 29, item 15: `docker compose up` stopped with EACCES because the container's user could not
// create the generated key file under the root-owned /app. There is no Docker engine where the suite
// runs, so this runs the image's command the way the image does: as a non-root user, from a
// root-owned working directory, with `data` pointing at the volume the compose file mounts. The
// service must start there, keep its key on the volume across a re-create, and otherwise fail with
// one line that says what to change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { freePort, waitFor } from '../helpers/processes.ts';
import { REPO_ROOT } from '../helpers/repo-root.ts';

const ROOT = REPO_ROOT;
const NOBODY = 65534;
const ADMIN = { id: 'image-admin', secret: 'image-admin-secret-0123456789' };
const skip =
  process.getuid?.() !== 0
    ? 'runs a process as another user: needs root'
    : !existsSync('/usr/bin/setpriv')
      ? 'setpriv not found'
      : false;

/** What the image runs (its CMD, `node … dist/cli.js serve`), from the sources, as `nobody`. */
function serveAsNobody(cwd: string, env: Record<string, string>) {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('VOUCH_') && k !== 'PORT' && k !== 'HOST' && k !== 'NODE_TEST_CONTEXT',
    ),
  );
  const child = spawn(
    '/usr/bin/setpriv',
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      '--',
      process.execPath,
      '--import',
      import.meta.resolve('tsx'),
      join(ROOT, 'src/cli.ts'),
      'serve',
    ],
    {
      cwd,
      env: { ...inherited, VOUCH_LOG_LEVEL: 'warn', VOUCH_WORKERS: '1', ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const kill = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', kill);
  return {
    exited,
    stderr: () => stderr,
    running: () => child.exitCode === null && child.signalCode === null,
    stop: async () => (kill(), await exited),
  };
}

/** A root-owned directory standing for the image's /app, and a directory owned by the user standing for the volume. */
function imageLayout(linkData: boolean): { base: string; app: string; volume: string } {
  const base = mkdtempSync(join(tmpdir(), 'vouch-image-'));
  chmodSync(base, 0o755);
  const app = join(base, 'app');
  mkdirSync(app, { mode: 0o755 });
  const volume = join(base, 'data');
  mkdirSync(volume, { mode: 0o700 });
  chownSync(volume, NOBODY, NOBODY);
  if (linkData) symlinkSync(volume, join(app, 'data'));
  return { base, app, volume };
}

test('the image layout is what this test reproduces: /app/data points at /data, a volume the compose file mounts, and the public URL is set', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  assert.match(dockerfile, /chown vouch:vouch \/data/);
  assert.match(dockerfile, /ln -s \/data \/app\/data/);
  assert.match(dockerfile, /^WORKDIR \/app$/m);
  assert.match(dockerfile, /^USER vouch$/m);
  const compose = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
  assert.match(compose, /^\s+- vouch-data:\/data$/m, 'the vouch service mounts a named volume at /data');
  assert.match(compose, /^\s+vouch-data:$/m, 'the volume is declared');
  assert.match(compose, /^\s+VOUCH_PUBLIC_URL: /m);
});

for (const backend of backends()) {
  test(
    `as a non-root user in a root-owned directory, serve starts with its generated key on the volume and starts again from it [${backend}]`,
    { skip, timeout: 180_000 },
    async (t) => {
      const { base, app, volume } = imageLayout(true);
      let fresh: TestStore | undefined;
      t.after(async () => {
        await fresh?.drop();
        rmSync(base, { recursive: true, force: true });
      });
      let databaseUrl = `sqlite:${join(volume, 'vouch.db')}`;
      if (backend === 'postgres') {
        fresh = await freshStore(backend);
        databaseUrl = fresh.url;
      }
      const port = await freePort();
      const env = {
        VOUCH_DATABASE_URL: databaseUrl,
        HOST: '127.0.0.1',
        PORT: String(port),
        VOUCH_BOOTSTRAP_CLIENT_ID: ADMIN.id,
        VOUCH_BOOTSTRAP_CLIENT_SECRET: ADMIN.secret,
      };
      const start = async () => {
        const server = serveAsNobody(app, env);
        await waitFor(
          'the server to be ready',
          async () => {
            if (!server.running()) throw new Error(`exited early: ${server.stderr()}`);
            const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
            return res.status === 200;
          },
          90_000,
          200,
        );
        return server;
      };
      const first = await start();
      const key = statSync(join(volume, 'vouch.key'));
      assert.equal(key.uid, NOBODY, 'the generated key belongs to the user');
      assert.equal(key.mode & 0o777, 0o600);
      const tokenRes = await fetch(`http://localhost:${port}/api/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: ADMIN.id, client_secret: ADMIN.secret }),
      });
      const token = ((await tokenRes.json()) as { access_token: string }).access_token;
      await first.stop();
      // A re-created container: a new process, the same volume. A new key would not open the stored signing keys.
      const second = await start();
      t.after(() => second.stop());
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/keys`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 200, 'a token of the first start verifies after the re-create');
    },
  );
}

test(
  'over PostgreSQL, without the data volume and without VOUCH_SECRET_KEY, serve fails with one line naming the file and the settings',
  { skip: skip || (!process.env.VOUCH_TEST_POSTGRES_URL && 'VOUCH_TEST_POSTGRES_URL is not set'), timeout: 120_000 },
  async (t) => {
    const { base, app } = imageLayout(false);
    const fresh = await freshStore('postgres');
    t.after(async () => {
      await fresh.drop();
      rmSync(base, { recursive: true, force: true });
    });
    const server = serveAsNobody(app, {
      VOUCH_DATABASE_URL: fresh.url,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
    });
    const code = await Promise.race([
      server.exited,
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 60_000).unref()),
    ]);
    if (code === 'running') await server.stop();
    assert.notEqual(code, 'running', 'the start fails rather than serving without a key');
    assert.notEqual(code, 0);
    const lines = server.stderr().trim().split('\n');
    assert.equal(lines.length, 1, server.stderr());
    assert.match(
      lines[0]!,
      new RegExp(`cannot create the key-encryption key file ${join(app, 'data', 'vouch.key')} \\(EACCES\\)`),
    );
    assert.match(lines[0]!, /VOUCH_SECRET_KEY/);
  },
);
