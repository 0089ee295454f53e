// Open-loop load at a fixed rate, for "p99 at 1,000 scores/s offered" (issues 13 and 42). Request i is due at
// t0 + i/rate whatever the server is doing, and its latency runs from that due time to the end of its response: a
// stalled server or a late generator counts against the latency instead of quietly lowering the offered load
// (coordinated omission). The generator is C (bench/loadgen/openloop.c, built on first use): the Node one it
// replaces sent 57–251 requests of a run more than 2 ms late, so its p99 was partly its own.
//
// As a script, `npm run bench:open-loop -- [--backend sqlite|postgres|both] [--runs N] [--duration S] [--probe]`:
// 1M events of the bench's history (bench/data.ts; loaded once, kept in bench/results/open-loop/), a compiled
// server (dist/, `npm start`'s flags, one process) on core 0, the generator on core 1, score requests (cache
// misses, each distinct, an API key in Authorization) at --rate after --warmup, and a table. --probe runs the server
// with bench/loadgen/stall-probe.mjs and lines its record up with the slow requests (bench/loadgen/stalls.ts).
import { execFileSync, fork } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runGenerator, type GeneratorResult, type PreparedRequest } from './loadgen/generator.ts';

export type OpenLoopRequest = PreparedRequest;

export interface OpenLoopOptions {
  url: string;
  rate: number;
  durationS: number;
  /** excluded from the figures: connections open and code warms up */
  warmupS?: number;
  maxConnections?: number;
  /** how long a request may wait for its response before it counts as an error */
  timeoutMs?: number;
  request: () => OpenLoopRequest;
  /** writes "due_ms latency_us status" per measured request */
  series?: string;
}

export type OpenLoopResult = GeneratorResult;

/** VOUCH_BENCH_WRK_CPU (bench/cpu-per-request.ts --pin) puts the generator on a core of its own. */
export function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  return runGenerator({
    url: o.url,
    rate: o.rate,
    durationS: o.durationS,
    warmupS: o.warmupS ?? 1,
    connections: o.maxConnections ?? 64,
    timeoutMs: o.timeoutMs ?? 10_000,
    requests: {
      *[Symbol.iterator]() {
        for (;;) yield o.request();
      },
    },
    ...(process.env.VOUCH_BENCH_WRK_CPU ? { cpu: process.env.VOUCH_BENCH_WRK_CPU } : {}),
    ...(o.series ? { series: o.series } : {}),
  });
}

const PG_URL = process.env.VOUCH_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/vouch_open_loop';
const REDIS_URL = process.env.VOUCH_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/4';
const DIR = join(import.meta.dirname, 'results', 'open-loop');

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      backend: { type: 'string', default: 'sqlite' },
      rate: { type: 'string', default: '1000' },
      duration: { type: 'string', default: '60' },
      warmup: { type: 'string', default: '10' },
      runs: { type: 'string', default: '2' },
      entities: { type: 'string', default: '100000' },
      events: { type: 'string', default: '1000000' },
      connections: { type: 'string', default: '64' },
      probe: { type: 'boolean', default: false },
      // --no-pin: on a machine with other work, to see what pinning changes.
      'no-pin': { type: 'boolean', default: false },
      // --nice N: the server and the generator at this niceness (-20, the default, needs root; 0 leaves it). On a
      // shared machine it keeps the neighbours' work from landing in the figures; on a quiet one it changes nothing.
      nice: { type: 'string', default: '-20' },
      // More node flags for the server, e.g. --node-flag=--max-semi-space-size=16.
      'node-flag': { type: 'string', multiple: true, default: [] },
    },
  });
  const backends = args.backend === 'both' ? ['sqlite', 'postgres'] : [args.backend!];
  if (!existsSync('dist/cli.js')) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  const pin = !args['no-pin'];
  // With the scheduler's autogroups (one per session) a niceness counts only inside its group: the bench's own group
  // gets it too, so that other sessions' work does not land in the figures.
  const groupNice = existsSync('/proc/self/autogroup')
    ? (/nice (-?\d+)/.exec(readFileSync('/proc/self/autogroup', 'utf8'))?.[1] ?? '0')
    : undefined;
  if (args.nice !== '0' && groupNice !== undefined) {
    try {
      writeFileSync('/proc/self/autogroup', String(args.nice));
    } catch {
      process.stderr.write('could not set the autogroup niceness: other sessions compete as equals\n');
    }
  }
  // This process only waits on the generator: it stays off the server's core.
  if (pin) execFileSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
  mkdirSync(DIR, { recursive: true });
  const rows: Record<string, unknown>[] = [];
  try {
    for (const backend of backends) {
      const source = await prepareStore(backend, Number(args.entities), Number(args.events));
      for (let run = 1; run <= Number(args.runs); run++) {
        const label = `${backend}-${run}`;
        process.stderr.write(`${label}: ${args.duration} s at ${args.rate}/s after ${args.warmup} s of warm-up\n`);
        rows.push({ backend, run, ...(await measure(backend, source, label, run, args, pin)) });
      }
    }
  } finally {
    // The group outlives this process (it is the session's): hand it back as it was.
    if (args.nice !== '0' && groupNice !== undefined) {
      try {
        writeFileSync('/proc/self/autogroup', groupNice);
      } catch {
        /* it was never set */
      }
    }
  }
  console.table(rows);
}

