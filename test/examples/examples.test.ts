// The README's "SDK and examples" blocks, run as written against a real server on a free port: the
// set-up lines (a client made with `npx vouch clients create`, exported as VOUCH_*) run in bash and
// hand their exported variables to each example line, which bash runs word for word; only the
// ports (8080 → the server's, 9000 → a free one for the receiver) are replaced, and curl is played
// by a Node stand-in. The webhook block subscribes the receiver and starts it as written. Every
// example in examples/ is in those blocks, and each one's output is checked.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/env.ts';
import { DEFAULT_URL, MISSING_CREDENTIALS } from '../../examples/env.ts';
import { connectionRefused, freePort, startServer, waitFor, type ServerProcess } from '../helpers/processes.ts';
import { section, shellBlocks } from './readme.ts';
import { REPO_ROOT } from '../helpers/repo-root.ts';

const ROOT = REPO_ROOT;
const README_PORT = '8080';
const SHIM = fileURLToPath(new URL('./curl-shim.mjs', import.meta.url));
const [BLOCK, WEBHOOK_BLOCK] = shellBlocks(section('SDK and examples'));
const LINES = (BLOCK ?? '').split('\n').filter((l) => l.trim() !== '');
const isExample = (line: string) => /\bexamples\/[\w-]+\.ts\b/.test(line);
const exampleOf = (line: string) => /\bexamples\/([\w-]+)\.ts\b/.exec(line)?.[1];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Our environment without VOUCH_*, PORT, HOST or the test runner's marker; npm kept offline. */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([k]) => !k.startsWith('VOUCH_') && k !== 'PORT' && k !== 'HOST' && k !== 'NODE_TEST_CONTEXT',
  );
  return {
    ...Object.fromEntries(kept),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    NO_UPDATE_NOTIFIER: '1',
    ...extra,
  };
}

