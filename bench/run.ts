// `npm run bench`: measures Vouch against a bare Fastify hello-world on the same machine in one
// run, and writes the figures to bench/results/: single scores (API key, JWT, cache hit), dispute
// analysis, batches of 100 scores (scores/s and × single-score throughput), ingestion (events/s),
// and the latency at 1,000 req/s offered (open loop). Vouch runs as `npm start` does: compiled,
// with its node flags, one worker per core unless --workers says otherwise.
// Options: --entities N --events N --duration S --connections N --backend sqlite|postgres
// --workers N --load wrk|autocannon --out FILE
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { openStore } from '../src/store/db.ts';
import { ingestEvents } from '../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../src/model/policy.ts';
import { history } from './data.ts';
import { BATCH, closedLoop, fixedRate, type Load, type Scenario } from './scenarios.ts';
import { wrkAvailable } from './wrk.ts';
import { benchCredentials, benchEnv, childPids, waitReady } from './server.ts';

const { values: args } = parseArgs({
  options: {
    entities: { type: 'string', default: '100000' },
    events: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    backend: { type: 'string', default: 'sqlite' },
    workers: { type: 'string', default: String(availableParallelism()) },
    load: { type: 'string', default: wrkAvailable() ? 'wrk' : 'autocannon' },
    out: { type: 'string' },
  },
});
const ENTITIES = Number(args.entities);
const EVENTS = Number(args.events);
const SMALL = Math.min(10_000, EVENTS);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
if (args.load !== 'wrk' && args.load !== 'autocannon') throw new Error(`--load is wrk or autocannon, not ${args.load}`);
const LOAD: Load = args.load;
/** The node flags of `npm start` (package.json), so the bench runs Vouch exactly as it ships. */
const START_FLAGS = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(/\s+/)
  .filter((t) => t.startsWith('--'));
const dir = join(process.cwd(), 'bench', 'results');
mkdirSync(dir, { recursive: true });

const PG_ADMIN_URL = process.env.VOUCH_BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_BENCH_DB = 'vouch_bench';
const REDIS_URL = process.env.VOUCH_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/3';

function databaseUrl(): string {
  if (args.backend === 'postgres') return PG_ADMIN_URL.replace(/\/[^/]*$/, `/${PG_BENCH_DB}`);
  return `sqlite:${join(dir, 'bench.db')}`;
}

/** A fresh store: a new SQLite file, or a dedicated PostgreSQL database (never the test database). */
async function resetStore(url: string) {
  if (url.startsWith('sqlite:')) {
    for (const s of ['', '-wal', '-shm']) rmSync(url.slice(7) + s, { force: true });
    return;
  }
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${PG_BENCH_DB}`);
  await admin.query(`create database ${PG_BENCH_DB}`);
  await admin.end();
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
}

async function load(url: string, from: number, to: number) {
  const store = openStore(url);
  await store.migrate();
  const t0 = performance.now();
  let i = 0;
  for (const batch of history(ENTITIES, to)) {
    i += batch.length;
    if (i <= from) continue;
    await ingestEvents(store, batch, DEFAULT_POLICY, { environment: 'live' });
    if (i % 100_000 === 0) process.stderr.write(`  loaded ${i} events\n`);
  }
  await store.close();
  return Math.round((to - from) / ((performance.now() - t0) / 1000));
}

function start(
  script: string,
  argv: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = fork(script, argv, {
      env: { ...process.env, ...env },
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('message', (m: { port: number }) => resolve({ child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function startVouch(url: string) {
  const port = 18000 + Math.floor(Math.random() * 1000);
  // Production mode: the compiled JavaScript (npm run build), as `npm start` runs it.
  const child = fork('dist/cli.js', ['serve'], {
    execArgv: START_FLAGS,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      ...process.env,
      ...benchEnv(port, url, args.workers!),
      ...(args.backend === 'postgres' ? { VOUCH_REDIS_URL: REDIS_URL } : {}),
    },
  });
  if (await waitReady(`http://127.0.0.1:${port}`)) return { child, port };
  throw new Error('vouch did not start');
}

/** Peak resident set (VmHWM) of a process and of each of its children (the cluster workers), in MB. */
function peakRss(pid: number): { total_mb: number; worker_mb: number } {
  const read = (p: number) => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  };
  const each = childPids(pid).map(read);
  // With one worker the process serves by itself: it is the worker.
  return {
    total_mb: Math.round(read(pid) + each.reduce((a, b) => a + b, 0)),
    worker_mb: Math.round(each.length > 0 ? Math.max(...each) : read(pid)),
  };
}

async function credentials(port: number) {
  const { token, key } = await benchCredentials(`http://127.0.0.1:${port}`);
  return { jwt: token, key };
}

