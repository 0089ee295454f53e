// `npx tsx bench/profile-ingest.ts`: in-process ingestion of 100-event batches into a fresh SQLite
// store (run under `node --cpu-prof --import tsx` to see where an event's cost goes).
import { rmSync } from 'node:fs';
import { openStore } from '../src/store/db.ts';
import { ingestEvents } from '../src/trust/ingest.ts';
import { checkEvents } from '../src/trust/schemas.ts';
import { DEFAULT_POLICY } from '../src/model/policy.ts';
import { history } from './data.ts';

const path = process.env.DB ?? '/tmp/vouch-ingest.db';
for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
const store = openStore(`sqlite:${path}`);
await store.migrate();
if (process.env.AUTOCHECKPOINT) store.sqlite!.pragma(`wal_autocheckpoint = ${Number(process.env.AUTOCHECKPOINT)}`);
const batches = [...history(10_000, Number(process.env.EVENTS ?? 100_000))].flatMap((b) =>
  Array.from({ length: Math.ceil(b.length / 100) }, (_, i) => b.slice(i * 100, i * 100 + 100)),
);
// With SQL_TIMES=1: total time per statement text (the first 90 characters), heaviest first.
const times = new Map<string, [number, number]>();
if (process.env.SQL_TIMES) {
  const handle = store.sqlite!;
  const prepare = handle.prepare.bind(handle);
  (handle as unknown as { prepare: typeof prepare }).prepare = ((text: string) => {
    const stmt = prepare(text);
    const key = text.replace(/\s+/g, ' ').slice(0, 90);
    for (const m of ['run', 'all', 'get'] as const) {
      const f = (stmt[m] as (...a: unknown[]) => unknown).bind(stmt);
      (stmt as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
        const t0 = performance.now();
        try {
          return f(...a);
        } finally {
          const e = times.get(key) ?? [0, 0];
          e[0] += performance.now() - t0;
          e[1] += 1;
          times.set(key, e);
        }
      };
    }
    return stmt;
  }) as typeof prepare;
}
const t = performance.now();
let n = 0;
for (const batch of batches) {
  checkEvents(batch, DEFAULT_POLICY.cryptoAssets, { requireHashedIds: false });
  await ingestEvents(store, batch, DEFAULT_POLICY, { environment: 'live', clientId: 'c' });
  n += batch.length;
}
const s = (performance.now() - t) / 1000;
for (const [k, [ms, c]] of [...times].sort((a, b) => b[1][0] - a[1][0]).slice(0, 15))
  console.log(`${((ms / n) * 1000).toFixed(1).padStart(7)} µs/event  ${String(c).padStart(6)}×  ${k}`);
console.log(`${n} events in ${s.toFixed(1)} s: ${Math.round(n / s)} events/s`);
await store.close();