function bash(script: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile('bash', ['-e', '-c', script], { cwd: ROOT, env, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

test('the README blocks run every example in examples/, and nothing else', () => {
  const scripts = readdirSync(join(ROOT, 'examples'))
    .filter((f) => f.endsWith('.ts') && f !== 'env.ts')
    .map((f) => f.slice(0, -3));
  const webhookLines = (WEBHOOK_BLOCK ?? '').split('\n');
  assert.deepEqual([...new Set([...LINES, ...webhookLines].filter(isExample).map(exampleOf))].sort(), scripts.sort());
});

test("the README's receiver is one process: killing the job it starts frees its port", async () => {
  const line = (WEBHOOK_BLOCK ?? '').split('\n').find((l) => exampleOf(l) === 'verify-webhook');
  assert.ok(line && /&\s*(#|$)/.test(line), 'the receiver is started in the background');
  const port = await freePort();
  const start = line.replace('PORT=9000', `PORT=${port}`).replace(/&\s*#.*$/, '&');
  // as a reader's shell runs it: the job started, then `kill %1` (here: the job's pid)
  const run = spawn('bash', ['-c', `${start}\necho "pid $!"\nwait`], {
    cwd: ROOT,
    env: baseEnv({ WHSEC: `whsec_${Buffer.alloc(24, 7).toString('base64')}` }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  run.stdout.on('data', (c: Buffer) => (output += c.toString()));
  run.stderr.on('data', (c: Buffer) => (output += c.toString()));
  try {
    await waitFor('the receiver to listen', () => output.includes(`127.0.0.1:${port}/vouch-webhooks`), 60_000);
    const pid = Number(/^pid (\d+)$/m.exec(output)?.[1]);
    process.kill(pid, 'SIGTERM');
    await waitFor('the port to be free', () => connectionRefused(port, 1000), 10_000);
  } finally {
    run.kill('SIGKILL');
  }
});

test('the examples default to the address the server listens on by default', () => {
  const config = loadConfig({});
  assert.equal(DEFAULT_URL, `http://${config.host}:${config.port}`);
});

test("an example without credentials exits 1 with one message saying how to get them (the README's command), no stack trace", async () => {
  const line = LINES.find((l) => exampleOf(l) === 'feed-outcomes');
  assert.ok(line);
  const create = /npx vouch clients create [^)"]+/.exec(BLOCK ?? '')?.[0].trim();
  assert.ok(create && MISSING_CREDENTIALS.includes(create), `the message names the README's command: ${create}`);
  const run = await bash(line, baseEnv({}));
  assert.equal(run.code, 1);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^feed-outcomes\.ts: set VOUCH_CLIENT_ID and VOUCH_CLIENT_SECRET/m);
  assert.ok(run.stderr.includes(create), run.stderr);
  assert.doesNotMatch(run.stderr, /^\s+at /m);
});

describe('README: the examples, run as written against a real server', { timeout: 300_000 }, () => {
  let server: ServerProcess;
  let dir: string;
  let exported: Record<string, string>;
  const receiver: { stop?: () => void; output: string } = { output: '' };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-examples-'));
    // Webhooks to 127.0.0.1 (the receiver example) need VOUCH_WEBHOOK_ALLOW_PRIVATE=1, as the README says.
    server = await startServer({
      env: {
        VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`,
        VOUCH_WEBHOOK_ALLOW_PRIVATE: '1',
        VOUCH_LOG_LEVEL: 'warn',
      },
    });
  });
  after(async () => {
    receiver.stop?.();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const local = (line: string) => line.replaceAll(`:${README_PORT}`, `:${server.port}`);
  const curlShim = () => {
    writeFileSync(join(dir, 'curl'), `#!/bin/sh\nexec "${process.execPath}" "${SHIM}" "$@"\n`);
    chmodSync(join(dir, 'curl'), 0o755);
    return { PATH: `${dir}:${process.env.PATH ?? ''}`, CURL_SHIM_LOG: join(dir, 'curl-calls.ndjson') };
  };

  test('the set-up lines make a client and export VOUCH_URL, VOUCH_CLIENT_ID, VOUCH_CLIENT_SECRET (nothing but the credentials on the terminal)', async () => {
    const setup = LINES.slice(0, LINES.findIndex(isExample));
    assert.ok(
      setup.some((l) => l.includes(`localhost:${README_PORT}`)),
      'VOUCH_URL names the port npm start listens on',
    );
    // The same store as the server: the README runs both from one directory (the default database).
    const run = await bash(
      `${setup.map(local).join('\n')}\nenv`,
      baseEnv({ VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}` }),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    exported = Object.fromEntries(
      run.stdout
        .split('\n')
        .filter((l) => /^VOUCH_(URL|CLIENT_ID|CLIENT_SECRET)=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    assert.equal(exported.VOUCH_URL, `http://localhost:${server.port}`);
    assert.match(exported.VOUCH_CLIENT_ID ?? '', /^cli_/);
    assert.match(exported.VOUCH_CLIENT_SECRET ?? '', /^[A-Za-z0-9_-]{43}$/);
  });

  test('verify-webhook: the webhook block subscribes the receiver, starts it and analyses a dispute, as written', async () => {
    assert.ok(exported && WEBHOOK_BLOCK, 'set up first; the README has the webhook block');
    const port = await freePort();
    assert.ok(WEBHOOK_BLOCK.includes('PORT=9000') && WEBHOOK_BLOCK.includes('127.0.0.1:9000/'), WEBHOOK_BLOCK);
    assert.ok(WEBHOOK_BLOCK.includes('/api/v1/webhooks'), 'the README creates the webhook the receiver needs');
    const script = WEBHOOK_BLOCK.replaceAll('PORT=9000', `PORT=${port}`).replaceAll(
      '127.0.0.1:9000/',
      `127.0.0.1:${port}/`,
    );
    // The variables the set-up lines left in the reader's shell: VOUCH, client_id, client_secret.
    const shell = {
      VOUCH: exported.VOUCH_URL!,
      client_id: exported.VOUCH_CLIENT_ID!,
      client_secret: exported.VOUCH_CLIENT_SECRET!,
    };
    const child = spawn('bash', ['-e', '-c', script], {
      cwd: ROOT,
      env: baseEnv({ ...exported, ...shell, ...curlShim() }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (c: Buffer) => (receiver.output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (receiver.output += c.toString()));
    receiver.stop = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    // Were this test process to die first, the receiver (npx, tsx and node) must not outlive it.
    process.once('exit', receiver.stop);
    await waitFor(
      'the receiver to listen',
      () => receiver.output.includes(`"listening": "http://127.0.0.1:${port}/vouch-webhooks"`),
      60_000,
    );
  });

  const checks: Record<string, (out: Record<string, unknown>) => void> = {
    'score-before-release': (out) => {
      const score = out.score as { decision_id: string; safe_amount: number | null };
      assert.match(score.decision_id, /^dec_/);
      assert.equal(
        out.release,
        score.safe_amount === null ? out.requested : Math.min(out.requested as number, score.safe_amount),
      );
      // Money as a person reads it: on the currency's grid (USDT: 8 decimals), never 1635.7293968499998.
      for (const key of ['release', 'held'])
        assert.match(String(out[key]), /^\d+(\.\d{1,8})?$/, `${key}: ${String(out[key])}`);
      assert.equal(
        Math.round(((out.release as number) + (out.held as number)) * 1e8),
        Math.round((out.requested as number) * 1e8),
      );
    },
    'feed-outcomes': (out) => {
      assert.deepEqual(out.history, { accepted: 2, duplicates: 0 });
      assert.equal((out.chargeback as { accepted: number }).accepted, 1);
      const label = out.label as { decision_id: string; label: string; source: string };
      assert.equal(label.decision_id, (out.score as { decision_id: string }).decision_id);
      assert.equal(label.label, 'fraud');
      assert.equal(label.source, 'api');
      assert.equal((out.decision as { label: { label: string } }).label.label, 'fraud');
    },
    'analyze-dispute': (out) => {
      assert.match(String(out.analysis_id), /^dan_/);
      assert.ok(
        ['release_to_buyer', 'return_to_seller', 'manual_review'].includes(String(out.recommendation)),
        String(out.recommendation),
      );
      assert.ok(Array.isArray(out.risk_flags) && Array.isArray(out.missing_evidence));
    },
  };

  for (const name of ['score-before-release', 'feed-outcomes', 'analyze-dispute']) {
    test(`${name}: runs as the README shows it and prints its result`, async () => {
      assert.ok(exported, 'set up first');
      const line = LINES.find((l) => exampleOf(l) === name);
      assert.ok(line, `the README runs examples/${name}.ts`);
      const run = await bash(local(line), baseEnv(exported));
      assert.equal(run.code, 0, run.stderr);
      checks[name]!(JSON.parse(run.stdout) as Record<string, unknown>);
    });
  }

  test('the receiver printed the dispute analysis it verified (it prints only what verifies)', async () => {
    assert.ok(receiver.stop, 'the receiver runs');
    await waitFor(
      'the dispute.analyzed webhook',
      () => /^webhook \S+: dispute\.analyzed$/m.test(receiver.output),
      60_000,
    );
  });
});
