// Real processes for the scale and fault suites: `vouch serve` on a free port, a throwaway
// `redis-server`, and a throwaway PostgreSQL cluster (initdb + pg_ctl in a temp dir). Stopping or
// restarting these never disturbs the machine's shared PostgreSQL and Redis. Every process runs in
// a process group of its own and is killed, group and all, when its test stops it — or, failing
// that, when the test process exits.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { VOUCH_SOURCES } from './vouch-command.ts';
import { REPO_ROOT } from './repo-root.ts';

const execFileAsync = promisify(execFile);
const ROOT = REPO_ROOT;

/** Every scale test fails rather than hangs: bounded well above its normal run (seconds). */
export const TEST_TIMEOUT_MS = 120_000;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Last-resort cleanups, run synchronously if the test process exits with something still running. */
const leftovers = new Set<() => void>();
process.on('exit', () => {
  for (const cleanup of leftovers) {
    try {
      cleanup();
    } catch {
      // best effort
    }
  }
});

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** The pids of a process group's members, from /proc (Linux). */
export function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so split after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Binds `port` (0: the kernel's pick) on 127.0.0.1 and lets it go: the port, or undefined when it is taken. */
function probePort(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', (err: NodeJS.ErrnoException) =>
      port !== 0 && (err.code === 'EADDRINUSE' || err.code === 'EACCES') ? resolve(undefined) : reject(err),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * The ports freePort picks from: below the kernel's ephemeral range (ip_local_port_range), which
 * is where the kernel finds the local port of every outgoing connection and of every listen(0).
 * A port picked inside that range is free when picked but may be taken as the source port of
 * some connection (this process's, another test file's, any process's) before the child process
 * binds it, and the child then fails with EADDRINUSE; below the range only an explicit bind takes
 * a port. Undefined when the range leaves no room below it (then the kernel picks).
 */
const PICKED_PORTS = ((): { low: number; high: number } | undefined => {
  let first = 32768;
  try {
    first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    // not Linux: assume the IANA dynamic range starts above
  }
  const low = 20_000;
  const high = Math.min(first, 32_768) - 1;
  return Number.isFinite(high) && high - low >= 1000 ? { low, high } : undefined;
})();

/** Ports this process has handed out: each is given once, so two servers of one test never share one. */
const handedOut = new Set<number>();

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now, and that no outgoing connection will
 * take meanwhile (see PICKED_PORTS): random, so test files running at once rarely try the same
 * one, and checked by binding it.
 */
export async function freePort(): Promise<number> {
  if (PICKED_PORTS) {
    const { low, high } = PICKED_PORTS;
    for (let attempt = 0; attempt < 200; attempt++) {
      const candidate = low + Math.floor(Math.random() * (high - low + 1));
      if (handedOut.has(candidate)) continue;
      const port = await probePort(candidate);
      if (port !== undefined) {
        handedOut.add(port);
        return port;
      }
    }
  }
  return (await probePort(0))!;
}

/** Resolves true when a TCP connection to the port is refused (nothing listens). */
export function connectionRefused(port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code === 'ECONNREFUSED');
    });
  });
}

/** Polls `check` until it returns true (or a value), failing after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | false | undefined> | T | false | undefined,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`,
      );
    }
    await sleep(everyMs);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Spawns a process as the leader of a new process group, keeping the tail of its output. */
function spawnGroup(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string }) {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-64 * 1024);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // A spawn failure (ENOENT) also ends in 'exit'-less 'error': report it as an exit.
  const failed = new Promise<Exit>((resolve) => child.once('error', () => resolve({ code: -1, signal: null })));
  const pid = child.pid;
  const cleanup = () => killGroup(pid, 'SIGKILL');
  leftovers.add(cleanup);
  let gone = false;
  const done = Promise.race([exited, failed]).then((exit) => {
    gone = true;
    return exit;
  });
  return {
    child,
    pid: pid ?? -1,
    exited: done,
    isRunning: () => !gone,
    output: () => output,
    /** SIGKILL to the whole group; resolves when the leader has exited. */
    async killGroup(): Promise<Exit> {
      killGroup(pid, 'SIGKILL');
      const exit = await done;
      leftovers.delete(cleanup);
      return exit;
    },
    forget: () => leftovers.delete(cleanup),
  };
}

