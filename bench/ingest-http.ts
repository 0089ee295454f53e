// `npx tsx bench/ingest-http.ts [db]`: event ingestion over HTTP alone (100 events per request, 20
// connections, $DUR s), against the compiled server (npm run build) on a copy of a store that
// bench/profile-run.ts loaded (default /work/prof/bench.db), so a change can be measured in a
// minute instead of a whole `npm run bench`.
import { fork } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import autocannon from 'autocannon';
import { entityId } from './data.ts';
import { benchCredentials, benchEnv, waitReady } from './server.ts';

const source = process.argv[2] ?? '/work/prof/bench.db';
const path = '/tmp/vouch-ingest-http.db';
for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
copyFileSync(source, path);
// The store's signing keys are sealed under the key file beside it.
copyFileSync(source.replace(/[^/]*$/, 'vouch.key'), '/tmp/vouch.key');
const port = 18556;
const child = fork('dist/cli.js', ['serve'], {
  execArgv: process.env.EXECARGV ? process.env.EXECARGV.split(' ') : [],
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  env: { ...process.env, ...benchEnv(port, `sqlite:${path}`, '1') },
});
const base = `http://127.0.0.1:${port}`;
if (!(await waitReady(base))) throw new Error('vouch did not start');
const { key } = await benchCredentials(base, ['trust:write']);
let n = 0;
const r = await new Promise<autocannon.Result>((res, rej) =>
  autocannon(
    {
      url: base,
      connections: 20,
      duration: Number(process.env.DUR ?? 10),
      requests: [
        {
          method: 'POST',
          path: '/api/v1/trust/events',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              events: Array.from({ length: 100 }, () => {
                n += 1;
                return {
                  event_id: `live-${n}`,
                  type: 'trade.completed',
                  entity_id: entityId(n % 10_000),
                  occurred_at: new Date().toISOString(),
                  amount: 100,
                  currency: 'USD',
                };
              }),
            }),
          }),
        },
      ],
    },
    (e, x) => (e ? rej(e) : res(x)),
  ),
);
console.log(
  `ingest: ${Math.round(r.requests.average * 100)} events/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non2xx ${r.non2xx}`,
);
child.kill(process.env.EXECARGV ? 'SIGINT' : 'SIGTERM');
await new Promise((done) => child.once('exit', done));
