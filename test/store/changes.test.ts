// The change watcher (src/store/changes.ts): another connection's commit that changes what cached
// reads depend on is seen by the next turn of the event loop; a commit that stores only decisions
// is not a change; data_version is read once per turn, not once per caller.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { freshStore, type TestStore } from '../helpers/app.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';

const hash = (s: string) => createHash('sha256').update(s).digest('hex');

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('ChangeWatcher on SQLite', () => {
  let s: TestStore;
  let other: Store;
  before(async () => {
    s = await freshStore('sqlite');
    other = openStore(s.url);
    await sql`create table t (x integer)`.execute(other.db);
  });
  after(async () => {
    await other.close();
    await s.drop();
  });

  /** The generation after `write` runs on the other connection, as of the next turn's poll. */
  async function moved(write: () => Promise<unknown>): Promise<boolean> {
    const changes = s.store.changes;
    await nextTurn();
    changes.poll();
    const before = changes.generation;
    await write();
    await nextTurn();
    changes.poll();
    return changes.generation !== before;
  }

  test("another connection's event for an entity moves the generation at the first poll of the next turn", async () => {
    const changes = s.store.changes;
    changes.poll();
    await nextTurn();
    changes.poll();
    const before = changes.generation;
    const event = {
      event_id: 'ch-1',
      type: 'trade.completed' as const,
      entity_id: hash('e1'),
      occurred_at: new Date().toISOString(),
      amount: 10,
      currency: 'USD',
      counterparty_id: hash('e2'),
    };
    await ingestEvents(other, [event], DEFAULT_POLICY, { environment: 'live' });
    await nextTurn();
    assert.equal(changes.poll(), true);
    assert.equal(changes.generation, before + 1);
    await nextTurn();
    assert.equal(changes.poll(), false, 'nothing new');
    assert.equal(changes.generation, before + 1);
  });

  test('a commit that stores only decisions, or touches a table no cache reads, leaves the generation alone', async () => {
    assert.equal(await moved(() => sql`insert into t (x) values (1)`.execute(other.db)), false);
    assert.equal(
      await moved(() =>
        other.db
          .insertInto('decisions')
          .values({
            id: 'dec_changes_test',
            kind: 'score',
            environment: 'live',
            principal_id: 'key_x',
            owner_client_id: 'c',
            subject_id: hash('e1'),
            request_digest: hash('r'),
            result: '{}',
            policy_version: 'v',
            created_at: Date.now(),
          } as never)
          .execute(),
      ),
      false,
    );
  });

  test('each table the caches read moves it: an identifier linked, the network state, the revocation feed', async () => {
    const linked = {
      event_id: 'ch-2',
      type: 'identifier.linked' as const,
      entity_id: hash('e3'),
      occurred_at: new Date().toISOString(),
      linked_identifiers: [{ type: 'device' as const, hash: hash('d1') }],
    };
    assert.equal(await moved(() => ingestEvents(other, [linked], DEFAULT_POLICY, { environment: 'live' })), true);
    assert.equal(
      await moved(() => sql`update identifier_stats set flagged_entities = flagged_entities`.execute(other.db)),
      true,
    );
    assert.equal(
      await moved(() =>
        other.db
          .insertInto('revocations')
          .values({ kind: 'key', subject: 'key_x', created_at: Date.now() } as never)
          .execute(),
      ),
      true,
    );
    await sql`insert into network_identity (id, signing_private, signing_public, oprf_secret, oprf_public, created_at) values ('self', 'x', 'x', 'x', 'x', 0)`.execute(
      other.db,
    );
    assert.equal(
      await moved(() => sql`update network_identity set state_version = state_version + 1`.execute(other.db)),
      true,
    );
  });

  test('data_version is read once per turn: later polls of the same turn do not query', async () => {
    const changes = s.store.changes;
    await nextTurn();
    const reads: string[] = [];
    const stmt = changes as unknown as { dataVersion: () => number };
    const original = stmt.dataVersion;
    stmt.dataVersion = () => {
      reads.push('read');
      return original();
    };
    try {
      changes.poll();
      changes.poll();
      changes.poll();
      assert.equal(reads.length, 1);
      await nextTurn();
      changes.poll();
      assert.equal(reads.length, 2);
    } finally {
      stmt.dataVersion = original;
    }
  });

  test("this process's own writes move the generation at once, without a poll", () => {
    const changes = s.store.changes;
    const before = changes.generation;
    changes.localWrite();
    assert.equal(changes.generation, before + 1);
  });
});

describe('ChangeWatcher on a store whose migrations have not run (no store_changes yet)', () => {
  test('every commit of another connection counts as a change, until the counter exists', async () => {
    const path = join(tmpdir(), `vouch-changes-${randomBytes(6).toString('hex')}.db`);
    const store = openStore(`sqlite:${path}`);
    const other = openStore(`sqlite:${path}`);
    try {
      await sql`create table t (x integer)`.execute(other.db);
      const changes = store.changes;
      await nextTurn();
      changes.poll();
      const before = changes.generation;
      await sql`insert into t (x) values (1)`.execute(other.db);
      await nextTurn();
      assert.equal(changes.poll(), true, 'no counter to consult: the commit is a change');
      await other.migrate();
      await nextTurn();
      changes.poll(); // the migration itself, read with the counter now there
      const migrated = changes.generation;
      assert.ok(migrated > before);
      await sql`insert into t (x) values (2)`.execute(other.db);
      await nextTurn();
      assert.equal(changes.poll(), false, 'the counter exists and did not move');
    } finally {
      await other.close();
      await store.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    }
  });
});
