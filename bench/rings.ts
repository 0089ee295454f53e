// `npx tsx bench/rings.ts`: the per-score cost of the ring read (docs/signals.md, "Rings") on a store
// of 1M events and 100k entities, built directly (rows, not ingestion). The entities' identifiers:
// - households: a fifth of the entities in pairs and triples sharing a device;
// - 500 ordinary rings of 8 in a chain (bank accounts and devices rented in pairs), 2 flagged;
// - one 5,000-entity component: each member holds 3 of 1,500 devices (about 10 holders each), so
//   two hops would reach most of it without the caps;
// - 5 hubs of 2,000 holders (a payment processor's account): shown, never traversed.
// Times the score's read and model (loadProfile + evaluate), per case, with the ring read and
// without it (the cost the ring adds), p50 and p99 in µs.
// Options (environment): DB=<sqlite:path | postgres://…> (default a fresh SQLite file), N=<scores per case>.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore } from '../src/store/db.ts';
import { DEFAULT_POLICY } from '../src/model/policy.ts';
import { loadProfile } from '../src/trust/profile.ts';
import { evaluate } from '../src/model/signal-model.ts';
import { blankEntity } from '../src/trust/aggregate-state.ts';
import { chunks } from '../src/store/chunks.ts';
import { entityId, rng } from './data.ts';

const ENTITIES = 100_000;
const EVENTS = 1_000_000;
const N = Number(process.env.N ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'vouch-rings-'));
const url = process.env.DB ?? `sqlite:${join(dir, 'rings.db')}`;
const store = openStore(url);
await store.migrate();
const db = store.db;
const random = rng(21);
const now = Date.now();
const DAY = 86_400_000;
const hex = (s: string) => Buffer.from(s).toString('hex').padEnd(64, '0').slice(0, 64);

const t0 = performance.now();
const links: Array<{ environment: 'live'; id_type: string; hash: string; entity_id: string; created_at: number }> = [];
const link = (e: number, type: string, h: string) =>
  links.push({ environment: 'live', id_type: type, hash: hex(h), entity_id: entityId(e), created_at: now });
const flagged = new Set<number>();
// 0 … 4,999: the big component; 5,000 … 8,999: 500 chained rings of 8; 9,000 … 28,999: households.
for (let e = 0; e < 5000; e++)
  for (let k = 0; k < 3; k++) link(e, 'device', `big-${Math.floor(random() * 1500)}-${e % 7 === 0 ? k : ''}`);
for (let e = 0; e < 5000; e += 97) flagged.add(e);
for (let r = 0; r < 500; r++) {
  for (let i = 0; i < 8; i++) {
    const e = 5000 + r * 8 + i;
    link(e, 'bank_account', `ring-${r}-bank-${Math.floor(i / 2)}`);
    link(e, 'device', `ring-${r}-dev-${Math.floor((i + 1) / 2)}`);
  }
  flagged.add(5000 + r * 8 + 7);
  flagged.add(5000 + r * 8 + 6);
}
for (let e = 9000; e < 29_000; e += 3) for (let i = 0; i < 3; i++) link(e + i, 'device', `home-${e}`);
for (let h = 0; h < 5; h++)
  for (let i = 0; i < 2000; i++) link(30_000 + Math.floor(random() * 70_000), 'other', `hub-${h}`);
const unique = [...new Map(links.map((l) => [`${l.id_type}|${l.hash}|${l.entity_id}`, l])).values()];

