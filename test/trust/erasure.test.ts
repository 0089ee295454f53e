// Erasure DELETE /api/v1/trust/entities/{id} (docs/api.md, an admin action): events, aggregates and identifier links
// gone in one transaction; decisions kept with a salted digest; no cached score served afterwards,
// on this instance or another; no trace of the id in any table (nor, on SQLite, in the file).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { event, hash, postEvents, score } from '../helpers/trust.ts';
import { wellBehaved, nasty } from '../helpers/fuzz.ts';
import { buildApp } from '../../src/app.ts';

const ENTITIES = '/api/v1/trust/entities';
const TABLES = [
  'webhook_events',
  'webhook_fanouts',
  'events',
  'entities',
  'entity_currency',
  'entity_hourly',
  'entity_counterparties',
  'identifiers',
  'identifier_stats',
  'decisions',
  'revocations',
  'idempotency_keys',
] as const;

describeEachBackend(
  'Entity erasure',
  (ctx, backend) => {
    let admin: string;
    let operator: string;
    let eraser: string;
    let scoredBefore: { decision_id: string };
    const tag = `${process.pid}-${Date.now()}`;
    const X = hash(`erase-me-${tag}`);
    const Y = hash(`partner-${tag}`);
    const Z = hash(`sharer-${tag}`);
    const DEVICE = { type: 'device', hash: hash(`shared-device-${tag}`) };
    const erase = (id: string, token = eraser) =>
      ctx().inject({ method: 'DELETE', url: `${ENTITIES}/${encodeURIComponent(id)}`, headers: bearer(token) });

    async function tableDump(): Promise<string> {
      const parts: string[] = [];
      for (const table of TABLES)
        parts.push(JSON.stringify(await ctx().store.db.selectFrom(table).selectAll().execute()));
      return parts.join('\n');
    }

    before(async () => {
      admin = await ctx().token();
      operator = await ctx().token(['trust:read', 'trust:write', 'audit:read'], 'operator');
      eraser = await ctx().token(['trust:read', 'trust:write'], 'admin');
      const hook = await ctx().inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: bearer(admin),
        payload: { url: 'http://127.0.0.1:9/erased', events: ['entity.erased', 'entity.flagged'] },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      await postEvents(ctx(), admin, [
        event('trade.completed', X, { amount: 120, currency: 'USD', counterparty_id: Y }, 7_200_000),
        event('trade.completed', X, { amount: 80, currency: 'EUR', counterparty_id: Y }, 3_000_000),
        event('trade.completed', Y, { amount: 80, currency: 'USD', counterparty_id: X }, 3_000_000),
        event('identifier.linked', X, { linked_identifiers: [DEVICE] }),
        event('identifier.linked', Z, { linked_identifiers: [DEVICE] }),
        event('dispute.opened', Z, { counterparty_id: X }),
        event('fraud.reported', X),
      ]);
    });

    test('before: the entity exists, is flagged on the shared identifier and scores are cached', async () => {
      assert.equal(
        (await ctx().inject({ method: 'GET', url: `${ENTITIES}/${X}`, headers: bearer(admin) })).statusCode,
        200,
      );
      const stats = await ctx()
        .store.db.selectFrom('identifier_stats')
        .selectAll()
        .where('hash', '=', DEVICE.hash)
        .executeTakeFirstOrThrow();
      assert.equal(Number(stats.entities), 2);
      // The fraud report is announced: its fan-out (or the events it became) names the entity.
      const fanouts = await ctx().store.db.selectFrom('webhook_fanouts').select(['facts', 'plan']).execute();
      const events = await ctx().store.db.selectFrom('webhook_events').select('data').execute();
      assert.ok(
        [...fanouts.map((f) => f.facts + (f.plan ?? '')), ...events.map((e) => e.data)].some((text) =>
          text.includes(X),
        ),
      );
      assert.equal(Number(stats.flagged_entities), 1);
      const first = await score(ctx(), operator, { entity_id: X, amount: 50, currency: 'USD' });
      assert.equal(first.statusCode, 200);
      assert.equal((await score(ctx(), operator, { entity_id: X, amount: 50, currency: 'USD' })).json().cached, true);
      // A stored idempotent response and an operator's note that name the entity.
      const keyed = await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        headers: { ...bearer(operator), 'idempotency-key': `erase-idem-${tag}` },
        payload: { entity_id: X, amount: 51, currency: 'USD' },
      });
      assert.equal(keyed.statusCode, 200, keyed.body);
      scoredBefore = keyed.json();
      const label = await ctx().inject({
        method: 'POST',
        url: `/api/v1/decisions/${first.json().decision_id}/label`,
        headers: bearer(admin),
        payload: { label: 'fraud', note: `same device as ${X}, see ticket 7` },
      });
      assert.equal(label.statusCode, 200, label.body);
    });

    test('erasure: 403 for an operator or service principal even with trust:write, naming the scope; 403 without trust:write; 401 without credentials', async () => {
      problem(await erase(X, await ctx().token(['trust:write'])), 403, 'insufficient_scope');
      const byOperator = await erase(X, operator);
      problem(byOperator, 403, 'insufficient_scope');
      assert.equal(
        byOperator.headers['www-authenticate'],
        'Bearer realm="vouch", error="insufficient_scope", scope="trust:write"',
      );
      problem(await erase(X, await ctx().token(['trust:read'], 'operator')), 403, 'insufficient_scope');
      problem(await ctx().inject({ method: 'DELETE', url: `${ENTITIES}/${X}` }), 401, 'unauthenticated');
      problem(await erase('alice@example.com'), 400, 'raw_identifier_rejected');
    });

    test('DELETE: 200 {entity_id, events_deleted}; GET is then 404; no trace of the id in any table', async () => {
      const decisionIds = (
        await ctx().store.db.selectFrom('decisions').select('id').where('subject_id', '=', X).execute()
      ).map((r) => r.id);
      assert.ok(decisionIds.length >= 1);
      const res = await erase(X);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { entity_id: X, events_deleted: 4 });
      problem(await ctx().inject({ method: 'GET', url: `${ENTITIES}/${X}`, headers: bearer(admin) }), 404, 'not_found');
      const dump = await tableDump();
      if (dump.includes(X)) {
        // Name where, so an intermittent failure says which write landed after the erasure.
        const where: string[] = [];
        for (const table of TABLES) {
          const rows = await ctx().store.db.selectFrom(table).selectAll().execute();
          for (const row of rows) if (JSON.stringify(row).includes(X)) where.push(`${table}: ${JSON.stringify(row)}`);
        }
        assert.fail(`the erased id is still stored: ${where.join('; ').slice(0, 2000)}`);
      }
      // The partners keep their own history, with the digest where the id was.
      assert.equal(
        (await ctx().inject({ method: 'GET', url: `${ENTITIES}/${Y}`, headers: bearer(admin) })).statusCode,
        200,
      );
      const cp = await ctx()
        .store.db.selectFrom('entity_counterparties')
        .selectAll()
        .where('entity_id', '=', Y)
        .execute();
      assert.equal(cp.length, 1);
      assert.match(cp[0]!.counterparty_id, /^erased_[0-9a-f]{64}$/);
      // Decisions stay, subject and result naming one digest.
      const rows = await ctx().store.db.selectFrom('decisions').selectAll().where('id', 'in', decisionIds).execute();
      assert.equal(rows.length, decisionIds.length);
      for (const row of rows) {
        assert.equal(row.subject_id, cp[0]!.counterparty_id);
        assert.equal(JSON.parse(row.result).entity_id, row.subject_id);
      }
      const audit = await ctx().inject({
        method: 'GET',
        url: `/api/v1/decisions/${decisionIds[0]}`,
        headers: bearer(admin),
      });
      assert.equal(audit.statusCode, 200);
      assert.ok(!audit.body.includes(X));
      // identifier_stats: the shared device now has one holder, none flagged; Z's link stays.
      const stats = await ctx()
        .store.db.selectFrom('identifier_stats')
        .selectAll()
        .where('hash', '=', DEVICE.hash)
        .executeTakeFirstOrThrow();
      assert.equal(Number(stats.entities), 1);
      assert.equal(Number(stats.flagged_entities), 0);
      assert.equal(
        (await ctx().store.db.selectFrom('identifiers').selectAll().where('entity_id', '=', Z).execute()).length,
        1,
      );
    });

    test('the erasure is recorded (who, when, counts; the digest, never the id) and announced as entity.erased', async () => {
      const digest = (
        await ctx()
          .store.db.selectFrom('entity_counterparties')
          .select('counterparty_id')
          .where('entity_id', '=', Y)
          .executeTakeFirstOrThrow()
      ).counterparty_id;
      const records = await ctx()
        .store.db.selectFrom('erasures')
        .selectAll()
        .where('entity_digest', '=', digest)
        .execute();
      assert.equal(records.length, 1);
      assert.equal(Number(records[0]!.events_deleted), 4);
      assert.match(records[0]!.principal_id, /^cli_/);
      const events = await ctx()
        .store.db.selectFrom('webhook_events')
        .selectAll()
        .where('type', '=', 'entity.erased')
        .execute();
      assert.equal(events.length, 1);
      const data = JSON.parse(events[0]!.data);
      assert.equal(data.entity_id, digest);
      assert.equal(data.erasure_id, records[0]!.id);
      assert.equal(data.events_deleted, 4);
      assert.equal(events[0]!.owner_client_id, null);
    });

    test('label notes and stored idempotent responses name the digest, not the id', async () => {
      const note = (
        await ctx().store.db.selectFrom('decisions').select('label_note').where('label_note', 'is not', null).execute()
      ).map((r) => r.label_note ?? '');
      assert.ok(
        note.some((n) => /^same device as erased_[0-9a-f]{64}, see ticket 7$/.test(n)),
        note.join(),
      );
      const replay = await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        headers: { ...bearer(operator), 'idempotency-key': `erase-idem-${tag}` },
        payload: { entity_id: X, amount: 51, currency: 'USD' },
      });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.json().decision_id, scoredBefore.decision_id);
      assert.ok(!replay.body.includes(X), 'the replayed response still names the erased id');
      assert.match(replay.json().entity_id, /^erased_[0-9a-f]{64}$/);
    });

    if (backend === 'sqlite')
      test('SQLite: the id is not in the database file or its WAL', async () => {
        const path = ctx().store.sqlite!.name;
        for (const file of [path, `${path}-wal`]) {
          if (!existsSync(file)) continue;
          assert.ok(!readFileSync(file).includes(Buffer.from(X)), `${file} still holds the id`);
        }
      });

    test('after erasure a score is computed afresh, never served from a cache; a second DELETE is 200 with 0 events', async () => {
      const res = await score(ctx(), operator, { entity_id: X, amount: 50, currency: 'USD' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().cached, false);
      const again = await erase(X);
      assert.equal(again.statusCode, 200);
      assert.deepEqual(again.json(), { entity_id: X, events_deleted: 0 });
      const unknown = await erase(hash(`never-seen-${tag}`));
      assert.deepEqual(unknown.json().events_deleted, 0);
    });

    test('a re-created entity at the same version never gets the pre-erasure cached score, on this instance or another', async () => {
      const W = hash(`recreated-${tag}`);
      const other = await buildApp({ config: ctx().config, store: ctx().store, logger: false });
      await other.ready();
      try {
        await postEvents(ctx(), admin, [event('fraud.reported', W), event('chargeback', W)]);
        const body = { entity_id: W, amount: 70, currency: 'USD' };
        const scoreOn = async (app: typeof other) =>
          (
            await app.inject({ method: 'POST', url: '/api/v1/trust/score', headers: bearer(operator), payload: body })
          ).json();
        const before = await scoreOn(ctx().app);
        await scoreOn(other);
        assert.equal((await scoreOn(other)).cached, true);
        assert.equal((await scoreOn(ctx().app)).cached, true);
        assert.equal((await erase(W)).statusCode, 200);
        // One batch again: the entity is back at version 1, the version its cached scores were computed at.
        await postEvents(ctx(), admin, [event('trade.completed', W, { amount: 10, currency: 'USD' })]);
        for (const app of [ctx().app, other]) {
          const after = await scoreOn(app);
          assert.equal(after.cached, false);
          assert.notEqual(after.decision_id, before.decision_id);
          assert.ok(after.score < before.score, 'the fraud history must be gone');
        }
      } finally {
        await other.close();
      }
    });

    test('fuzzed entity ids never answer 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(nasty, fc.string({ maxLength: 300 })), async (id) => {
          let path = '%ED%A0%80';
          try {
            path = encodeURIComponent(id);
          } catch {
            /* keep the invalid bytes */
          }
          const res = await ctx().inject({ method: 'DELETE', url: `${ENTITIES}/${path}`, headers: bearer(eraser) });
          wellBehaved(res, id);
        }),
        { numRuns: 60 },
      );
    });
  },
  { webhookAllowPrivate: true },
);