async function main() {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  const url = databaseUrl();
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    backend: args.backend,
    workers: Number(args.workers),
    load: LOAD,
    node_flags: START_FLAGS,
    entities: ENTITIES,
    events: EVENTS,
    duration_s: DURATION,
    connections: CONNECTIONS,
  };
  const run = (scenario: Scenario, target: string, auth: string | undefined, seed: number, durationS = DURATION) =>
    closedLoop(scenario, {
      load: LOAD,
      url: target,
      entities: ENTITIES,
      durationS,
      connections: CONNECTIONS,
      seed,
      ...(auth ? { auth } : {}),
    });

  process.stderr.write(`baseline: bare Fastify hello world (${LOAD})\n`);
  const baseline = async () => {
    const hello = await start('bench/hello.ts', [], {});
    const r = await run('hello', `http://127.0.0.1:${hello.port}/`, undefined, 0);
    hello.child.kill();
    return r;
  };
  // Measured at the start and at the end: ratios use the higher (the conservative choice on a
  // noisy machine), and both are reported.
  const baseStart = await baseline();

  process.stderr.write(`loading ${SMALL} events\n`);
  await resetStore(url);
  results.load_small_events_per_s = await load(url, 0, SMALL);
  let vouch = await startVouch(url);
  let creds = await credentials(vouch.port);
  await run('score', `http://127.0.0.1:${vouch.port}`, `x-api-key: ${creds.key}`, 1, 3);
  process.stderr.write('fixed rate 1,000 req/s (open loop), small store\n');
  results.fixed_rate_small = await fixedRate({
    url: `http://127.0.0.1:${vouch.port}`,
    rate: 1000,
    durationS: DURATION,
    entities: ENTITIES,
    auth: `x-api-key: ${creds.key}`,
    seed: 2,
  });
  vouch.child.kill('SIGTERM');
  await new Promise((r) => vouch.child.once('exit', r));

  process.stderr.write(`loading up to ${EVENTS} events\n`);
  results.load_events_per_s = await load(url, SMALL, EVENTS);
  vouch = await startVouch(url);
  creds = await credentials(vouch.port);
  const target = `http://127.0.0.1:${vouch.port}`;
  const key = `x-api-key: ${creds.key}`;
  await run('score', target, key, 3, 3);

  process.stderr.write('scoring with an API key\n');
  results.score_api_key = await run('score', target, key, 4);
  process.stderr.write('scoring with a JWT\n');
  results.score_jwt = await run('score', target, `authorization: Bearer ${creds.jwt}`, 5);
  process.stderr.write('cache hits\n');
  results.score_cache_hit = await run('hit', target, key, 0);
  process.stderr.write('fixed rate 1,000 req/s (open loop), full store\n');
  results.fixed_rate_full = await fixedRate({
    url: target,
    rate: 1000,
    durationS: DURATION,
    entities: ENTITIES,
    auth: key,
    seed: 6,
  });
  process.stderr.write('dispute analysis\n');
  results.dispute_analyze = await run('dispute', target, key, 7);
  // The high-water mark after single scores and disputes (the issue 13 RSS figure), before the
  // batch and ingestion phases, which hold up to 2,000 requests' bodies at once, raise it.
  results.peak_rss_scoring = peakRss(vouch.child.pid!);
  process.stderr.write(`score batches (${BATCH} requests per call)\n`);
  const batch = await run('batch', target, key, 8);
  const single = results.score_api_key as { rps: number };
  results.score_batch = {
    ...batch,
    scores_per_s: batch.rps * BATCH,
    // Against single-score throughput (API key, cache misses) in the same run; issue 13's target is ≥ 20.
    vs_single: Math.round(((batch.rps * BATCH) / Math.max(single.rps, 1)) * 10) / 10,
  };
  results.peak_rss_batch = peakRss(vouch.child.pid!);
  process.stderr.write(`event ingestion (${BATCH} events per request)\n`);
  const ingest = await run('events', target, key, 9);
  results.ingest = { ...ingest, events_per_s: ingest.rps * BATCH };
  results.peak_rss = peakRss(vouch.child.pid!);
  vouch.child.kill('SIGTERM');
  await new Promise((r) => vouch.child.once('exit', r));

  process.stderr.write('baseline again\n');
  const baseEnd = await baseline();
  const base = baseStart.rps >= baseEnd.rps ? baseStart : baseEnd;
  results.baseline = base;
  results.baseline_start = baseStart;
  results.baseline_end = baseEnd;
  const ratio = (k: string) => Math.round(((results[k] as { rps: number }).rps / base.rps) * 1000) / 10;
  results.ratios_percent = {
    score_api_key: ratio('score_api_key'),
    score_jwt: ratio('score_jwt'),
    score_cache_hit: ratio('score_cache_hit'),
    dispute_analyze: ratio('dispute_analyze'),
  };
  const fs = results.fixed_rate_small as { p50: number };
  const ff = results.fixed_rate_full as { p50: number; p99: number };
  results.p50_drift_percent = Math.round(((ff.p50 - fs.p50) / Math.max(fs.p50, 0.001)) * 1000) / 10;
  const out = args.out ?? join(dir, `bench-${args.backend}-w${args.workers}-${Date.now()}.json`);
  writeFileSync(out, JSON.stringify(results, null, 2));
  console.table(
    Object.fromEntries(
      [
        'baseline',
        'score_api_key',
        'score_jwt',
        'score_cache_hit',
        'dispute_analyze',
        'score_batch',
        'ingest',
        'fixed_rate_small',
        'fixed_rate_full',
      ].map((k) => [k, results[k]]),
    ),
  );
  const { scores_per_s: batchScoresPerS, vs_single: batchVsSingle } = results.score_batch as {
    scores_per_s: number;
    vs_single: number;
  };
  const { events_per_s: ingestEventsPerS } = results.ingest as { events_per_s: number };
  console.log(
    JSON.stringify(
      {
        ratios_percent: results.ratios_percent,
        p50_drift_percent: results.p50_drift_percent,
        peak_rss: results.peak_rss,
        peak_rss_scoring: results.peak_rss_scoring,
        peak_rss_batch: results.peak_rss_batch,
        load_events_per_s: results.load_events_per_s,
        batch_scores_per_s: batchScoresPerS,
        batch_vs_single_score: batchVsSingle,
        ingest_events_per_s: ingestEventsPerS,
      },
      null,
      2,
    ),
  );
  console.log(`written to ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
