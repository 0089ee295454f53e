// Writes the OpenAPI document the server serves at GET /api/v1/openapi.json to a file (default
// vouch-openapi.json in the OS temp directory), from an in-process app on an in-memory SQLite
// store. With --lint (`npm run lint:openapi`) it then runs `redocly lint` with the recommended
// rules and Spectral with its `spectral:oas` ruleset (.spectral.yaml), and fails on any error or
// warning of either (both fail on errors only by themselves).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/env.ts';
import { openStore } from '../src/store/db.ts';
import { buildApp } from '../src/app.ts';

const args = process.argv.slice(2);
const lint = args.includes('--lint');
const out = args.find((a) => a !== '--lint') ?? join(tmpdir(), 'vouch-openapi.json');
const store = openStore('sqlite::memory:');
await store.migrate();
const app = await buildApp({ config: loadConfig({}), store, logger: false });
await app.ready();
const res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
if (res.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.statusCode}`);
writeFileSync(out, JSON.stringify(res.json(), null, 2) + '\n');
await app.close();
await store.close();
console.log(`openapi: wrote ${out}`);

if (lint) {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  const redocly = ['lint', '--extends=recommended', out];
  spawnSync('npx', ['--no-install', 'redocly', ...redocly], { stdio: 'inherit', env });
  const json = spawnSync('npx', ['--no-install', 'redocly', ...redocly, '--format=json'], { encoding: 'utf8', env });
  const totals = (JSON.parse(json.stdout) as { totals: { errors: number; warnings: number } }).totals;
  if (totals.errors > 0 || totals.warnings > 0) {
    console.error(`openapi: ${totals.errors} error(s), ${totals.warnings} warning(s)`);
    process.exit(1);
  }
  console.log('openapi: redocly: 0 errors, 0 warnings');
  const spectral = spawnSync(
    'npx',
    [
      '--no-install',
      'spectral',
      'lint',
      '--ruleset',
      '.spectral.yaml',
      '--fail-severity',
      'hint',
      '--format',
      'text',
      out,
    ],
    { stdio: 'inherit', env },
  );
  if (spectral.status !== 0) {
    console.error('openapi: spectral reported problems');
    process.exit(1);
  }
  console.log('openapi: spectral: 0 problems');
}
