// GET /api/v1/trust/entities/{entity_id}/events (the console's timeline) and the per-identifier
// sharing counts of GET /api/v1/trust/entities/{entity_id}.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { RUNS, nasty, wellBehaved } from '../helpers/fuzz.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';
import { ingestEvents } from '../../src/trust/ingest.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import type { TrustEvent } from '../../src/trust/schemas.ts';

const LIVE = { environment: 'live' } as const;

const HOUR = 3_600_000;
const timeline = (ctx: TestContext, token: string, id: string, query = '') =>
  ctx.inject({
    method: 'GET',
    url: `/api/v1/trust/entities/${encodeURIComponent(id)}/events${query}`,
    headers: bearer(token),
  });

interface Page {
  data: Array<Record<string, unknown>>;
  next_cursor: string | null;
}

describeEachBackend('trust entity timeline', (ctx) => {
  let admin = '';
  let reader = '';
  let writerA = '';
  before(async () => {
    admin = await ctx().token();
    reader = await ctx().token(['trust:read']);
    writerA = await ctx().token(['trust:read', 'trust:write']);
  });

  test('events come newest first with their own fields only; limit and cursor page through all of them: 200', async () => {
    const id = hash('timeline-shape');
    const cp = hash('timeline-shape-cp');
    const phone = hash('timeline-shape-phone');
    const evs = [
      event('trade.completed', id, { amount: 120.5, currency: 'USD', counterparty_id: cp, trade_id: 't-1' }, 5 * HOUR),
      event('dispute.opened', id, { trade_id: 't-1' }, 4 * HOUR),
      event('dispute.resolved', id, { trade_id: 't-1', resolution: 'against' }, 3 * HOUR),
      event('identifier.linked', id, { linked_identifiers: [{ type: 'phone', hash: phone }] }, 2 * HOUR),
      event('trade.cancelled', id, {}, HOUR),
    ];
    // Two events at the same instant: ordered by event_id, descending.
    const tie = new Date(Date.now() - 6 * HOUR).toISOString();
    evs.push(
      { ...event('trade.cancelled', id), event_id: 'tie-a', occurred_at: tie },
      { ...event('trade.cancelled', id), event_id: 'tie-b', occurred_at: tie },
    );
    await postEvents(ctx(), writerA, evs);

    const res = await timeline(ctx(), writerA, id);
    assert.equal(res.statusCode, 200);
    const body = res.json() as Page;
    assert.equal(body.next_cursor, null);
    assert.deepEqual(
      body.data.map((e) => e.event_id),
      [evs[4], evs[3], evs[2], evs[1], evs[0]].map((e) => e!.event_id).concat(['tie-b', 'tie-a']),
    );
    assert.deepEqual(body.data[4], {
      event_id: evs[0]!.event_id,
      type: 'trade.completed',
      occurred_at: evs[0]!.occurred_at,
      amount: 120.5,
      currency: 'USD',
      counterparty_id: cp,
      trade_id: 't-1',
    });
    assert.deepEqual(body.data[2], {
      event_id: evs[2]!.event_id,
      type: 'dispute.resolved',
      occurred_at: evs[2]!.occurred_at,
      trade_id: 't-1',
      resolution: 'against',
    });
    // No identifier hashes in the timeline, not even the event's own.
    assert.ok(!res.body.includes(phone));

    const seen: unknown[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const page = await timeline(
        ctx(),
        writerA,
        id,
        `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      assert.equal(page.statusCode, 200, page.body);
      const p = page.json() as Page;
      assert.ok(p.data.length <= 2);
      seen.push(...p.data.map((e) => e.event_id));
      cursor = p.next_cursor;
      pages += 1;
    }
    assert.equal(pages, 4);
    assert.deepEqual(
      seen,
      body.data.map((e) => e.event_id),
    );
  });

  test("a non-admin sees only its own client's events; the admin sees every client's and legacy imports: 200", async () => {
    const id = hash('timeline-clients');
    const writerB = await ctx().token(['trust:read', 'trust:write']);
    const mine = event('trade.completed', id, { amount: 10, currency: 'USD' }, 3 * HOUR);
    const theirs = event('chargeback', id, { amount: 10, currency: 'USD' }, 2 * HOUR);
    await postEvents(ctx(), writerA, [mine]);
    await postEvents(ctx(), writerB, [theirs]);
    // A legacy import (client '').
    const legacy = event('fraud.reported', id, {}, HOUR) as unknown as TrustEvent;
    await ingestEvents(ctx().store, [legacy], DEFAULT_POLICY, LIVE);

    const ids = async (token: string) =>
      ((await timeline(ctx(), token, id)).json() as Page).data.map((e) => e.event_id);
    assert.deepEqual(await ids(writerA), [mine.event_id]);
    assert.deepEqual(await ids(writerB), [theirs.event_id]);
    // A reader of a client with no events for it: the entity exists, its page is empty.
    assert.deepEqual(await ids(reader), []);
    assert.deepEqual(await ids(admin), [legacy.event_id, theirs.event_id, mine.event_id]);
  });

  test('the same event id from two clients at the same time: both listed to the admin, paged without loss: 200', async () => {
    const id = hash('timeline-same-id');
    const writerB = await ctx().token(['trust:read', 'trust:write']);
    const at = new Date(Date.now() - HOUR).toISOString();
    const ev = { ...event('trade.cancelled', id), event_id: 'shared-id', occurred_at: at };
    await postEvents(ctx(), writerA, [ev]);
    await postEvents(ctx(), writerB, [ev]);
    const first = (await timeline(ctx(), admin, id, '?limit=1')).json() as Page;
    assert.equal(first.data.length, 1);
    assert.ok(first.next_cursor);
    const second = (await timeline(ctx(), admin, id, `?limit=1&cursor=${first.next_cursor}`)).json() as Page;
    assert.equal(second.data.length, 1);
    assert.equal(second.next_cursor, null);
    assert.deepEqual([first.data[0]!.event_id, second.data[0]!.event_id], ['shared-id', 'shared-id']);
  });

  test('an entity never seen: 404', async () => {
    problem(await timeline(ctx(), admin, hash('timeline-never-seen')), 404, 'not_found');
  });

  test('a raw phone number, e-mail or card as the id: 400 raw_identifier_rejected', async () => {
    for (const raw of ['+15550001234', 'someone@example.com', '4111111111111111']) {
      const body = problem(await timeline(ctx(), admin, raw), 400, 'raw_identifier_rejected');
      assert.ok(!JSON.stringify(body).includes(raw));
    }
  });

  test('limit out of 1–100, an unknown parameter or a forged cursor: 400 invalid_request', async () => {
    const id = hash('timeline-shape');
    for (const q of [
      '?limit=0',
      '?limit=101',
      '?limit=abc',
      '?foo=1',
      '?cursor=%21%21',
      `?cursor=${Buffer.from('[1,2,3]').toString('base64url')}`,
      '?cursor=bm90anNvbg',
    ]) {
      problem(await timeline(ctx(), admin, id, q), 400, 'invalid_request');
    }
  });

  test('without trust:read: 403; without credentials: 401', async () => {
    const keysOnly = await ctx().token(['keys:read']);
    problem(await timeline(ctx(), keysOnly, hash('timeline-shape')), 403, 'insufficient_scope');
    problem(
      await ctx().inject({ method: 'GET', url: `/api/v1/trust/entities/${hash('timeline-shape')}/events` }),
      401,
      'unauthenticated',
    );
  });

  test('each linked identifier says how many entities hold it: 200', async () => {
    const device = hash('timeline-shared-device');
    const phone = hash('timeline-own-phone');
    const holders = ['a', 'b', 'c'].map((s) => hash(`timeline-holder-${s}`));
    await postEvents(
      ctx(),
      admin,
      holders.map((h) => event('identifier.linked', h, { linked_identifiers: [{ type: 'device', hash: device }] })),
    );
    await postEvents(ctx(), admin, [
      event('identifier.linked', holders[0]!, { linked_identifiers: [{ type: 'phone', hash: phone }] }),
    ]);
    const res = await ctx().inject({
      method: 'GET',
      url: `/api/v1/trust/entities/${holders[0]}`,
      headers: bearer(reader),
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().linked_identifiers, [
      { type: 'device', hash: device, entities: 3 },
      { type: 'phone', hash: phone, entities: 1 },
    ]);
    // Re-linking the same identifier does not count an entity twice.
    await postEvents(ctx(), admin, [
      event('trade.cancelled', holders[1]!, { linked_identifiers: [{ type: 'device', hash: device }] }),
    ]);
    const again = await ctx().inject({
      method: 'GET',
      url: `/api/v1/trust/entities/${holders[1]}`,
      headers: bearer(reader),
    });
    assert.deepEqual(again.json().linked_identifiers, [{ type: 'device', hash: device, entities: 3 }]);
  });

  test('fuzz: random limit and cursor values never answer 5xx, 4xx always problem+json', async () => {
    const id = hash('timeline-shape');
    const param = fc.oneof(
      nasty,
      fc.string({ maxLength: 40 }),
      fc.integer().map(String),
      fc.double().map(String),
      fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
      fc
        .tuple(fc.integer(), fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }))
        .map((t) => Buffer.from(JSON.stringify(t)).toString('base64url')),
    );
    // Lone surrogates become U+FFFD (encodeURIComponent refuses them); broken escapes are sent raw.
    const encoded = param.map((v) => encodeURIComponent(Buffer.from(v, 'utf8').toString('utf8')));
    const raw = fc.constantFrom('%', '%zz', '%FF', '%C0%80', '%00', '1&limit=2', 'a%2', '');
    const query = fc
      .array(fc.tuple(fc.constantFrom('limit', 'cursor', 'limit', 'cursor', 'x'), fc.oneof(encoded, raw)), {
        maxLength: 3,
      })
      .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
    await fc.assert(
      fc.asyncProperty(query, fc.constantFrom(id, 'x', hash('timeline-never-seen')), async (q, entity) =>
        wellBehaved(await timeline(ctx(), admin, entity, `?${q}`), `?${q}`),
      ),
      { numRuns: RUNS },
    );
  });
});
