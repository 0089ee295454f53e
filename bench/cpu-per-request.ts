// `npx tsx bench/cpu-per-request.ts --db FILE [--workers N] [--scenario score|hit|dispute|batch|events] [--duration S]
// [--entities N] [--pin] [--rules N]`: the server's CPU time per request (every process of `vouch serve`: the primary
// and its workers, user + system, from /proc) beside throughput and latency, under wrk. On a machine shared with other
// work, throughput and latency measure the neighbours as much as Vouch; CPU per request much less so. Runs on a copy of
// FILE (a store loaded by `npm run bench`), so every run starts from the same state. Needs `npm run build` (it runs
// dist/cli.js as `npm start` does). --pin: the server (every process and thread) on core 0 and wrk on core 1 (taskset),
// so the load generator never shares the server's core. --rules N: N active rules in the live environment (conditions
// that read the request, the entity, signals and a list, and rarely match), to measure what rules add to a score.
import { execFileSync, fork } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BATCH, closedLoop, fixedRate, type Scenario } from './scenarios.ts';
import { benchCredentials, benchEnv, childPids, cpuSecondsOf, waitReady } from './server.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    workers: { type: 'string', default: '2' },
    scenario: { type: 'string', default: 'score' },
    duration: { type: 'string', default: '8' },
    entities: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '20' },
    pin: { type: 'boolean', default: false },
    rules: { type: 'string', default: '0' },
    prof: { type: 'string' },
    'node-flag': { type: 'string', multiple: true, default: [] },
    // --keep: leave the copy the server wrote to (its path is printed), to look at what it stored.
    keep: { type: 'boolean', default: false },
    // --redis URL: the shared cache and rate limits in Redis (with a postgres:// --db).
    redis: { type: 'string' },
    // --rate N: score requests offered at N a second, open loop (bench/open-loop.ts), instead of wrk's closed loop;
    // the generator runs here, on core 1 with --pin.
    rate: { type: 'string' },
  },
});
// --db postgres://…: that database (loaded by bench/run.ts --backend postgres), used as it is: it keeps the
// decisions a run writes. Only Vouch's processes are measured, not PostgreSQL's or Redis's.
const postgres = args.db?.startsWith('postgres://') ?? false;
if (!args.db || (!postgres && !existsSync(args.db))) throw new Error('--db: a store file loaded by npm run bench');
const scenario = args.scenario as Scenario;
const dir = mkdtempSync(join(tmpdir(), 'vouch-cpu-'));
const db = join(dir, 'bench.db');
if (!postgres) {
  copyFileSync(args.db, db);
  // The key that seals the store's signing keys lives beside it.
  const keyFile = join(args.db, '..', 'vouch.key');
  if (existsSync(keyFile)) copyFileSync(keyFile, join(dir, 'vouch.key'));
}
const START_FLAGS = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(/\s+/)
  .filter((t) => t.startsWith('--'));
const port = 19000 + Math.floor(Math.random() * 900);
// --scenario hello: the baseline, a bare Fastify route (bench/hello.ts) pinned and measured the same way.
const hello = scenario === 'hello';
// --prof DIR: a CPU profile of the server (read it with bench/profile-top.ts).
// --node-flag F (repeatable): more node flags, e.g. --node-flag=--import=./bench/sqlwrap.mjs to time every statement.
const profFlags = [...(args.prof ? ['--cpu-prof', `--cpu-prof-dir=${args.prof}`] : []), ...args['node-flag']!];
const child = fork(hello ? 'bench/hello.ts' : 'dist/cli.js', hello ? [] : ['serve'], {
  execArgv: hello ? ['--import', 'tsx', ...profFlags] : [...START_FLAGS, ...profFlags],
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  env: {
    ...process.env,
    ...benchEnv(port, postgres ? args.db : `sqlite:${db}`, args.workers!),
    ...(args.redis ? { VOUCH_REDIS_URL: args.redis } : {}),
  },
});
const base = `http://127.0.0.1:${port}`;
if (args.pin) {
  // -a: every thread; workers forked later inherit the mask.
  execFileSync('taskset', ['-a', '-cp', '0', String(child.pid)], { stdio: 'ignore' });
  process.env.VOUCH_BENCH_WRK_CPU = '1';
}
if (!(await waitReady(base, 600, hello ? '/' : '/readyz'))) throw new Error('vouch did not start');
if (args.pin)
  for (const pid of childPids(child.pid!))
    execFileSync('taskset', ['-a', '-cp', '0', String(pid)], { stdio: 'ignore' });

/** CPU seconds (user + system) of a process and its children. */
const cpuSeconds = (pid: number) => cpuSecondsOf(pid) + childPids(pid).reduce((sum, c) => sum + cpuSecondsOf(c), 0);

const { key, token } = hello ? { key: '', token: '' } : await benchCredentials(base);
await createRules(base, token, Number(args.rules));
const options = {
  load: 'wrk' as const,
  url: base,
  entities: Number(args.entities),
  connections: Number(args.connections),
  auth: `x-api-key: ${key}`,
};
await closedLoop(scenario, { ...options, durationS: 2, seed: 1 });
const cpu0 = cpuSeconds(child.pid!);
if (args.rate && args.pin) execFileSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
const open = args.rate
  ? await fixedRate({ ...options, rate: Number(args.rate), durationS: Number(args.duration), seed: 2 })
  : undefined;
const r = open ?? (await closedLoop(scenario, { ...options, durationS: Number(args.duration), seed: 2 }));
const cpu = cpuSeconds(child.pid!) - cpu0;
const items = scenario === 'batch' || scenario === 'events' ? BATCH : 1;
const served = r.rps * Number(args.duration);
console.log(
  JSON.stringify({
    scenario,
    workers: Number(args.workers),
    pinned: args.pin,
    rules: Number(args.rules),
    rps: r.rps,
    items_per_s: r.rps * items,
    p50: r.p50,
    p99: r.p99,
    ...(open
      ? { offered: open.offered_rps, p90: open.p90, p999: open.p999, max: open.max, late: open.late_sends }
      : {}),
    non2xx: r.non2xx,
    errors: r.errors,
    cpu_s: Math.round(cpu * 100) / 100,
    cpu_us_per_item: Math.round((cpu / Math.max(served * items, 1)) * 1e6),
  }),
);
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));
if (args.keep) console.error(`kept ${db}`);
else rmSync(dir, { recursive: true, force: true });

/** N active rules that read a little of everything and rarely match (a desk's rule set on an ordinary day). */
async function createRules(url: string, token: string, n: number): Promise<void> {
  if (n === 0) return;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };
  await post('/api/v1/lists', { name: 'bench_mules', kind: 'entity' });
  await post('/api/v1/lists/bench_mules/entries', { values: Array.from({ length: 1000 }, (_, i) => `mule-${i}`) });
  const shapes = [
    (i: number) => `amount > ${1e9 + i} && has(context.payment_method) && context.payment_method == "card"`,
    (i: number) => `entity.account_age_days < 1 && amount_ref != null && amount_ref > ${50 + i}`,
    (i: number) => `signals.velocity_trades > ${5 + i} || score > ${99.5}`,
    () => `in_list("bench_mules", entity_id)`,
    (i: number) => `risk_level == "critical" && entity.chargebacks > ${3 + i}`,
  ];
  for (let i = 0; i < n; i++) {
    await post('/api/v1/rules', {
      name: `bench rule ${i}`,
      condition: shapes[i % shapes.length]!(i),
      action: i % 2 ? 'review' : 'decline',
      status: 'active',
    });
  }
}