// ---------------------------------------------------------------------------------------------
// vouch serve

export interface ServerOptions {
  /** VOUCH_* variables (nothing VOUCH_* is inherited from the test process) */
  env: Record<string, string>;
  /** `serve --workers N`; 1 (one process, no cluster) unless given */
  workers?: number;
  port?: number;
  readyTimeoutMs?: number;
}

export interface ServerProcess {
  port: number;
  url: string;
  pid: number;
  exited: Promise<Exit>;
  isRunning(): boolean;
  output(): string;
  /** a signal to the server process only (the cluster primary, with workers) */
  signal(signal: NodeJS.Signals): void;
  /** a signal to every process of the group but the leader (the cluster workers); Linux only */
  signalMembers(signal: NodeJS.Signals): number;
  /** SIGKILL to the process and every worker it started */
  kill(): Promise<Exit>;
  /** SIGTERM, then SIGKILL to the group if it has not exited after `graceMs` */
  stop(graceMs?: number): Promise<Exit>;
}

export const ADMIN = { id: 'scale-admin', secret: 'scale-admin-secret-0123456789' };

/** The environment of a child process: ours without VOUCH_*, PORT, HOST or the test runner's markers. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('VOUCH_') && k !== 'PORT' && k !== 'HOST' && k !== 'NODE_TEST_CONTEXT',
    ),
  );
  return { ...base, ...extra };
}

/** Runs a `vouch` command (not serve) to completion with the given VOUCH_* variables. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [...VOUCH_SOURCES, ...args], {
      cwd: ROOT,
      env: childEnv(env),
      timeout: timeoutMs,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Starts `vouch serve` and waits until /readyz answers 200 (ready or degraded). */
export async function startServer(options: ServerOptions): Promise<ServerProcess> {
  const port = options.port ?? (await freePort());
  const env = childEnv({
    VOUCH_LOG_LEVEL: 'warn',
    VOUCH_BOOTSTRAP_CLIENT_ID: ADMIN.id,
    VOUCH_BOOTSTRAP_CLIENT_SECRET: ADMIN.secret,
    VOUCH_TOKEN_RATE_LIMIT_PER_MINUTE: '100000',
    VOUCH_PASSWORD_COST: '15',
    ...options.env,
    PORT: String(port),
    HOST: '127.0.0.1',
  });
  const proc = spawnGroup(process.execPath, [...VOUCH_SOURCES, 'serve', '--workers', String(options.workers ?? 1)], {
    env,
  });
  const url = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    port,
    url,
    pid: proc.pid,
    exited: proc.exited,
    isRunning: proc.isRunning,
    output: proc.output,
    signal(signal) {
      if (proc.isRunning()) process.kill(proc.pid, signal);
    },
    signalMembers(signal) {
      const members = groupMembers(proc.pid).filter((pid) => pid !== proc.pid);
      for (const pid of members) {
        try {
          process.kill(pid, signal);
        } catch {
          // gone
        }
      }
      return members.length;
    },
    kill: () => proc.killGroup(),
    async stop(graceMs = 15_000) {
      if (proc.isRunning()) process.kill(proc.pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(proc.pid, 'SIGKILL'), graceMs);
      const exit = await proc.exited;
      clearTimeout(timer);
      // Workers of a primary that died anyway.
      killGroup(proc.pid, 'SIGKILL');
      proc.forget();
      return exit;
    },
  };
  try {
    await waitFor(
      `vouch on port ${port} to be ready`,
      async () => {
        if (!proc.isRunning()) throw new Error(`vouch exited early:\n${proc.output()}`);
        const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        return res.status === 200;
      },
      options.readyTimeoutMs ?? 60_000,
      100,
    );
  } catch (err) {
    await proc.killGroup();
    throw new Error(`${(err as Error).message}\n--- output ---\n${proc.output()}`);
  }
  return server;
}

