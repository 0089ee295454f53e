// One SQLite writer per host (audit/host-writer.ts): the workers' decisions commit in the
// primary. Over an in-process channel: rows are acknowledged only after their commit, a failed
// commit fails only the rows it held, and a writer that goes away mid-batch acknowledges nothing of
// it. Against real processes (`serve --workers 2`, loopback only): kill -9 of a worker, of the
// primary (the writer) and of the whole host, each under scoring load, loses no acknowledged decision.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../src/store/db.ts';
import { DecisionWriter, type DecisionRow } from '../../src/audit/decisions.ts';
import {
  HostWriteError,
  HostWriter,
  answerCall,
  decisionHandler,
  type WriterChannel,
} from '../../src/audit/host-writer.ts';
import { hash, event } from '../helpers/trust.ts';
import { ingestionHandler, remoteIngestion } from '../../src/trust/ingest-host.ts';
import { ingestEvents, ingestThrough } from '../../src/trust/ingest.ts';
import { EventConflictError } from '../../src/trust/event-ids.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';
import {
  TEST_TIMEOUT_MS,
  adminToken,
  call,
  createKey,
  sleep,
  startServer,
  waitFor,
  type ServerProcess,
} from '../helpers/processes.ts';

function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

let serial = 0;
function row(id = `d-${randomBytes(6).toString('hex')}-${serial++}`): DecisionRow {
  return {
    id,
    kind: 'score',
    environment: 'live',
    principal_id: 'p',
    owner_client_id: 'c',
    subject_id: hash(id),
    request_digest: 'digest',
    result: '{}',
    policy_version: 'v1',
    created_at: Date.now(),
  };
}

/** A worker's channel and the primary's side joined in one process; `cut()` is the writer dying. */
function linked(writer: DecisionWriter): { channel: WriterChannel; cut(): void; hold: boolean } {
  const listeners: Array<(m: unknown) => void> = [];
  const closers: Array<() => void> = [];
  const state = {
    hold: false,
    channel: {
      send: (message: unknown) => {
        // Structured as the cluster channel sends it: JSON, asynchronously.
        const copy = JSON.parse(JSON.stringify(message)) as unknown;
        setImmediate(
          () =>
            void answerCall({ decisions: decisionHandler(writer) }, copy, (answer) => {
              if (!state.hold) setImmediate(() => listeners.forEach((l) => l(JSON.parse(JSON.stringify(answer)))));
            }),
        );
      },
      onMessage: (l: (m: unknown) => void) => listeners.push(l),
      onClose: (l: () => void) => closers.push(l),
    } as WriterChannel,
    cut: () => closers.forEach((c) => c()),
  };
  return state;
}

async function stored(store: Store, ids: string[]): Promise<Set<string>> {
  const rows =
    ids.length === 0 ? [] : await store.db.selectFrom('decisions').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

describe('host writer protocol [sqlite]', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = tempDir('vouch-host-writer-');
    store = openStore(`sqlite:${join(dir, 'vouch.db')}`);
    await store.migrate();
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('rows are acknowledged once committed; the rows of several workers in one turn share a commit', async () => {
    const host = new DecisionWriter(store.db);
    const a = new DecisionWriter(store.db, undefined, {
      commit: new HostWriter(linked(host).channel).decisionCommit(),
    });
    const b = new DecisionWriter(store.db, undefined, {
      commit: new HostWriter(linked(host).channel).decisionCommit(),
    });
    const rows = Array.from({ length: 20 }, () => row());
    await Promise.all(rows.map((r, i) => (i % 2 ? a : b).write(r)));
    assert.equal(
      (
        await stored(
          store,
          rows.map((r) => r.id),
        )
      ).size,
      20,
    );
  });

  test('a failed commit fails exactly the rows it held; the groups before and after it commit', async () => {
    const host = new DecisionWriter(store.db);
    const worker = new DecisionWriter(store.db, undefined, {
      commit: new HostWriter(linked(host).channel).decisionCommit(),
    });
    const first = row();
    await worker.write(first);
    // A group whose insert fails (a decision id already stored): both of its rows fail…
    const clash = [row(first.id), row()];
    const results = await Promise.allSettled(clash.map((r) => worker.write(r)));
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.ok((results[0] as PromiseRejectedResult).reason instanceof HostWriteError);
    // …nothing of it is stored, and the next group commits.
    const after = row();
    await worker.write(after);
    const present = await stored(store, [first.id, clash[1]!.id, after.id]);
    assert.deepEqual([...present].sort(), [first.id, after.id].sort());
  });

  test('a writer gone mid-batch acknowledges nothing of it, and later writes fail at once', async () => {
    const host = new DecisionWriter(store.db);
    const link = linked(host);
    link.hold = true; // the commit happens, the answer never comes: the writer died after it
    const worker = new DecisionWriter(store.db, undefined, { commit: new HostWriter(link.channel).decisionCommit() });
    const pending = Promise.allSettled([row(), row(), row()].map((r) => worker.write(r)));
    await sleep(20);
    link.cut();
    const outcomes = await pending;
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected'],
    );
    await assert.rejects(worker.write(row()), HostWriteError);
  });
});

