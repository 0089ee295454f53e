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

const TABLES = ['entities', 'entity_currency', 'entity_hourly', 'entity_counterparties', 'identifiers', 'identifier_stats', 'events', 'decisions'];

test('profile and cache-state reads search every table by more than the environment, and scan none', async () => {
  const path = join(tmpdir(), `vouch-plans-${randomBytes(6).toString('hex')}.db`);
  const store = openStore(`sqlite:${path}`);
  try {
    await store.migrate();
    const linked = [{ type: 'device' as const, hash: 'a'.repeat(64) }, { type: 'email' as const, hash: 'b'.repeat(64) }];
    for (const l of [[], linked]) {
      await loadProfile(store, { environment: 'live', entityId: 'e', currency: 'USD', counterpartyId: 'c', linked: l, now: Date.now() });
      await currentState(store, 'live', 'e', l);
    }
    const reads = [...PREPARED_TEXTS].filter((text) => /^\s*select/i.test(text));
    assert.ok(reads.length >= 4, `the hot reads were compiled (${reads.length})`);
    for (const text of reads) {
      const args = Array.from({ length: (text.match(/\?/g) ?? []).length }, () => 'live');
      const plan = (store.sqlite!.prepare(`explain query plan ${text}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail);
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
