// `npx tsx bench/cpu-per-request.ts --db FILE [--workers N] [--scenario score|hit|dispute|batch|events] [--duration S] [--entities N]`:
// the server's CPU time per request (every process of `vouch serve`: the primary and its
// workers, user + system, from /proc) beside throughput and latency, under wrk. On a machine
// shared with other work, throughput and latency measure the neighbours as much as Vouch; CPU per
// request much less so. Runs on a copy of FILE (a store loaded by `npm run bench`), so every run
// starts from the same state. Needs `npm run build` (it runs dist/cli.js as `npm start` does).
import { fork } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BATCH, closedLoop, type Scenario } from './scenarios.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' }, workers: { type: 'string', default: '2' }, scenario: { type: 'string', default: 'score' },
    duration: { type: 'string', default: '8' }, entities: { type: 'string', default: '20000' }, connections: { type: 'string', default: '20' },
  },
});
if (!args.db || !existsSync(args.db)) throw new Error('--db: a store file loaded by npm run bench');
const scenario = args.scenario as Scenario;
const dir = mkdtempSync(join(tmpdir(), 'vouch-cpu-'));
const db = join(dir, 'bench.db');
copyFileSync(args.db, db);
// The key that seals the store's signing keys lives beside it.
const keyFile = join(args.db, '..', 'vouch.key');
if (existsSync(keyFile)) copyFileSync(keyFile, join(dir, 'vouch.key'));
const ADMIN = { id: 'bench-admin', secret: 'bench-admin-secret-0123456789' };
const START_FLAGS = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/).filter((t) => t.startsWith('--'));
const port = 19000 + Math.floor(Math.random() * 900);
const child = fork('dist/cli.js', ['serve'], {
  execArgv: START_FLAGS, stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  env: {
    ...process.env, NODE_ENV: 'production', PORT: String(port), VOUCH_DATABASE_URL: `sqlite:${db}`, VOUCH_LOG_LEVEL: 'warn',
    VOUCH_BOOTSTRAP_CLIENT_ID: ADMIN.id, VOUCH_BOOTSTRAP_CLIENT_SECRET: ADMIN.secret, VOUCH_WORKERS: args.workers,
    VOUCH_RATE_LIMIT_PER_SECOND: '10000000', VOUCH_RATE_LIMIT_BURST: '20000000', VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE: '100000',
  },
});
const base = `http://127.0.0.1:${port}`;
let up = false;
for (let i = 0; i < 600 && !up; i++) {
  try { up = (await fetch(`${base}/readyz`)).ok; } catch { /* not up yet */ }
  if (!up) await new Promise((r) => setTimeout(r, 100));
}
if (!up) throw new Error('vouch did not start');

/** CPU seconds (user + system) of a process and its children. */
function cpuSeconds(pid: number): number {
  const one = (p: number) => {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return 0;
    }
  };
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch { /* none */ }
  return one(pid) + children.reduce((sum, c) => sum + one(c), 0);
}

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
  (await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })).json() as Promise<Record<string, string>>;
const token = (await post('/api/v1/auth/token', { client_id: ADMIN.id, client_secret: ADMIN.secret })).access_token!;
const key = (await post('/api/v1/keys', { name: 'bench', scopes: ['trust:read', 'trust:write', 'dispute:analyze'] }, { authorization: `Bearer ${token}` })).key!;
const options = { load: 'wrk' as const, url: base, entities: Number(args.entities), connections: Number(args.connections), auth: `x-api-key: ${key}` };
await closedLoop(scenario, { ...options, durationS: 2, seed: 1 });
const cpu0 = cpuSeconds(child.pid!);
const r = await closedLoop(scenario, { ...options, durationS: Number(args.duration), seed: 2 });
const cpu = cpuSeconds(child.pid!) - cpu0;
const items = scenario === 'batch' || scenario === 'events' ? BATCH : 1;
const served = r.rps * Number(args.duration);
console.log(JSON.stringify({
  scenario, workers: Number(args.workers), rps: r.rps, items_per_s: r.rps * items, p50: r.p50, p99: r.p99, non2xx: r.non2xx, errors: r.errors,
  cpu_s: Math.round(cpu * 100) / 100, cpu_us_per_item: Math.round((cpu / Math.max(served * items, 1)) * 1e6),
}));
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));
rmSync(dir, { recursive: true, force: true });