await db.transaction().execute(async (trx) => {
  for (const rows of chunks(
    Array.from({ length: ENTITIES }, (_, e) => ({
      ...blankEntity('live', entityId(e)),
      version: 10,
      first_seen_at: now - 200 * DAY,
      last_event_at: now - DAY,
      decay_at: now - DAY,
      trades_completed: 10,
      d_trades_completed: 10,
      last_trade_at: now - DAY,
      fraud_reports: flagged.has(e) ? 1 : 0,
      d_fraud_reports: flagged.has(e) ? 1 : 0,
      flagged_at: flagged.has(e) ? now - 9 * DAY : 0,
    })),
    100,
  ))
    await trx.insertInto('entities').values(rows).execute();
  for (const rows of chunks(
    Array.from({ length: ENTITIES }, (_, e) => ({
      environment: 'live' as const,
      entity_id: entityId(e),
      currency: 'USD',
      trades: 10,
      volume: 1000,
      log_mean: Math.log(100),
      log_m2: 2,
    })),
    200,
  )) {
    await trx.insertInto('entity_currency').values(rows).execute();
  }
  for (const rows of chunks(unique, 200)) await trx.insertInto('identifiers').values(rows).execute();
  await sql`insert into identifier_stats (environment, id_type, hash, entities, flagged_entities, version)
    select i.environment, i.id_type, i.hash, count(*), sum(case when e.fraud_reports > 0 or e.blocklisted = 1 then 1 else 0 end), 1
    from identifiers i join entities e on e.environment = i.environment and e.entity_id = i.entity_id group by i.environment, i.id_type, i.hash`.execute(
    trx,
  );
  for (let start = 0; start < EVENTS; start += 200) {
    await trx
      .insertInto('events')
      .values(
        Array.from({ length: 200 }, (_, i) => {
          const k = start + i;
          return {
            environment: 'live',
            client_id: '',
            event_id: `ev-${k}`,
            entity_id: entityId(k % ENTITIES),
            type: 'trade.completed',
            occurred_at: now - (k % 200) * DAY,
            payload: '{}',
            ingested_at: now,
          };
        }),
      )
      .execute();
  }
});
// PostgreSQL plans from statistics; autovacuum gathers them in a live store, a bulk load must ask.
if (store.dialect === 'postgres') await sql`analyze`.execute(db);
const built = (performance.now() - t0) / 1000;

const cases: Record<string, () => number> = {
  no_ring: () => 30_000 + Math.floor(random() * 70_000),
  household: () => 9000 + Math.floor(random() * 20_000),
  ordinary_ring: () => 5000 + Math.floor(random() * 4000),
  component_5000: () => Math.floor(random() * 5000),
};
const pct = (xs: number[], p: number) =>
  xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const out: Record<string, unknown> = {};
for (const [name, pick] of Object.entries(cases)) {
  for (const ring of [true, false]) {
    const times: number[] = [];
    let nodes = 0;
    let value = 0;
    for (let i = 0; i < N + 200; i++) {
      const id = entityId(pick());
      const t = performance.now();
      const { profile } = await loadProfile(store, {
        environment: 'live',
        entityId: id,
        currency: 'USD',
        now,
        ...(ring ? { ringFanout: DEFAULT_POLICY.maxIdentifierFanout } : {}),
      });
      const { values } = evaluate(
        profile,
        { entity_id: id, amount: 100, currency: 'USD', context: {} },
        DEFAULT_POLICY,
        now,
      );
      if (i >= 200) {
        times.push((performance.now() - t) * 1000);
        nodes += profile.ring?.nodes.length ?? 0;
        value += values.ring_flagged_entities;
      }
    }
    out[`${name}${ring ? '' : ' (ring read off)'}`] = {
      p50_us: Math.round(pct(times, 0.5)),
      p99_us: Math.round(pct(times, 0.99)),
      mean_ring_nodes: Number((nodes / N).toFixed(1)),
      mean_ring_flagged_value: Number((value / N).toFixed(3)),
    };
  }
}
console.log(
  JSON.stringify(
    {
      store: url.split(':')[0],
      entities: ENTITIES,
      events: EVENTS,
      identifier_links: unique.length,
      build_seconds: Number(built.toFixed(1)),
      scores_per_case: N,
      cases: out,
    },
    null,
    2,
  ),
);
await store.close();
rmSync(dir, { recursive: true, force: true });
