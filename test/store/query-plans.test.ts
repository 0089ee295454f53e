// The hot query shapes must stay key lookups on SQLite. With the environment leading every key
// (009_environments), a plan can match the environment alone and scan the whole partition, which
// is still correct and so invisible to every other test: it made each score read every identifier
// of its environment (a profile read went from ≈ 25 µs to ≈ 75 µs at 10k entities, worse as the
// store grows). This checks the plans themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/db.ts';
import { PREPARED_TEXTS } from '../../src/store/prepared.ts';
import { currentState, loadProfile } from '../../src/trust/profile.ts';
import { Kysely, SqliteDialect, type CompiledQuery } from 'kysely';
import type { Database } from '../../src/store/schema.ts';
import { readNeighbourhood } from '../../src/rings/read.ts';

const TABLES = [
  'entities',
  'entity_currency',
  'entity_hourly',
  'entity_counterparties',
  'identifiers',
  'identifier_stats',
  'events',
  'decisions',
];

test('profile and cache-state reads search every table by more than the environment, and scan none', async () => {
  const path = join(tmpdir(), `vouch-plans-${randomBytes(6).toString('hex')}.db`);
  const store = openStore(`sqlite:${path}`);
  try {
    await store.migrate();
    const linked = [
      { type: 'device' as const, hash: 'a'.repeat(64) },
      { type: 'email' as const, hash: 'b'.repeat(64) },
    ];
    for (const l of [[], linked]) {
      await loadProfile(store, {
        environment: 'live',
        entityId: 'e',
        currency: 'USD',
        counterpartyId: 'c',
        linked: l,
        now: Date.now(),
      });
      await currentState(store, 'live', 'e', l);
    }
    // SQLite's compiled shapes (other files of a shared process may have compiled PostgreSQL's).
    const reads = [...PREPARED_TEXTS.sqlite].filter((text) => /^\s*select/i.test(text));
    assert.ok(reads.length >= 4, `the hot reads were compiled (${reads.length})`);
    for (const text of reads) {
      const args = Array.from({ length: (text.match(/\?/g) ?? []).length }, () => 'live');
      const plan = (store.sqlite!.prepare(`explain query plan ${text}`).all(...args) as Array<{ detail: string }>).map(
        (r) => r.detail,
      );
      for (const step of plan) {
        assert.doesNotMatch(step, /\(environment=\?\)$/, `a search on the environment alone:\n${plan.join('\n')}`);
        const scanned = /^SCAN (\w+)/.exec(step)?.[1];
        assert.ok(!scanned || !TABLES.includes(scanned), `a full scan of ${scanned}:\n${plan.join('\n')}`);
      }
    }
  } finally {
    await store.close();
    for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
  }
});

test('the ring reads (identifiers, holders, stats) seek by key on SQLite, and scan none', async () => {
  const path = join(tmpdir(), `vouch-plans-${randomBytes(6).toString('hex')}.db`);
  const store = openStore(`sqlite:${path}`);
  try {
    await store.migrate();
    // A chain of shared devices, so every hop of the read runs with several identifiers at once.
    const now = Date.now();
    const ids = Array.from({ length: 12 }, (_, i) => `e${i}`);
    await store.db
      .insertInto('entities')
      .values(
        ids.map((entity_id) => ({
          environment: 'live',
          entity_id,
          version: 1,
          first_seen_at: now,
          last_event_at: now,
          trades_completed: 0,
          trades_cancelled: 0,
          disputes_opened: 0,
          disputes_won: 0,
          disputes_lost: 0,
          chargebacks: 0,
          fraud_reports: 0,
          blocklisted: 0,
          blocklist_changed_at: 0,
          decay_at: now,
          d_trades_completed: 0,
          d_trades_cancelled: 0,
          d_disputes_lost: 0,
          d_chargebacks: 0,
          d_fraud_reports: 0,
          last_trade_at: 0,
          flagged_at: 0,
          disputes_lost_third_party_payment: 0,
          disputes_lost_fake_proof: 0,
          disputes_lost_underpayment: 0,
          disputes_lost_no_payment: 0,
          d_disputes_lost_fraudulent: 0,
        })),
      )
      .execute();
    const links = ids.flatMap((entity_id, i) =>
      [`d${i}`, `d${i + 1}`].map((hash) => ({
        environment: 'live',
        id_type: 'device',
        hash,
        entity_id,
        created_at: now,
      })),
    );
    await store.db.insertInto('identifiers').values(links).execute();
    await store.db
      .insertInto('identifier_stats')
      .values(
        Array.from({ length: 13 }, (_, i) => ({
          environment: 'live',
          id_type: 'device',
          hash: `d${i}`,
          entities: i === 0 || i === 12 ? 1 : 2,
          flagged_entities: 0,
          version: 1,
        })),
      )
      .execute();
    const seen: CompiledQuery[] = [];
    const logged = new Kysely<Database>({
      dialect: new SqliteDialect({ database: store.sqlite! }),
      log: (e) => {
        seen.push(e.query);
      },
    });
    const hood = await readNeighbourhood(
      logged,
      'live',
      'e5',
      [
        { idType: 'device', hash: 'd1' },
        { idType: 'email', hash: 'x' },
      ],
      { depth: 3, fanout: 25, identifiersPerHop: 48, entitiesPerHop: 128 },
    );
    assert.equal(hood.entities.size, 8, "three hops each way along the chain, and the seed's holders");
    assert.ok(seen.length >= 6, `the ring's reads ran (${seen.length})`);
    for (const q of seen) {
      const plan = (
        store.sqlite!.prepare(`explain query plan ${q.sql}`).all(...(q.parameters as unknown[])) as Array<{
          detail: string;
        }>
      ).map((r) => r.detail);
      for (const step of plan) {
        assert.doesNotMatch(step, /\(environment=\?\)$/, `a search on the environment alone:\n${plan.join('\n')}`);
        const scanned = /^SCAN (\w+)/.exec(step)?.[1];
        assert.ok(!scanned || !TABLES.includes(scanned), `a full scan of ${scanned}:\n${plan.join('\n')}`);
      }
    }
  } finally {
    await store.close();
    for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
  }
});
