// `npm run bench`: measures Vouch against a bare Fastify hello-world on the same machine in one
// run, and writes the figures to bench/results/: single scores (API key, JWT, cache hit), dispute
// analysis, batches of 100 scores (scores/s and × single-score throughput), ingestion (events/s).
// Options: --entities N --events N --duration S --connections N --backend sqlite|postgres
// --workers N --out FILE
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon, { type Options, type Result } from 'autocannon';
import pg from 'pg';
import { Redis } from 'ioredis';
import { openStore } from '../src/store/db.ts';
import { ingestEvents } from '../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../src/config/policy.ts';
import { entityId, history, rng } from './data.ts';

const { values: args } = parseArgs({
  options: {
    entities: { type: 'string', default: '100000' },
    events: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    backend: { type: 'string', default: 'sqlite' },
    workers: { type: 'string', default: '1' },
    out: { type: 'string' },
  },
});
const ENTITIES = Number(args.entities);
const EVENTS = Number(args.events);
const SMALL = Math.min(10_000, EVENTS);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const ADMIN = { id: 'bench-admin', secret: 'bench-admin-secret-0123456789' };
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

function start(script: string, argv: string[], env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = fork(script, argv, { env: { ...process.env, ...env }, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    child.once('message', (m: { port: number }) => resolve({ child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function startVouch(url: string) {
  const port = 18000 + Math.floor(Math.random() * 1000);
  // Production mode: the compiled JavaScript (npm run build), as `npm start` runs it.
  const child = fork('dist/cli.js', ['serve'], {
    execArgv: [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      ...process.env, NODE_ENV: 'production', PORT: String(port), VOUCH_DATABASE_URL: url, VOUCH_LOG_LEVEL: 'warn',
      VOUCH_BOOTSTRAP_CLIENT_ID: ADMIN.id, VOUCH_BOOTSTRAP_CLIENT_SECRET: ADMIN.secret, VOUCH_WORKERS: args.workers!,
      VOUCH_RATE_LIMIT_PER_SECOND: '10000000', VOUCH_RATE_LIMIT_BURST: '20000000', VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE: '100000',
      ...(args.backend === 'postgres' ? { VOUCH_REDIS_URL: REDIS_URL } : {}),
    },
  });
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return { child, port };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('vouch did not start');
}

/** Peak resident set of a process and its children (the cluster workers), in MB. */
function peakRssMb(pid: number): number {
  const read = (p: number) => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  };
  let total = read(pid);
  try {
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) total += read(Number(child));
  } catch { /* no children */ }
  return Math.round(total);
}

function cannon(opts: Options): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

const summary = (r: Result) => ({ rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors });

async function credentials(port: number) {
  const base = `http://127.0.0.1:${port}`;
  const tok = await (await fetch(`${base}/api/v1/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: ADMIN.id, client_secret: ADMIN.secret }) })).json() as { access_token: string };
  const key = await (await fetch(`${base}/api/v1/keys`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tok.access_token}` }, body: JSON.stringify({ name: 'bench', scopes: ['trust:read', 'trust:write', 'dispute:analyze'] }) })).json() as { key: string };
  return { jwt: tok.access_token, key: key.key };
}

/** Score requests per batch call (the endpoint's maximum). */
const BATCH = 100;

/** A random score request (a cache miss): entity, amount and counterparty drawn from `random`. */
function scoreBody(random: () => number) {
  return {
    entity_id: entityId(Math.floor(random() * ENTITIES)),
    amount: Math.round(50 + random() * 500),
    currency: 'USD',
    context: { counterparty_id: entityId(Math.floor(random() * ENTITIES)), payment_method: 'bank_transfer', side: 'sell' },
  };
}

function scoreRequests(headers: Record<string, string>, seed: number): Options['requests'] {
  const random = rng(seed);
  return [{
    method: 'POST', path: '/api/v1/trust/score', headers: { 'content-type': 'application/json', ...headers },
    setupRequest: (req) => ({ ...req, body: JSON.stringify(scoreBody(random)) }),
  }];
}

async function main() {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  const url = databaseUrl();
  const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, backend: args.backend, workers: Number(args.workers), entities: ENTITIES, events: EVENTS, duration_s: DURATION, connections: CONNECTIONS };

  process.stderr.write('baseline: bare Fastify hello world\n');
  const baseline = async () => {
    const hello = await start('bench/hello.ts', [], {});
    const r = summary(await cannon({ url: `http://127.0.0.1:${hello.port}/` }));
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
  await cannon({ url: `http://127.0.0.1:${vouch.port}`, requests: scoreRequests({ 'x-api-key': creds.key }, 1), duration: 3 });
  const small = summary(await cannon({ url: `http://127.0.0.1:${vouch.port}`, requests: scoreRequests({ 'x-api-key': creds.key }, 2), overallRate: 1000 }));
  results.fixed_rate_small = small;
  vouch.child.kill('SIGTERM');
  await new Promise((r) => vouch.child.once('exit', r));

  process.stderr.write(`loading up to ${EVENTS} events\n`);
  results.load_events_per_s = await load(url, SMALL, EVENTS);
  vouch = await startVouch(url);
  creds = await credentials(vouch.port);
  const target = `http://127.0.0.1:${vouch.port}`;
  await cannon({ url: target, requests: scoreRequests({ 'x-api-key': creds.key }, 3), duration: 3 });

  process.stderr.write('scoring with an API key\n');
  results.score_api_key = summary(await cannon({ url: target, requests: scoreRequests({ 'x-api-key': creds.key }, 4) }));
  process.stderr.write('scoring with a JWT\n');
  results.score_jwt = summary(await cannon({ url: target, requests: scoreRequests({ authorization: `Bearer ${creds.jwt}` }, 5) }));
  process.stderr.write('cache hits\n');
  results.score_cache_hit = summary(await cannon({
    url: `${target}/api/v1/trust/score`, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': creds.key },
    body: JSON.stringify({ entity_id: entityId(7), amount: 100, currency: 'USD', context: { payment_method: 'bank_transfer' } }),
  }));
  process.stderr.write('fixed rate 1000 req/s\n');
  results.fixed_rate_full = summary(await cannon({ url: target, requests: scoreRequests({ 'x-api-key': creds.key }, 6), overallRate: 1000 }));
  process.stderr.write('dispute analysis\n');
  const drandom = rng(7);
  results.dispute_analyze = summary(await cannon({
    url: target,
    requests: [{
      method: 'POST', path: '/api/v1/dispute/analyze', headers: { 'content-type': 'application/json', 'x-api-key': creds.key },
      setupRequest: (req) => {
        const b = Math.floor(drandom() * ENTITIES);
        return { ...req, body: JSON.stringify({
          dispute_id: `d-${b}`, trade: { trade_id: `t-${b}`, amount: 150, currency: 'USD', payment_method: 'bank_transfer' },
          buyer_id: entityId(b), seller_id: entityId(b + 1), opened_by: 'buyer', reason: 'asset_not_released',
          evidence: { payment_proof_submitted: true, bank_reference_matches: drandom() < 0.8, payer_name_matches: drandom() < 0.9 },
        }) };
      },
    }],
  }));
  // The high-water mark after single scores and disputes (the issue 13 RSS figure), before the
  // batch and ingestion phases, which hold up to 2,000 requests' bodies at once, raise it.
  results.peak_rss_scoring_mb = peakRssMb(vouch.child.pid!);
  process.stderr.write(`score batches (${BATCH} requests per call)\n`);
  const brandom = rng(8);
  const batch = await cannon({
    url: target,
    requests: [{
      method: 'POST', path: '/api/v1/trust/score/batch', headers: { 'content-type': 'application/json', 'x-api-key': creds.key },
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ requests: Array.from({ length: BATCH }, () => scoreBody(brandom)) }) }),
    }],
  });
  const single = results.score_api_key as { rps: number };
  results.score_batch = {
    ...summary(batch),
    scores_per_s: Math.round(batch.requests.average * BATCH),
    // Against single-score throughput (API key, cache misses) in the same run; issue 13's target is ≥ 20.
    vs_single: Math.round(((batch.requests.average * BATCH) / Math.max(single.rps, 1)) * 10) / 10,
  };
  results.peak_rss_batch_mb = peakRssMb(vouch.child.pid!);
  process.stderr.write('event ingestion (100 events per request)\n');
  let n = 0;
  const ingest = await cannon({
    url: target,
    requests: [{
      method: 'POST', path: '/api/v1/trust/events', headers: { 'content-type': 'application/json', 'x-api-key': creds.key },
      setupRequest: (req) => {
        const events = Array.from({ length: 100 }, () => {
          n += 1;
          return { event_id: `live-${Date.now()}-${n}`, type: 'trade.completed', entity_id: entityId(n % ENTITIES), occurred_at: new Date().toISOString(), amount: 100, currency: 'USD' };
        });
        return { ...req, body: JSON.stringify({ events }) };
      },
    }],
  });
  results.ingest = { ...summary(ingest), events_per_s: Math.round(ingest.requests.average * 100) };
  results.peak_rss_mb = peakRssMb(vouch.child.pid!);
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
    score_api_key: ratio('score_api_key'), score_jwt: ratio('score_jwt'), score_cache_hit: ratio('score_cache_hit'), dispute_analyze: ratio('dispute_analyze'),
  };
  const fs = results.fixed_rate_small as { p50: number };
  const ff = results.fixed_rate_full as { p50: number; p99: number };
  results.p50_drift_percent = Math.round(((ff.p50 - fs.p50) / Math.max(fs.p50, 0.001)) * 1000) / 10;
  const out = args.out ?? join(dir, `bench-${args.backend}-w${args.workers}-${Date.now()}.json`);
  writeFileSync(out, JSON.stringify(results, null, 2));
  console.table(Object.fromEntries(['baseline', 'score_api_key', 'score_jwt', 'score_cache_hit', 'dispute_analyze', 'score_batch', 'ingest', 'fixed_rate_small', 'fixed_rate_full'].map((k) => [k, results[k]])));
  const { scores_per_s: batchScoresPerS, vs_single: batchVsSingle } = results.score_batch as { scores_per_s: number; vs_single: number };
  const { events_per_s: ingestEventsPerS } = results.ingest as { events_per_s: number };
  console.log(JSON.stringify({
    ratios_percent: results.ratios_percent, p50_drift_percent: results.p50_drift_percent, peak_rss_mb: results.peak_rss_mb, peak_rss_scoring_mb: results.peak_rss_scoring_mb, peak_rss_batch_mb: results.peak_rss_batch_mb, load_events_per_s: results.load_events_per_s,
    batch_scores_per_s: batchScoresPerS, batch_vs_single_score: batchVsSingle, ingest_events_per_s: ingestEventsPerS,
  }, null, 2));
  console.log(`written to ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