describe('event batches through the host writer [sqlite]', () => {
  let dir: string;
  let host: Store;
  let worker: Store;
  before(async () => {
    dir = tempDir('vouch-host-ingest-');
    host = openStore(`sqlite:${join(dir, 'vouch.db')}`);
    await host.migrate();
    worker = openStore(`sqlite:${join(dir, 'vouch.db')}`, { sqliteCheckpoints: 'none' });
    const handler = ingestionHandler(host);
    // JSON both ways, as over the cluster channel.
    ingestThrough(
      worker,
      remoteIngestion(async (kind, payload) => {
        assert.equal(kind, 'events');
        return JSON.parse(JSON.stringify(await handler(JSON.parse(JSON.stringify(payload)))));
      }),
    );
  });
  after(async () => {
    await worker.close();
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a batch is committed by the host, a retry is a duplicate, a reused id with another payload is the conflict', async () => {
    const entity = hash(`host-ingest-${randomBytes(3).toString('hex')}`);
    const events = [
      event('trade.completed', entity, { amount: 10, currency: 'USD' }),
      event('chargeback', entity),
    ] as unknown as TrustEvent[];
    assert.deepEqual(await ingestEvents(worker, events, DEFAULT_POLICY, { environment: 'live', clientId: 'c' }), {
      accepted: 2,
      duplicates: 0,
    });
    assert.deepEqual(await ingestEvents(worker, events, DEFAULT_POLICY, { environment: 'live', clientId: 'c' }), {
      accepted: 0,
      duplicates: 2,
    });
    const row = await worker.db
      .selectFrom('entities')
      .select(['trades_completed', 'chargebacks'])
      .where('entity_id', '=', entity)
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { trades_completed: 1, chargebacks: 1 });
    const reused = [{ ...events[0]!, amount: 99 }];
    await assert.rejects(
      ingestEvents(worker, reused, DEFAULT_POLICY, { environment: 'live', clientId: 'c' }),
      (err) => err instanceof EventConflictError && err.conflicts[0]?.index === 0,
    );
  });
});

// ---------------------------------------------------------------------------------------------

interface Load {
  acknowledged: string[];
  stop(): Promise<void>;
}

/** Score requests from a few loops; the decision ids of every 200 are kept. */
function scoringLoad(base: string, key: string, tag: string): Load {
  const acknowledged: string[] = [];
  let stopping = false;
  const loops = Array.from({ length: 4 }, async (_, c) => {
    for (let n = 0; n < 5000 && !stopping; n++) {
      try {
        const res = await call(base, 'POST', '/api/v1/trust/score', {
          headers: { 'x-api-key': key },
          body: { entity_id: hash(`${tag}-${c}-${n}`), amount: 100 + n, currency: 'USD' },
          timeoutMs: 10_000,
        });
        if (res.status === 200) acknowledged.push(res.body.decision_id as string);
      } catch {
        // killed under this request: its fate is unknown
        await sleep(20);
      }
    }
  });
  return {
    acknowledged,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

async function killUnderScoring(dir: string, what: 'worker' | 'writer' | 'host'): Promise<void> {
  const databaseUrl = `sqlite:${join(dir, `${what}.db`)}`;
  let server: ServerProcess | undefined = await startServer({ env: { VOUCH_DATABASE_URL: databaseUrl }, workers: 2 });
  try {
    const token = await adminToken(server.url);
    const { key } = await createKey(server.url, token, ['trust:read'], 'scorer');
    const load = scoringLoad(server.url, key, `${what}-${randomBytes(3).toString('hex')}`);
    await waitFor('acknowledged scores', () => load.acknowledged.length >= 50, 30_000, 10);
    await sleep(Math.random() * 30);
    if (what === 'worker') assert.ok(server.signalMembers('SIGKILL') >= 1);
    else if (what === 'writer') server.signal('SIGKILL');
    else await server.kill();
    await sleep(300);
    await load.stop();
    await server.kill();
    server = undefined;
    const acknowledged = [...load.acknowledged];
    const store = openStore(databaseUrl);
    try {
      const present = new Set<string>();
      for (let i = 0; i < acknowledged.length; i += 500)
        for (const id of await stored(store, acknowledged.slice(i, i + 500))) present.add(id);
      const lost = acknowledged.filter((id) => !present.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged decisions lost`);
    } finally {
      await store.close();
    }
  } finally {
    await server?.kill();
  }
}

describe('kill -9 under scoring load, two workers and the host writer [sqlite]', () => {
  let dir: string;
  before(() => {
    dir = tempDir('vouch-host-writer-kill-');
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  for (const what of ['worker', 'writer', 'host'] as const) {
    test(`kill -9 of the ${what}: every acknowledged decision is stored`, { timeout: TEST_TIMEOUT_MS }, async () => {
      await killUnderScoring(dir, what);
    });
  }
});
