// Ad-hoc: what Kysely costs per hot read on SQLite. Times loadProfile as it runs (PreparedQuery →
// Kysely → SqliteDriver, which takes a ConnectionMutex per query), the same compiled query through
// db.executeQuery without the row mapping, and the same SQL as a cached better-sqlite3 statement
// called directly (sync, and awaited once as an async store API would be). CPU µs per query.
//   npx tsx bench/micro-kysely.ts        (needs /work/prof/bench.db, see bench/profile-run.ts)
import { CompiledQuery } from 'kysely';
import { openStore } from '../src/store/db.ts';
import { currentState, loadProfile } from '../src/trust/profile.ts';
import { entityId, rng } from './data.ts';

const DB = process.env.DB ?? '/work/prof/bench.db';
const N = Number(process.env.N ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const store = openStore(`sqlite:${DB}`);
const handle = store.sqlite!;
const random = rng(11);
const now = Date.now();
const currencies = ['USD', 'EUR', 'NGN', 'USDT', 'BTC'];
const qs = Array.from({ length: N }, () => {
  const e = Math.floor(random() * 10000);
  return { entityId: entityId(e), currency: currencies[e % 5]!, counterpartyId: entityId(Math.floor(random() * 10000)), now };
});

// Capture each query's SQL and the parameters of every call, as the store runs them.
const captured = new Map<string, unknown[][]>();
const execute = store.db.executeQuery.bind(store.db);
(store.db as { executeQuery: unknown }).executeQuery = (q: CompiledQuery) => {
  captured.set(q.sql, [...(captured.get(q.sql) ?? []), [...q.parameters]]);
  return execute(q);
};
for (const q of qs) await loadProfile(store, q);
for (const q of qs) await currentState(store, q.entityId, []);
(store.db as { executeQuery: unknown }).executeQuery = execute;
const [[profileSql, profileParams], [stateSql, stateParams]] = [...captured.entries()] as [[string, unknown[][]], [string, unknown[][]]];

const times = new Map<string, number[]>();
async function time(name: string, f: (i: number) => unknown) {
  const t = process.cpuUsage();
  for (let i = 0; i < N; i++) await f(i);
  const used = process.cpuUsage(t);
  times.set(name, [...(times.get(name) ?? []), (used.user + used.system) / N]);
}
for (const [label, sql, params] of [['profile', profileSql!, profileParams!], ['state', stateSql!, stateParams!]] as const) {
  const stmt = handle.prepare(sql);
  for (let r = 0; r < ROUNDS; r++) {
    if (label === 'profile') await time('profile: loadProfile (Kysely + row mapping)', (i) => loadProfile(store, qs[i]!));
    else await time('state: currentState (Kysely)', (i) => currentState(store, qs[i]!.entityId, []));
    await time(`${label}: db.executeQuery (Kysely, no mapping)`, (i) => store.db.executeQuery(CompiledQuery.raw(sql, params[i]!)));
    await time(`${label}: better-sqlite3 stmt.all, awaited`, async (i) => stmt.all(params[i]!));
    await time(`${label}: better-sqlite3 stmt.all, sync`, (i) => { stmt.all(params[i]!); });
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, xs] of times) console.log(`${name.padEnd(48)} ${median(xs.slice(1)).toFixed(2)} µs`);
await store.close();
