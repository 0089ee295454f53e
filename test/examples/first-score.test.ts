// The README's "A first score in three calls", run as written against a freshly started server:
// the start line's variables start it, and the shell blocks run in bash, word for word, with only
// the port changed (the server gets a free one) and curl played by a Node stand-in (curl-shim.mjs)
// so nothing but Node is needed. What each call printed is compared with the output the README
// shows under it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer, TEST_TIMEOUT_MS, type ServerProcess } from '../helpers/processes.ts';
import { commandLine, section, shellBlocks } from './readme.ts';

const SHIM = fileURLToPath(new URL('./curl-shim.mjs', import.meta.url));
const FIRST_SCORE = section('A first score in three calls');
const README_PORT = '8080';

interface CurlCall {
  url: string;
  status: number;
  body: string;
}

/** The output shown under each curl call: the `# {…` comment and its indented continuation lines. */
function shownOutputs(script: string): (string | undefined)[] {
  const calls = script.split(/(?=\bcurl )/).slice(1);
  return calls.map((text) => {
    const lines = text.split('\n');
    const first = lines.findIndex((l) => /^# [{[]/.test(l));
    if (first < 0) return undefined;
    const shown = [lines[first]!.slice(2)];
    for (const line of lines.slice(first + 1)) {
      if (!/^# {2}/.test(line)) break;
      shown.push(line.slice(2));
    }
    return shown.join('\n');
  });
}

/** Every value anywhere in a JSON document, by key. */
function valuesByKey(value: unknown, found = new Map<string, unknown[]>()): Map<string, unknown[]> {
  if (Array.isArray(value)) for (const v of value) valuesByKey(v, found);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      found.set(k, [...(found.get(k) ?? []), v]);
      valuesByKey(v, found);
    }
  }
  return found;
}

/**
 * Whether an output matches what the README shows: equal when the README shows whole JSON;
 * otherwise (elided with …) every key it shows exists, and every "key":"word" it shows (a string
 * without digits, so not a time-dependent sentence or an id) is the value of that key somewhere.
 */
function assertMatchesShown(actual: string, shown: string, what: string): void {
  const parsed = JSON.parse(actual) as unknown;
  try {
    assert.deepEqual(parsed, JSON.parse(shown), what);
    return;
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
  }
  const values = valuesByKey(parsed);
  for (const [, key] of shown.matchAll(/"(\w+)":/g))
    assert.ok(values.has(key!), `${what}: the README shows "${key}", the server did not return it:\n${actual}`);
  for (const [, key, word] of shown.matchAll(/"(\w+)":"([^"\d…]+)"/g)) {
    assert.ok(
      values.get(key!)?.includes(word),
      `${what}: the README shows "${key}":"${word}", the server returned ${JSON.stringify(values.get(key!))}`,
    );
  }
}

describe('README: a first score in three calls, against a real server', { timeout: TEST_TIMEOUT_MS }, () => {
  let server: ServerProcess;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vouch-readme-'));
    const [start] = shellBlocks(FIRST_SCORE);
    const startLine = commandLine(start!.trim());
    assert.deepEqual(startLine.argv, ['npm', 'start'], 'the README starts the server with npm start');
    // `npm start` builds and serves on 8080; the test serves the same sources (via tsx) on a free port.
    server = await startServer({
      env: { VOUCH_DATABASE_URL: `sqlite:${join(dir, 'vouch.db')}`, VOUCH_LOG_LEVEL: 'warn', ...startLine.env },
    });
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the three calls and the dispute analysis run as written and print what the README shows', async () => {
    const [, calls, dispute] = shellBlocks(FIRST_SCORE);
    assert.ok(calls && dispute, 'the section has the start line, the three calls and the dispute call');
    const script = `${calls}${dispute}`;
    assert.ok(script.includes(`localhost:${README_PORT}`), 'the calls go to the port npm start listens on');

    writeFileSync(join(dir, 'curl'), `#!/bin/sh\nexec "${process.execPath}" "${SHIM}" "$@"\n`);
    chmodSync(join(dir, 'curl'), 0o755);
    const log = join(dir, 'calls.ndjson');
    writeFileSync(log, '');
    const env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, CURL_SHIM_LOG: log };
    const run = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        'bash',
        ['-e', '-c', script.replaceAll(`localhost:${README_PORT}`, `localhost:${server.port}`)],
        { env, timeout: 60_000 },
        (err, _stdout, stderr) => {
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr });
        },
      );
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');

    const made = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as CurlCall);
    const shown = shownOutputs(script);
    assert.equal(made.length, shown.length, 'every curl of the README ran once');
    assert.deepEqual(
      made.map((c) => new URL(c.url).pathname),
      ['/api/v1/auth/token', '/api/v1/trust/events', '/api/v1/trust/score', '/api/v1/dispute/analyze'],
    );
    for (const [i, call] of made.entries()) {
      assert.ok(call.status >= 200 && call.status < 300, `${call.url}: ${call.status} ${call.body}`);
      const expected = shown[i];
      if (expected !== undefined) assertMatchesShown(call.body, expected, new URL(call.url).pathname);
    }
    // The token call shows no output; what it printed went into $TOKEN and the next calls used it.
    assert.equal(shown[0], undefined);
    assert.ok(
      shown.slice(1).every((s) => s !== undefined),
      'the README shows the output of the other calls',
    );
  });
});
