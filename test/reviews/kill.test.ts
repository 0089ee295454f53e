// docs/api.md, "Reviews": a decision and the review it opens commit together, under kill -9 too.
// A real `vouch serve` scores under load with a policy whose every outcome opens a review; the
// writing process is killed mid-load (one process on each store; with two workers on SQLite, the
// primary, which commits every worker's decisions). Afterwards: every acknowledged decision is
// stored with its review, every stored review has its decision, and every stored decision whose
// outcome is review or hold has its review.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore } from '../../src/store/db.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { backends, freshStore, type Backend } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
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

// Generous bounds (never asserted on): on a loaded host, workers under tsx take a minute to start.
const READY_MS = 180_000;
const TIMEOUT_MS = TEST_TIMEOUT_MS + READY_MS;

const dir = mkdtempSync(join(tmpdir(), 'vouch-reviews-kill-'));
const policyFile = join(dir, 'policy.json');
// Every level opens a review: low and medium review, high and critical hold (outcomes only grow in severity).
writeFileSync(
  policyFile,
  JSON.stringify({
    ...(JSON.parse(JSON.stringify(DEFAULT_POLICY)) as object),
    version: `reviews-kill-${randomBytes(3).toString('hex')}`,
    outcomes: { low: 'review', medium: 'review', high: 'hold', critical: 'hold' },
  }),
);

/** Scores from four loops until stopped; the decision ids of every 200. */
function scoringLoad(base: string, key: string) {
  const acknowledged: string[] = [];
  let stopping = false;
  const tag = randomBytes(3).toString('hex');
  const loops = Array.from({ length: 4 }, async (_, c) => {
    for (let n = 0; n < 5000 && !stopping; n++) {
      try {
        const res = await call(base, 'POST', '/api/v1/trust/score', {
          headers: { 'x-api-key': key },
          body: { entity_id: hash(`${tag}-${c}-${n}`), amount: 100 + n, currency: 'USD' },
          timeoutMs: 10_000,
        });
        if (res.status === 200) {
          assert.ok(
            res.body.outcome === 'review' || res.body.outcome === 'hold',
            `outcome ${String(res.body.outcome)}`,
          );
          acknowledged.push(res.body.decision_id as string);
        }
      } catch (err) {
        if (err instanceof assert.AssertionError) throw err;
        await sleep(20); // killed under this request: its fate is unknown
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

async function killWhileScoring(databaseUrl: string, workers: 1 | 2): Promise<void> {
  let server: ServerProcess | undefined = await startServer({
    env: { VOUCH_DATABASE_URL: databaseUrl, VOUCH_POLICY_FILE: policyFile },
    workers,
    readyTimeoutMs: READY_MS,
  });
  try {
    const token = await adminToken(server.url);
    const { key } = await createKey(server.url, token, ['trust:read'], 'scorer');
    const load = scoringLoad(server.url, key);
    await waitFor('acknowledged scores', () => load.acknowledged.length >= 50, 30_000, 10);
    await sleep(Math.random() * 30);
    server.signal('SIGKILL'); // the writing process: the only one, or the cluster's primary
    await sleep(300);
    await load.stop();
    await server.kill();
    server = undefined;
    const store = openStore(databaseUrl);
    try {
      const acknowledged = [...load.acknowledged];
      for (let i = 0; i < acknowledged.length; i += 500) {
        const part = acknowledged.slice(i, i + 500);
        const withReview = await store.db
          .selectFrom('decisions')
          .innerJoin('reviews', 'reviews.decision_id', 'decisions.id')
          .select('decisions.id')
          .where('decisions.id', 'in', part)
          .execute();
        assert.equal(withReview.length, part.length, 'every acknowledged decision is stored with its review');
      }
      const orphans = await store.db
        .selectFrom('reviews')
        .leftJoin('decisions', 'decisions.id', 'reviews.decision_id')
        .select('reviews.id')
        .where('decisions.id', 'is', null)
        .execute();
      assert.deepEqual(orphans, [], 'a review without its decision');
      const unreviewed = await store.db
        .selectFrom('decisions')
        .leftJoin('reviews', 'reviews.decision_id', 'decisions.id')
        .select('decisions.id')
        .where('decisions.outcome', 'in', ['review', 'hold'])
        .where('reviews.id', 'is', null)
        .execute();
      assert.deepEqual(unreviewed, [], 'a review or hold decision without its review');
      const stored = await store.db
        .selectFrom('reviews')
        .select(sql<number>`count(*)`.as('n'))
        .executeTakeFirstOrThrow();
      assert.ok(Number(stored.n) >= acknowledged.length);
    } finally {
      await store.close();
    }
  } finally {
    await server?.kill();
  }
}

after(() => rmSync(dir, { recursive: true, force: true }));

for (const backend of backends()) {
  describe(`kill -9 while scoring, every outcome opening a review [${backend}]`, () => {
    test('one process: decisions and reviews are stored together or not at all', { timeout: TIMEOUT_MS }, async () => {
      await withDatabase(backend, (url) => killWhileScoring(url, 1));
    });
    if (backend === 'sqlite') {
      test(
        "two workers and the host's writer, the writer killed: the openings crossed the channel and committed with their decisions",
        { timeout: TIMEOUT_MS },
        async () => {
          await withDatabase(backend, (url) => killWhileScoring(url, 2));
        },
      );
    }
  });
}

/** A fresh database the server migrates: a SQLite file, or a PostgreSQL schema of its own. */
async function withDatabase(backend: Backend, fn: (url: string) => Promise<void>): Promise<void> {
  if (backend === 'sqlite') return fn(`sqlite:${join(dir, `${randomBytes(4).toString('hex')}.db`)}`);
  const fresh = await freshStore(backend);
  try {
    await fn(fresh.url);
  } finally {
    await fresh.drop();
  }
}