/** The store every run starts from: a SQLite file (copied per run) or the PostgreSQL database, loaded once. */
async function prepareStore(backend: string, entities: number, events: number): Promise<string> {
  const done = join(DIR, `${backend}-${entities}-${events}.loaded`);
  const target = backend === 'postgres' ? PG_URL : join(DIR, `sqlite-${entities}-${events}.db`);
  if (existsSync(done) && (backend === 'postgres' || existsSync(target))) return target;
  process.stderr.write(`loading ${events} events over ${entities} entities into ${target} (once)\n`);
  if (backend === 'postgres') {
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: PG_URL.replace(/\/[^/]*$/, '/postgres') });
    await admin.connect();
    const name = new URL(PG_URL).pathname.slice(1);
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
    await admin.end();
  } else for (const s of ['', '-wal', '-shm']) rmSync(target + s, { force: true });
  execFileSync('npx', ['tsx', 'bench/load-store.ts', target, String(entities), String(events)], { stdio: 'inherit' });
  execFileSync('touch', [done]);
  return target;
}

/** An executable that runs node at niceness `nice` (child_process.fork runs its execPath with node's arguments). */
function niceNode(nice: string): string {
  const path = join(DIR, `node-nice${nice}`);
  writeFileSync(path, `#!/bin/sh\nexec nice -n ${nice} ${process.execPath} "$@"\n`, { mode: 0o755 });
  return path;
}

type Args = Record<string, string | boolean | string[] | undefined>;

async function measure(backend: string, source: string, label: string, run: number, args: Args, pin: boolean) {
  const { benchEnv } = await import('./server.ts');
  const work = mkdtempSync(join(tmpdir(), 'vouch-open-loop-'));
  let url = source;
  if (backend === 'sqlite') {
    url = `sqlite:${join(work, 'bench.db')}`;
    copyFileSync(source, join(work, 'bench.db'));
  } else {
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    await redis.flushdb();
    redis.disconnect();
  }
  const startFlags = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start
    .split(/\s+/)
    .filter((t) => t.startsWith('--'));
  const probe = args.probe ? join(DIR, `${label}-probe.jsonl`) : undefined;
  if (probe) rmSync(probe, { force: true });
  const port = 19000 + Math.floor(Math.random() * 900);
  const nice = String(args.nice);
  const child = fork('dist/cli.js', ['serve'], {
    // Through nice, so that every thread the server starts has the niceness.
    ...(nice !== '0' ? { execPath: niceNode(nice) } : {}),
    execArgv: [
      ...startFlags,
      ...(probe ? ['--import', './bench/loadgen/stall-probe.mjs'] : []),
      ...(args['node-flag'] as string[]),
    ],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      ...process.env,
      ...benchEnv(port, url, '1'),
      ...(backend === 'postgres' ? { VOUCH_REDIS_URL: REDIS_URL } : {}),
      ...(probe ? { VOUCH_BENCH_PROBE: probe } : {}),
    },
  });
  // -a: every thread, the checkpoint thread and V8's helpers too.
  if (pin) execFileSync('taskset', ['-a', '-cp', '0', String(child.pid)], { stdio: 'ignore' });
  let measured: Awaited<ReturnType<typeof drive>>;
  try {
    measured = await drive(child.pid!, port, run, args, pin, nice, probe && join(DIR, `${label}-series.txt`));
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
    rmSync(work, { recursive: true, force: true });
  }
  // After the server's exit, which writes the last of its record.
  if (probe && measured.series) {
    const { reportStalls } = await import('./loadgen/stalls.ts');
    reportStalls(label, measured.series, probe, measured.startNs);
  }
  return measured.row;
}

async function drive(
  pid: number,
  port: number,
  run: number,
  args: Args,
  pin: boolean,
  nice: string,
  series: string | undefined,
) {
  const { benchCredentials, childPids, cpuSecondsOf, waitReady } = await import('./server.ts');
  const { scoreBody } = await import('./data.ts');
  const { rng } = await import('./data.ts');
  const base = `http://127.0.0.1:${port}`;
  if (!(await waitReady(base, 1200))) throw new Error('vouch did not start');
  if (pin) for (const c of childPids(pid)) execFileSync('taskset', ['-a', '-cp', '0', String(c)]);
  // A retry: on a loaded machine a pooled connection can meet the server's keep-alive timeout.
  const { key } = await benchCredentials(base, ['trust:read', 'trust:write']).catch(() =>
    benchCredentials(base, ['trust:read', 'trust:write']),
  );
  const random = rng(100 + run);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const load = loadavg()[0]!;
  const cpu0 = cpuSecondsOf(pid);
  const r = await runGenerator({
    url: base,
    rate: Number(args.rate),
    durationS: Number(args.duration),
    warmupS: Number(args.warmup),
    connections: Number(args.connections),
    timeoutMs: 10_000,
    requests: {
      *[Symbol.iterator]() {
        for (;;) {
          const body = JSON.stringify(scoreBody(random, Number(args.entities)));
          yield { method: 'POST', path: '/api/v1/trust/score', headers, body };
        }
      },
    },
    ...(pin ? { cpu: '1' } : {}),
    ...(nice !== '0' ? { nice } : {}),
    ...(series ? { series } : {}),
  });
  const cpu = cpuSecondsOf(pid) - cpu0;
  const seconds = Number(args.duration) + Number(args.warmup);
  const row = {
    load: Math.round(load * 10) / 10,
    p50: r.p50,
    p90: r.p90,
    p99: r.p99,
    p999: r.p999,
    max: r.max,
    uncorrected_p99: r.uncorrected_p99,
    late: r.late_sends,
    waited: r.waited_for_connection,
    errors: r.errors,
    non2xx: r.non2xx,
    // The whole run's (warm-up included): a rough figure beside the latencies, not bench/cpu-per-request.ts's.
    cpu_us_per_score: Math.round((cpu / (Number(args.rate) * seconds)) * 1e6),
  };
  return { row, series, startNs: r.start_ns };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
