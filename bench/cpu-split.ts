// `npx tsx bench/cpu-split.ts`: where a host's CPU goes under load — the primary (the host's one
// SQLite writer) and each worker, in % of a core, read from /proc while wrk drives the compiled
// server (npm run build) for 8 s after a 3 s warm-up. On the store bench/profile-run.ts loaded
// (DB=… for another; it is written to: use a copy to compare two builds), MODE=score|hit|dispute|
// events (bench/wrk/requests.lua), W=workers (default 2), PROF=1 also writes a CPU profile of
// every process to /work/prof.
import { spawn } from 'node:child_process';
import { runWrk, type WrkMode } from './wrk.ts';
import { benchCredentials, benchEnv, childPids, cpuSecondsOf, waitReady } from './server.ts';
import { entityId } from './data.ts';

const port = 18777;
const base = `http://127.0.0.1:${port}`;
const mode = (process.env.MODE ?? 'score') as WrkMode;
const child = spawn(
  'node',
  [
    ...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/work/prof'] : []),
    '--max-old-space-size=1024',
    'dist/cli.js',
    'serve',
  ],
  {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      ...benchEnv(port, `sqlite:${process.env.DB ?? '/work/prof/bench.db'}`, process.env.W ?? '2'),
    },
  },
);
if (!(await waitReady(base))) throw new Error('vouch did not start');
const { key } = await benchCredentials(base);
const ids = Array.from({ length: 10_000 }, (_, i) => entityId(i));
const load = { url: base, mode, connections: 20, ids, auth: `x-api-key: ${key}` };
await runWrk({ ...load, durationS: 3 });
const pids = [child.pid!, ...childPids(child.pid!)];
const before = new Map(pids.map((pid) => [pid, cpuSecondsOf(pid)]));
const result = await runWrk({ ...load, durationS: 8 });
for (const pid of pids)
  console.log(
    `${pid === child.pid ? 'primary' : 'worker '} ${pid}: ${(((cpuSecondsOf(pid) - before.get(pid)!) / 8) * 100).toFixed(0)} % of a core`,
  );
console.log(
  `${mode}: ${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}`,
);
child.kill('SIGINT');
await new Promise((done) => child.once('exit', done));
