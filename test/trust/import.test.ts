// `vouch events import FILE.ndjson`: every bad line is reported with its number and skipped; the
// good lines are stored exactly once, through the library function and through the real CLI.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backends, freshStore } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { importFile } from '../../src/trust/import.ts';
import { openStore } from '../../src/store/db.ts';

const ALICE = hash('import-alice');
const BOB = hash('import-bob');
const PHONE = hash('import-phone');
const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString();

const good1 = {
  event_id: 'imp-1',
  type: 'trade.completed',
  entity_id: ALICE,
  occurred_at: at(5),
  amount: 120,
  currency: 'USD',
  counterparty_id: BOB,
};
const good2 = { event_id: 'imp-2', type: 'fraud.reported', entity_id: BOB, occurred_at: at(4) };
const good3 = {
  event_id: 'imp-3',
  type: 'identifier.linked',
  entity_id: ALICE,
  occurred_at: at(3),
  linked_identifiers: [{ type: 'phone', hash: PHONE }],
};

// line: content
const LINES: string[] = [
  /* 1 */ JSON.stringify(good1),
  /* 2 */ JSON.stringify(good2),
  /* 3 */ '',
  /* 4 */ JSON.stringify(good1), // duplicate of line 1
  /* 5 */ '{"event_id": "imp-broken", "type": "chargeback",',
  /* 6 */ JSON.stringify({ ...good2, event_id: 'imp-bad-type', type: 'trade.exploded' }),
  /* 7 */ JSON.stringify({ ...good2, event_id: 'imp-raw', entity_id: 'mallory@example.com' }),
  // (a trade.completed without amount and currency is valid, docs/api.md, "Trust scoring"; a currency without an amount
  // is not)
  /* 8 */ JSON.stringify({
    event_id: 'imp-no-amount',
    type: 'trade.completed',
    entity_id: ALICE,
    occurred_at: at(2),
    currency: 'USD',
  }),
  /* 9 */ '   ',
  /* 10 */ JSON.stringify(good3),
  /* 11 */ '42',
  /* 12 */ JSON.stringify({ ...good2, event_id: 'imp-leap', occurred_at: '2016-12-31T23:59:60Z' }), // passes the format; Date.parse cannot read it
];
// with a byte-order mark, as some exporters write it
const CONTENT = `\uFEFF${LINES.join('\n')}\n`;
const REJECTED_LINES = [5, 6, 7, 8, 11, 12];

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'vouch-import-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

for (const backend of backends()) {
  describe(`events import [${backend}]`, () => {
    test('good lines accepted, a duplicate counted, bad lines rejected with their line numbers', async () => {
      const file = join(dir, `events-${backend}.ndjson`);
      writeFileSync(file, CONTENT);
      const fresh = await freshStore(backend);
      try {
        const drawn: string[] = [];
        const summary = await importFile(fresh.store, file, { policyFile: undefined }, (s) => drawn.push(s));
        assert.equal(summary.accepted, 3);
        assert.equal(summary.duplicates, 1);
        assert.equal(summary.rejectedCount, REJECTED_LINES.length);
        assert.deepEqual(
          summary.rejected.map((r) => r.line),
          REJECTED_LINES,
        );
        const reason = (line: number) => summary.rejected.find((r) => r.line === line)?.reason ?? '';
        assert.match(reason(5), /JSON/);
        assert.match(reason(6), /type/);
        assert.match(reason(7), /entity_id/);
        assert.ok(!reason(7).includes('mallory'), 'the raw identifier is never echoed');
        assert.match(reason(8), /^amount: /);
        assert.match(reason(12), /occurred_at/);
        assert.ok(drawn.at(-1)?.includes('100%'), 'the progress bar ends at 100%');

        const stored = await fresh.store.db
          .selectFrom('events')
          .select(['event_id', 'entity_id'])
          .orderBy('event_id')
          .execute();
        assert.deepEqual(stored, [
          { event_id: 'imp-1', entity_id: ALICE },
          { event_id: 'imp-2', entity_id: BOB },
          { event_id: 'imp-3', entity_id: ALICE },
        ]);
        const alice = await fresh.store.db
          .selectFrom('entities')
          .selectAll()
          .where('entity_id', '=', ALICE)
          .executeTakeFirstOrThrow();
        assert.equal(Number(alice.trades_completed), 1);
        const bob = await fresh.store.db
          .selectFrom('entities')
          .selectAll()
          .where('entity_id', '=', BOB)
          .executeTakeFirstOrThrow();
        assert.equal(Number(bob.fraud_reports), 1);
        const ids = await fresh.store.db.selectFrom('identifiers').select(['id_type', 'hash', 'entity_id']).execute();
        assert.deepEqual(ids, [{ id_type: 'phone', hash: PHONE, entity_id: ALICE }]);

        // importing the same file again changes nothing: every good line is now a duplicate
        const again = await importFile(fresh.store, file, { policyFile: undefined });
        assert.deepEqual([again.accepted, again.duplicates, again.rejectedCount], [0, 4, REJECTED_LINES.length]);
        assert.equal(
          Number(
            (
              await fresh.store.db
                .selectFrom('entities')
                .select('trades_completed')
                .where('entity_id', '=', ALICE)
                .executeTakeFirstOrThrow()
            ).trades_completed,
          ),
          1,
        );
      } finally {
        await fresh.drop();
      }
    });
  });
}

