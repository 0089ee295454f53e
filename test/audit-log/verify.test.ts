// docs/api.md, "Audit log": `vouch audit verify` walks the chain page by page. A clean log passes
// (exit 0, the count); an entry edited after it was written, a deleted entry or two entries swapped
// break it, and the command names the first broken entry (exit 1).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { recordAudit } from '../../src/audit-log/repository.ts';
import { verifyAuditLog } from '../../src/audit-log/verify.ts';
import type { Environment } from '../../src/lib/principal.ts';
import { VOUCH } from '../helpers/vouch-command.ts';

function vouch(args: string[], databaseUrl: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VOUCH_')));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...VOUCH, ...args],
      { env: { ...env, VOUCH_DATABASE_URL: databaseUrl }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

for (const backend of backends()) {
  describe(`vouch audit verify [${backend}]`, () => {
    let fresh: TestStore;
    const ids: string[] = [];
    const ENTRIES = 12;

    before(async () => {
      fresh = await freshStore(backend);
      for (let i = 0; i < ENTRIES; i++) {
        await recordAudit(fresh.store, {
          environment: (i % 3 === 0 ? 'test' : 'live') as Environment,
          actor: { type: i % 2 ? 'user' : 'client', id: `actor-${i % 4}`, name: `Actor ${i % 4}` },
          action: 'rule.updated',
          target: `rule:rul_${i}`,
          before: { status: 'draft' },
          after: { status: 'active', n: i },
        });
      }
      const rows = await fresh.store.db.selectFrom('audit_log').select(['id']).orderBy('seq').execute();
      ids.push(...rows.map((r) => r.id));
    });
    after(() => fresh.drop());

    const rowAt = (seq: number) =>
      fresh.store.db.selectFrom('audit_log').selectAll().where('seq', '=', seq).executeTakeFirstOrThrow();

    test('a clean log: every entry checked, page by page (both environments are one chain)', async () => {
      for (const pageSize of [1, 5, 12, 1000]) {
        const result = await verifyAuditLog(fresh.store.db, pageSize);
        assert.equal(result.broken, undefined);
        assert.equal(result.checked, ENTRIES);
        assert.equal(result.last?.id, ids[ENTRIES - 1]);
      }
      const run = await vouch(['audit', 'verify'], fresh.url);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`audit log intact: ${ENTRIES} entries checked`));
    });

    test('the command line is an actor: clients created and deactivated, never their secret', async () => {
      const made = await vouch(
        [
          'clients',
          'create',
          '--name',
          'ci job',
          '--role',
          'service',
          '--scopes',
          'trust:read',
          '--environment',
          'test',
        ],
        fresh.url,
      );
      assert.equal(made.code, 0, made.stderr);
      const id = /client_id=(\S+)/.exec(made.stdout)![1]!;
      const secret = /client_secret=(\S+)/.exec(made.stdout)![1]!;
      const off = await vouch(['clients', 'deactivate', id], fresh.url);
      assert.equal(off.code, 0, off.stderr);
      const rows = await fresh.store.db
        .selectFrom('audit_log')
        .selectAll()
        .where('target', '=', `client:${id}`)
        .orderBy('seq')
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.action, r.actor_id, r.environment]),
        [
          ['client.created', 'cli', 'test'],
          ['client.deactivated', 'cli', 'test'],
        ],
      );
      assert.match(JSON.parse(rows[0]!.actor).name, /^vouch cli/);
      assert.deepEqual(JSON.parse(rows[0]!.after!), {
        name: 'ci job',
        role: 'service',
        scopes: ['trust:read'],
        environment: 'test',
      });
      assert.ok(!JSON.stringify(rows).includes(secret));
      // Out of the chain again, so the seq-numbered tests below find the entries they expect.
      await fresh.store.db.deleteFrom('audit_log').where('target', '=', `client:${id}`).execute();
    });

    test('an entry whose `after` was edited: broken there, named by seq and id (exit 1)', async () => {
      const row = await rowAt(5);
      await fresh.store.db
        .updateTable('audit_log')
        .set({ after: JSON.stringify({ status: 'active', n: 999 }) })
        .where('seq', '=', 5)
        .execute();
      try {
        const result = await verifyAuditLog(fresh.store.db, 3);
        assert.deepEqual(
          { seq: result.broken?.seq, id: result.broken?.id, reason: result.broken?.reason, checked: result.checked },
          { seq: 5, id: ids[4], reason: 'hash', checked: 4 },
        );
        const run = await vouch(['audit', 'verify'], fresh.url);
        assert.equal(run.code, 1, run.stdout);
        assert.match(run.stderr, new RegExp(`audit log broken at entry 5 \\(${ids[4]}\\): entry 5 was changed`));
        assert.match(run.stdout, /4 entries check out before entry 5/);
      } finally {
        await fresh.store.db.updateTable('audit_log').set({ after: row.after }).where('seq', '=', 5).execute();
      }
      assert.equal((await verifyAuditLog(fresh.store.db)).broken, undefined);
    });

    test('an entry whose actor_id (the column ?actor= filters on) was edited: broken there, though it is outside the hash', async () => {
      const row = await rowAt(6);
      await fresh.store.db
        .updateTable('audit_log')
        .set({ actor_id: 'usr_someone_else' })
        .where('seq', '=', 6)
        .execute();
      try {
        const result = await verifyAuditLog(fresh.store.db, 4);
        assert.deepEqual(
          { seq: result.broken?.seq, id: result.broken?.id, reason: result.broken?.reason, checked: result.checked },
          { seq: 6, id: ids[5], reason: 'actor_id', checked: 5 },
        );
      } finally {
        await fresh.store.db.updateTable('audit_log').set({ actor_id: row.actor_id }).where('seq', '=', 6).execute();
      }
      assert.equal((await verifyAuditLog(fresh.store.db)).broken, undefined);
    });

    test('a deleted entry: a gap, named with the entry found in its place (exit 1)', async () => {
      const row = await rowAt(8);
      await fresh.store.db.deleteFrom('audit_log').where('seq', '=', 8).execute();
      try {
        const result = await verifyAuditLog(fresh.store.db, 4);
        assert.equal(result.broken?.reason, 'gap');
        assert.equal(result.broken?.seq, 8);
        assert.equal(result.broken?.id, ids[8]);
        const run = await vouch(['audit', 'verify'], fresh.url);
        assert.equal(run.code, 1, run.stdout);
        assert.match(run.stderr, new RegExp(`audit log broken: entry 8 is missing \\(next is 9, ${ids[8]}\\)`));
      } finally {
        await fresh.store.db.insertInto('audit_log').values(row).execute();
      }
      assert.equal((await verifyAuditLog(fresh.store.db)).broken, undefined);
    });

    test('the first entry deleted, or two entries swapped: broken', async () => {
      const first = await rowAt(1);
      await fresh.store.db.deleteFrom('audit_log').where('seq', '=', 1).execute();
      assert.deepEqual((await verifyAuditLog(fresh.store.db)).broken?.seq, 1);
      await fresh.store.db.insertInto('audit_log').values(first).execute();

      // Swapped: entries 3 and 4 trade places (their seq), each keeping its own hash.
      const [three, four] = [await rowAt(3), await rowAt(4)];
      const swap = async (a: typeof three, b: typeof three) => {
        await fresh.store.db.deleteFrom('audit_log').where('seq', 'in', [3, 4]).execute();
        await fresh.store.db
          .insertInto('audit_log')
          .values([
            { ...a, seq: 4 },
            { ...b, seq: 3 },
          ])
          .execute();
      };
      await swap(three, four);
      const result = await verifyAuditLog(fresh.store.db);
      assert.equal(result.broken?.seq, 3);
      assert.equal(result.broken?.id, ids[3]);
      const run = await vouch(['audit', 'verify'], fresh.url);
      assert.equal(run.code, 1);
      assert.match(run.stderr, /audit log broken at entry 3/);
      await fresh.store.db.deleteFrom('audit_log').where('seq', 'in', [3, 4]).execute();
      await fresh.store.db.insertInto('audit_log').values([three, four]).execute();
      assert.equal((await verifyAuditLog(fresh.store.db)).broken, undefined);
    });
  });
}
