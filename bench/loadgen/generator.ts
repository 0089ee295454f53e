// The constant-rate generator (bench/loadgen/openloop.c) from TypeScript: compiled with gcc -O2 into
// bench/results/loadgen/ when missing or older than its source, fed a file of prepared raw HTTP/1.1
// requests, run (on a core of its own when asked) and its JSON line read back. Why it is C and what it
// corrects: the header of openloop.c.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PreparedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface GeneratorOptions {
  url: string;
  rate: number;
  durationS: number;
  /** sent but not measured: connections open, the server's code warms up */
  warmupS: number;
  connections: number;
  timeoutMs: number;
  /** the requests in order; the generator goes round again if the run needs more */
  requests: Iterable<PreparedRequest>;
  /** a core for the generator (taskset -c) */
  cpu?: string;
  /** its niceness (nice -n) */
  nice?: string;
  /** writes "due_ms latency_us status" per measured request */
  series?: string;
}

export interface GeneratorResult {
  /** when request 0 was due, on CLOCK_MONOTONIC (process.hrtime's clock) in ns */
  start_ns: number;
  offered_rps: number;
  rps: number;
  sent: number;
  completed: number;
  /** milliseconds, from each request's due time (corrected for coordinated omission) */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  /** from the moment a request was written, as a closed-loop tool would report it */
  uncorrected_p99: number;
  uncorrected_max: number;
  /** the generator's own worst lateness, with a connection free */
  max_send_lag: number;
  non2xx: number;
  errors: number;
  /** requests sent more than 2 ms after they were due with a connection free: the generator fell behind */
  late_sends: number;
  /** requests that fell due while every connection waited for a response (the server was behind) */
  waited_for_connection: number;
}

const SOURCE = join(import.meta.dirname, 'openloop.c');
const BUILD = join(import.meta.dirname, '..', 'results', 'loadgen');
const BINARY = join(BUILD, 'openloop');

/** The generator's binary, compiled first if it is missing or older than openloop.c. */
export function generatorBinary(): string {
  if (!existsSync(BINARY) || statSync(BINARY).mtimeMs < statSync(SOURCE).mtimeMs) {
    mkdirSync(BUILD, { recursive: true });
    execFileSync('gcc', ['-O2', '-Wall', '-Wextra', '-o', BINARY, SOURCE], { stdio: 'inherit' });
  }
  return BINARY;
}

/** The requests as the file the generator reads: each raw request framed as "<bytes>\n<request>". */
function requestFile(host: string, requests: Iterable<PreparedRequest>, count: number): string {
  const parts: Buffer[] = [];
  let n = 0;
  for (const r of requests) {
    const body = Buffer.from(r.body ?? '');
    const head =
      `${r.method} ${r.path} HTTP/1.1\r\nhost: ${host}\r\n` +
      Object.entries(r.headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      `content-length: ${body.length}\r\n\r\n`;
    const raw = Buffer.concat([Buffer.from(head), body]);
    parts.push(Buffer.from(`${raw.length}\n`), raw);
    if (++n >= count) break;
  }
  mkdirSync(BUILD, { recursive: true });
  const file = join(BUILD, `requests-${process.pid}.txt`);
  writeFileSync(file, Buffer.concat(parts));
  return file;
}

export function runGenerator(o: GeneratorOptions): Promise<GeneratorResult> {
  const binary = generatorBinary();
  const target = new URL(o.url);
  const file = requestFile(target.host, o.requests, Math.ceil(o.rate * (o.warmupS + o.durationS)));
  const args = [
    ...['--host', target.hostname === 'localhost' ? '127.0.0.1' : target.hostname, '--port', target.port],
    ...['--rate', String(o.rate), '--duration', String(o.durationS), '--warmup', String(o.warmupS)],
    ...['--connections', String(o.connections), '--timeout-ms', String(o.timeoutMs), '--requests', file],
    ...(o.series ? ['--series', o.series] : []),
  ];
  const pinned = o.cpu ? ['taskset', '-c', o.cpu, binary, ...args] : [binary, ...args];
  const [command, ...argv] = (o.nice ? ['nice', '-n', o.nice, ...pinned] : pinned) as [string, ...string[]];
  return new Promise((resolve, reject) => {
    execFile(command, argv, { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`openloop failed: ${err.message}\n${stderr}`));
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (!line) return reject(new Error(`openloop printed no result:\n${stdout}${stderr}`));
      resolve(JSON.parse(line) as GeneratorResult);
    });
  });
}