for (const backend of backends()) {
  describe(`events import: reused event ids [${backend}]`, () => {
    test('a line reusing an event_id for a different event is rejected on its own; the rest of its batch is stored', async () => {
      const file = join(dir, `reused-${backend}.ndjson`);
      const stored = { ...good1, event_id: 'imp-reused-0' };
      writeFileSync(
        file,
        [
          JSON.stringify({ ...good1, event_id: 'imp-reused-1' }),
          JSON.stringify({ ...good1, event_id: 'imp-reused-1', amount: 999 }),
          JSON.stringify(good2),
          JSON.stringify({ ...stored, type: 'chargeback', amount: undefined, currency: undefined }),
        ].join('\n'),
      );
      const fresh = await freshStore(backend);
      try {
        // imp-reused-0 was imported before, as a trade
        const first = join(dir, `reused-first-${backend}.ndjson`);
        writeFileSync(first, `${JSON.stringify(stored)}\n`);
        assert.equal((await importFile(fresh.store, first, { policyFile: undefined })).accepted, 1);
        const summary = await importFile(fresh.store, file, { policyFile: undefined });
        assert.deepEqual([summary.accepted, summary.duplicates], [2, 0]);
        assert.deepEqual(summary.rejected.map((r) => r.line).sort(), [2, 4]);
        assert.ok(
          summary.rejected.every((r) => /already used for a different event/.test(r.reason)),
          JSON.stringify(summary.rejected),
        );
        const alice = await fresh.store.db
          .selectFrom('entities')
          .selectAll()
          .where('entity_id', '=', ALICE)
          .executeTakeFirstOrThrow();
        assert.deepEqual([Number(alice.trades_completed), Number(alice.chargebacks)], [2, 0]);
      } finally {
        await fresh.drop();
      }
    });
  });
}

describe('vouch events import (CLI)', () => {
  test('prints the summary with rejected line numbers, stores the good lines and exits 1 because lines were rejected', async () => {
    const file = join(dir, 'cli.ndjson');
    writeFileSync(file, `${LINES.join('\r\n')}\r\n`); // CRLF line ends
    const db = join(dir, 'cli.db');
    const res = spawnSync(process.execPath, ['bin/vouch.js', 'events', 'import', file], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? dir,
        VOUCH_DATABASE_URL: `sqlite:${db}`,
        VOUCH_LOG_LEVEL: 'error',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(res.status, 1, `exit ${res.status}: ${res.stderr}`);
    const lines = res.stdout.trim().split('\n');
    assert.equal(lines[0], `accepted 3, duplicates 1, rejected ${REJECTED_LINES.length}`);
    assert.deepEqual(
      lines.slice(1).map((l) => Number(/^ {2}line (\d+): /.exec(l)?.[1])),
      REJECTED_LINES,
    );
    assert.ok(!res.stdout.includes('mallory') && !res.stderr.includes('mallory'));
    const store = openStore(`sqlite:${db}`);
    try {
      const stored = await store.db.selectFrom('events').select('event_id').orderBy('event_id').execute();
      assert.deepEqual(
        stored.map((r) => r.event_id),
        ['imp-1', 'imp-2', 'imp-3'],
      );
    } finally {
      await store.close();
    }
  });
  test('--environment test stores the lines as test data: the same event ids already imported live are new there (exit 0)', async () => {
    const file = join(dir, 'cli-env.ndjson');
    writeFileSync(file, `${JSON.stringify(good1)}\n`);
    const db = join(dir, 'cli-env.db');
    const run = (...extra: string[]) =>
      spawnSync(process.execPath, ['bin/vouch.js', 'events', 'import', file, ...extra], {
        cwd: join(import.meta.dirname, '..', '..'),
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? dir,
          VOUCH_DATABASE_URL: `sqlite:${db}`,
          VOUCH_LOG_LEVEL: 'error',
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
    for (const extra of [[], ['--environment', 'test']]) {
      const res = run(...extra);
      assert.equal(res.status, 0, `exit ${res.status}: ${res.stderr}`);
      assert.equal(res.stdout.trim(), 'accepted 1, duplicates 0, rejected 0');
    }
    assert.notEqual(run('--environment', 'staging').status, 0, 'an unknown environment is refused');
    const store = openStore(`sqlite:${db}`);
    try {
      const stored = await store.db
        .selectFrom('events')
        .select(['environment', 'event_id'])
        .orderBy('environment')
        .execute();
      assert.deepEqual(
        stored.map((r) => [r.environment, r.event_id]),
        [
          ['live', 'imp-1'],
          ['test', 'imp-1'],
        ],
      );
      const alice = await store.db
        .selectFrom('entities')
        .select('environment')
        .where('entity_id', '=', ALICE)
        .orderBy('environment')
        .execute();
      assert.deepEqual(
        alice.map((r) => r.environment),
        ['live', 'test'],
      );
    } finally {
      await store.close();
    }
  });
});