// ---------------------------------------------------------------------------------------------
// Throwaway Redis

export interface RedisProcess {
  port: number;
  url: string;
  /** SIGKILL: Redis is gone at once, as in a crash */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: Redis hangs (connections stay open, nothing answers) / resumes */
  pause(): void;
  resume(): void;
  /** starts it again on the same port (empty: nothing is persisted) */
  start(): Promise<void>;
  /** stops it for good */
  close(): Promise<void>;
}

export function hasBinary(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** One RESP command over a raw socket; resolves with the first reply line. */
export function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('redis did not answer'));
    }, 2000);
    socket.on('connect', () =>
      socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`),
    );
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(data);
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

export async function startRedis(): Promise<RedisProcess> {
  const port = await freePort();
  let proc: ReturnType<typeof spawnGroup> | undefined;
  const launch = async () => {
    proc = spawnGroup(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { cwd: tmpdir() },
    );
    const current = proc;
    await waitFor(
      `redis-server on port ${port}`,
      async () => {
        if (!current.isRunning()) throw new Error(`redis-server exited:\n${current.output()}`);
        return (await redisCommand(port, 'PING')).startsWith('+PONG');
      },
      15_000,
      50,
    );
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      await proc?.killGroup();
    },
    pause() {
      if (proc) killGroup(proc.pid, 'SIGSTOP');
    },
    resume() {
      if (proc) killGroup(proc.pid, 'SIGCONT');
    },
    start: launch,
    async close() {
      if (proc) killGroup(proc.pid, 'SIGCONT');
      await proc?.killGroup();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Throwaway PostgreSQL cluster

export interface PostgresCluster {
  port: number;
  /** the cluster's `postgres` database as the `postgres` superuser (trust authentication) */
  url: string;
  /** pg_ctl stop -m fast: every connection is terminated and the port closes */
  stop(): Promise<void>;
  /** pg_ctl start, waiting until it accepts connections */
  start(): Promise<void>;
  /** pg_ctl stop -m immediate and the temp dir removed */
  destroy(): Promise<void>;
}

function postgresBinDir(): string | undefined {
  if (process.env.VOUCH_TEST_PG_BIN) return process.env.VOUCH_TEST_PG_BIN;
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(join(base, v, 'bin', 'initdb'))) return join(base, v, 'bin');
  }
  return hasBinary('initdb') ? '' : undefined;
}

/** Why a throwaway cluster cannot be made here, or undefined when it can. */
export function postgresUnavailable(): string | undefined {
  if (postgresBinDir() === undefined)
    return 'PostgreSQL server binaries (initdb, pg_ctl) not found; set VOUCH_TEST_PG_BIN';
  if (process.getuid?.() === 0 && !hasBinary('runuser')) return 'running as root without runuser';
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status !== 0)
    return 'running as root and there is no postgres OS user';
  return undefined;
}

/** PostgreSQL refuses to run as root: as root, its binaries run as the `postgres` OS user. */
function pgCommand(bin: string, args: string[]): [string, string[]] {
  const dir = postgresBinDir() ?? '';
  const path = dir ? join(dir, bin) : bin;
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
}

async function pg(bin: string, args: string[], cwd: string): Promise<string> {
  const [command, argv] = pgCommand(bin, args);
  try {
    const { stdout, stderr } = await execFileAsync(command, argv, { cwd, timeout: 120_000 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

export async function startPostgres(): Promise<PostgresCluster> {
  const reason = postgresUnavailable();
  if (reason) throw new Error(reason);
  const dir = mkdtempSync(join(tmpdir(), 'vouch-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  if (process.getuid?.() === 0) {
    const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString().trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  const stopNow = () => {
    if (!existsSync(join(data, 'postmaster.pid'))) return;
    const [command, argv] = pgCommand('pg_ctl', ['-D', data, 'stop', '-m', 'immediate', '-w']);
    spawnSync(command, argv, { cwd: dir, stdio: 'ignore', timeout: 30_000 });
  };
  const cleanup = () => {
    stopNow();
    rmSync(dir, { recursive: true, force: true });
  };
  leftovers.add(cleanup);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=100`;
  const start = async () => {
    await pg('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o', options, 'start'], dir);
  };
  try {
    await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'], dir);
    await start();
  } catch (err) {
    const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-4000) : '';
    cleanup();
    leftovers.delete(cleanup);
    throw new Error(`${(err as Error).message}\n${tail}`);
  }
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await pg('pg_ctl', ['-D', data, 'stop', '-m', 'fast', '-w', '-t', '60'], dir);
    },
    start,
    async destroy() {
      if (existsSync(join(data, 'postmaster.pid')))
        await pg('pg_ctl', ['-D', data, 'stop', '-m', 'immediate', '-w', '-t', '60'], dir).catch(() => '');
      rmSync(dir, { recursive: true, force: true });
      leftovers.delete(cleanup);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP against a real server

export interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

/** One request with a JSON body (if any); never throws on an HTTP status, only on a network error. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // not JSON (metrics)
  }
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * As `call`, but a 429 is waited out (Retry-After) and the request sent again: for the set-up
 * requests of tests that run with a low rate limit.
 */
export async function patientCall(
  base: string,
  method: string,
  path: string,
  options: Parameters<typeof call>[3] = {},
): Promise<Reply> {
  for (let attempt = 0; ; attempt++) {
    const res = await call(base, method, path, options);
    if (res.status !== 429 || attempt >= 20) return res;
    await sleep(Math.max(100, Number(res.headers.get('retry-after') ?? '1') * 1000));
  }
}

/** An access token for the bootstrap admin of a server started by startServer. */
export async function adminToken(base: string): Promise<string> {
  const res = await patientCall(base, 'POST', '/api/v1/auth/token', {
    body: { client_id: ADMIN.id, client_secret: ADMIN.secret },
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${res.text}`);
  return res.body.access_token as string;
}

/** Creates an API key (as the admin) and returns its id and secret. */
export async function createKey(
  base: string,
  token: string,
  scopes: string[],
  name = 'scale test',
): Promise<{ id: string; key: string }> {
  const res = await patientCall(base, 'POST', '/api/v1/keys', {
    headers: { authorization: `Bearer ${token}` },
    body: { name, scopes },
  });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.text}`);
  return { id: res.body.id as string, key: res.body.key as string };
}

/** Asserts an RFC 9457 problem with the given status and code; returns the body. */
export function expectProblem(res: Reply, status: number, code: string): Record<string, unknown> {
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text}`);
  if (!String(res.headers.get('content-type')).startsWith('application/problem+json'))
    throw new Error(`not problem+json: ${res.headers.get('content-type')}`);
  if (res.body.code !== code || res.body.status !== status || res.body.type !== `/problems/${code}`)
    throw new Error(`bad problem body: ${res.text}`);
  return res.body;
}

/**
 * A request whose body arrives in two halves: the first now, the rest on `finish()`. Until then it
 * is certainly in flight on the server (headers read, authenticated, waiting for its body).
 */
export function halfSentRequest(port: number, path: string, headers: Record<string, string>, body: unknown) {
  const payload = Buffer.from(JSON.stringify(body));
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': payload.length },
  });
  const response = new Promise<{ status: number; text: string; at: number }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, at: performance.now() }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  // Reported through `response` only when the caller looks at it.
  response.catch(() => {});
  req.write(payload.subarray(0, Math.floor(payload.length / 2)));
  return {
    response,
    finish: () => req.end(payload.subarray(Math.floor(payload.length / 2))),
  };
}
