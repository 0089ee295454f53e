// What GET /api/v1/rules/stats costs the serving thread (docs/benchmarks.md, "Rule statistics"):
// 300,000 score decisions with a match over 90 days, 10 asks with different `days` at once, read in
// place (as before) and through the worker thread; the event loop's longest stall in each case.
// Run: node --import tsx bench/rule-stats.ts [decisions]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/db.ts';
import { ruleStats } from '../src/rules/stats.ts';
import { ruleStatsOff } from '../src/rules/stats-thread.ts';

const total = Number(process.argv[2] ?? 300_000);
const dir = mkdtempSync(join(tmpdir(), 'vouch-bench-stats-'));
const store = openStore(`sqlite:${join(dir, 'v.db')}`);
await store.migrate();
const now = Date.now();
const rules = JSON.stringify([{ id: 'rul_a', name: 'a', version: 1, action: 'review', reads: { amount: 10 } }]);
for (let i = 0; i < total; i += 1000) {
  await store.db
    .insertInto('decisions')
    .values(
      Array.from({ length: Math.min(1000, total - i) }, (_, j) => ({
        id: `dec_${i + j}`,
        kind: 'score',
        environment: 'live',
        principal_id: 'p',
        owner_client_id: 'c',
        subject_id: 'e',
        request_digest: 'd',
        result: '{}',
        policy_version: 'v1',
        created_at: now - ((i + j) % 90) * 86_400_000 - j,
        rules,
        shadow_rules: (i + j) % 3 === 0 ? rules : null,
      })),
    )
    .execute();
}
const days = [7, 14, 21, 30, 40, 50, 60, 70, 80, 90];
for (const [name, run] of [
  ['in place', (d: number) => ruleStats(store.db, 'live', d, now, undefined)],
  ['worker thread', (d: number) => ruleStatsOff(store, 'live', d, now, undefined)],
] as const) {
  // the longest gap between ticks of a 5 ms timer, measured until a tick after the asks ended
  let last = performance.now();
  let stalled = 0;
  const ticker = setInterval(() => {
    const at = performance.now();
    stalled = Math.max(stalled, at - last);
    last = at;
  }, 5);
  const t = performance.now();
  await Promise.all(days.map(run));
  const took = performance.now() - t;
  await new Promise((r) => setTimeout(r, 20));
  clearInterval(ticker);
  console.log(`${name}: 10 asks in ${(took / 1000).toFixed(1)} s; event loop stalled at most ${stalled.toFixed(0)} ms`);
}
await store.close();
rmSync(dir, { recursive: true, force: true });
