// `npx tsx bench/profile-run.ts miss|hit|jwt|batch [reuse]`: one worker under --cpu-prof (profile written to
// $PROFDIR, default /work/prof) answering $DUR s (default 10) of scoring; PGURL=postgres://… profiles
// PostgreSQL + Redis instead of SQLite. Each run starts from a fresh store (the SQLite file
// removed; on PostgreSQL the public schema dropped and Redis's database 3 flushed) unless `reuse`
// keeps the store loaded by the previous run.
import { fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import autocannon from 'autocannon';
import pg from 'pg';
import { Redis } from 'ioredis';
import { openStore } from '../src/store/db.ts';
import { ingestEvents } from '../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../src/model/policy.ts';
import { entityId, history, rng } from './data.ts';
import { benchCredentials, benchEnv, waitReady } from './server.ts';

const ENTITIES = 10_000,
  EVENTS = 100_000;
const path = '/work/prof/bench.db';
const PG = process.env.PGURL;
const dbUrl = PG ?? `sqlite:${path}`;
const mode = process.argv[2] ?? 'miss';
const REDIS_URL = 'redis://127.0.0.1:6379/3';
if (process.argv[3] !== 'reuse') {
  for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
  if (PG) {
    const admin = new pg.Client({ connectionString: PG });
    await admin.connect();
    await admin.query('drop schema if exists public cascade');
    await admin.query('create schema public');
    await admin.end();
    const redis = new Redis(REDIS_URL);
    await redis.flushdb();
    redis.disconnect();
  }
  const store = openStore(dbUrl);
  await store.migrate();
  for (const batch of history(ENTITIES, EVENTS))
    await ingestEvents(store, batch, DEFAULT_POLICY, { environment: 'live' });
  await store.close();
}
const port = 18555;
const child = fork('dist/cli.js', ['serve'], {
  // EXECARGV='--import ./bench/sqlwrap.mjs' times every SQLite statement instead of profiling.
  execArgv: process.env.EXECARGV
    ? process.env.EXECARGV.split(' ')
    : ['--cpu-prof', '--cpu-prof-dir=' + (process.env.PROFDIR ?? '/work/prof')],
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  env: { ...process.env, ...benchEnv(port, dbUrl, '1'), ...(PG ? { VOUCH_REDIS_URL: REDIS_URL } : {}) },
});
const base = `http://127.0.0.1:${port}`;
if (!(await waitReady(base))) throw new Error('vouch did not start');
const { token, key } = await benchCredentials(base);
const random = rng(3);
const hdr = mode === 'jwt' ? { authorization: `Bearer ${token}` } : { 'x-api-key': key };
const item = () => ({
  entity_id: entityId(Math.floor(random() * ENTITIES)),
  amount: Math.round(50 + random() * 500),
  currency: 'USD',
  context: {
    counterparty_id: entityId(Math.floor(random() * ENTITIES)),
    payment_method: 'bank_transfer',
    side: 'sell',
  },
});
const opts: autocannon.Options =
  mode === 'batch'
    ? {
        url: base,
        requests: [
          {
            method: 'POST',
            path: '/api/v1/trust/score/batch',
            headers: { 'content-type': 'application/json', ...hdr },
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ requests: Array.from({ length: 100 }, item) }) }),
          },
        ],
      }
    : mode === 'hit'
      ? {
          url: `${base}/api/v1/trust/score`,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...hdr },
          body: JSON.stringify({
            entity_id: entityId(7),
            amount: 100,
            currency: 'USD',
            context: { payment_method: 'bank_transfer' },
          }),
        }
      : {
          url: base,
          requests: [
            {
              method: 'POST',
              path: '/api/v1/trust/score',
              headers: { 'content-type': 'application/json', ...hdr },
              setupRequest: (req) => ({ ...req, body: JSON.stringify(item()) }),
            },
          ],
        };
const r = await new Promise<autocannon.Result>((res, rej) =>
  autocannon({ connections: 20, duration: Number(process.env.DUR ?? 10), ...opts }, (e, x) => (e ? rej(e) : res(x))),
);
console.log(
  mode,
  'rps',
  Math.round(r.requests.average),
  'p50',
  r.latency.p50,
  'p99',
  r.latency.p99,
  'non2xx',
  r.non2xx,
);
child.kill('SIGINT');
await new Promise((r) => child.once('exit', r));
