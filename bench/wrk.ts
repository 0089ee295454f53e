// Closed-loop load with wrk (Debian's package), the generator issue 13 measured with: written in C,
// it leaves the server most of the machine, where autocannon (Node) takes a whole core of two.
// The request shapes live in bench/wrk/requests.lua; this file runs it and reads its JSON line.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type WrkMode = 'score' | 'hit' | 'dispute' | 'batch' | 'events' | 'fixed';

export interface WrkOptions {
  url: string;
  mode: WrkMode;
  durationS: number;
  connections: number;
  /** entity ids the requests draw from (written to a file the script reads) */
  ids?: readonly string[];
  /** e.g. "x-api-key: vch_…" */
  auth?: string;
  /** mode "fixed": what to send */
  method?: string;
  path?: string;
  body?: string;
  seed?: number;
}

export interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export function wrkAvailable(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    // wrk prints its usage and exits 1 for --version: it is there.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

const SCRIPT = join(import.meta.dirname, 'wrk', 'requests.lua');

export function runWrk(o: WrkOptions): Promise<WrkResult> {
  let idsFile: string | undefined;
  if (o.ids) {
    mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
    idsFile = join(import.meta.dirname, 'results', 'wrk-ids.txt');
    writeFileSync(idsFile, `${o.ids.join('\n')}\n`);
  }
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    VOUCH_BENCH_MODE: o.mode,
    VOUCH_BENCH_SEED: String(o.seed ?? 1),
    ...(idsFile ? { VOUCH_BENCH_IDS: idsFile } : {}),
    ...(o.auth ? { VOUCH_BENCH_AUTH: o.auth } : {}),
    ...(o.method ? { VOUCH_BENCH_METHOD: o.method } : {}),
    ...(o.path ? { VOUCH_BENCH_PATH: o.path } : {}),
    ...(o.body ? { VOUCH_BENCH_BODY: o.body } : {}),
  };
  // One thread: on two cores a second one would only take CPU from the server.
  const args = ['-t1', `-c${o.connections}`, `-d${o.durationS}s`, '--timeout', '10s', '-s', SCRIPT, o.url];
  return new Promise((resolve, reject) => {
    // VOUCH_BENCH_WRK_CPU pins wrk to a core of its own (bench/cpu-per-request.ts --pin), so the
    // load generator never takes CPU time from the server it measures.
    const pin = process.env.VOUCH_BENCH_WRK_CPU;
    const [file, argv] = pin ? ['taskset', ['-c', pin, 'wrk', ...args]] : ['wrk', args];
    execFile(file, argv, { env, maxBuffer: 1 << 20 }, (err, stdout) => {
      if (err) return reject(err);
      const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
      if (!line) return reject(new Error(`wrk printed no result:\n${stdout}`));
      const r = JSON.parse(line) as {
        requests: number;
        duration_us: number;
        p50_us: number;
        p99_us: number;
        non2xx: number;
        errors: number;
      };
      resolve({
        rps: Math.round(r.requests / (r.duration_us / 1e6)),
        p50: Math.round(r.p50_us / 10) / 100,
        p99: Math.round(r.p99_us / 10) / 100,
        non2xx: r.non2xx,
        errors: r.errors,
      });
    });
  });
}
