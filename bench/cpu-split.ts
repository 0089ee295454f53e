// `npx tsx bench/cpu-split.ts`: where a host's CPU goes under load — the primary (the host's one
// SQLite writer) and each worker, in % of a core, read from /proc while wrk drives the compiled
// server (npm run build) for 8 s after a 3 s warm-up. On the store bench/profile-run.ts loaded
// (DB=… for another; it is written to: use a copy to compare two builds), MODE=score|hit|dispute|
// events (bench/wrk/requests.lua), W=workers (default 2), PROF=1 also writes a CPU profile of
// every process to /work/prof.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { runWrk, type WrkMode } from './wrk.ts';
import { entityId } from './data.ts';

const port = 18777;
const base = `http://127.0.0.1:${port}`;
const mode = (process.env.MODE ?? 'score') as WrkMode;
const child = spawn('node', [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/work/prof'] : []), '--max-old-space-size=1024', 'dist/cli.js', 'serve'], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: {
    ...process.env, NODE_ENV: 'production', PORT: String(port), VOUCH_DATABASE_URL: `sqlite:${process.env.DB ?? '/work/prof/bench.db'}`, VOUCH_LOG_LEVEL: 'warn',
    VOUCH_BOOTSTRAP_CLIENT_ID: 'bench-admin', VOUCH_BOOTSTRAP_CLIENT_SECRET: 'bench-admin-secret-0123456789', VOUCH_WORKERS: process.env.W ?? '2',
    VOUCH_RATE_LIMIT_PER_SECOND: '10000000', VOUCH_RATE_LIMIT_BURST: '20000000',
  },
});
for (let i = 0; i < 200; i++) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break;
  } catch { /* not up yet */ }
  await new Promise((r) => setTimeout(r, 100));
}
const tok = await (await fetch(`${base}/api/v1/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: 'bench-admin', client_secret: 'bench-admin-secret-0123456789' }) })).json() as { access_token: string };
const key = (await (await fetch(`${base}/api/v1/keys`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tok.access_token}` }, body: JSON.stringify({ name: 'bench', scopes: ['trust:read', 'trust:write', 'dispute:analyze'] }) })).json() as { key: string }).key;

const processes = () => execFileSync('sh', ['-c', `echo ${child.pid}; pgrep -P ${child.pid}`]).toString().trim().split('\n').map(Number);
/** user + system CPU seconds of a process (/proc/PID/stat fields 14 and 15, in clock ticks of 1/100 s) */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const ids = Array.from({ length: 10_000 }, (_, i) => entityId(i));
const load = { url: base, mode, connections: 20, ids, auth: `x-api-key: ${key}` };
await runWrk({ ...load, durationS: 3 });
const pids = processes();
const before = new Map(pids.map((pid) => [pid, cpuSeconds(pid)]));
const result = await runWrk({ ...load, durationS: 8 });
for (const pid of pids) console.log(`${pid === child.pid ? 'primary' : 'worker '} ${pid}: ${(((cpuSeconds(pid) - before.get(pid)!) / 8) * 100).toFixed(0)} % of a core`);
console.log(`${mode}: ${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}`);
child.kill('SIGINT');
await new Promise((done) => child.once('exit', done));
