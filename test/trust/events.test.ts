// POST /api/v1/trust/events: idempotency, batch atomicity, per-type validation, size limits, scope.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeEachBackend, bearer, problem, type TestContext } from '../helpers/app.ts';
import { event, hash, postEvents } from '../helpers/trust.ts';

type Ev = Record<string, unknown>;

const post = (ctx: TestContext, token: string, payload: unknown) =>
  ctx.inject({
    method: 'POST',
    url: '/api/v1/trust/events',
    headers: bearer(token),
    payload: payload as Record<string, unknown>,
  });
const entity = (ctx: TestContext, token: string, id: string) =>
  ctx.inject({ method: 'GET', url: `/api/v1/trust/entities/${encodeURIComponent(id)}`, headers: bearer(token) });
const fields = (body: Record<string, unknown>) => (body.errors as Array<{ field: string }>).map((e) => e.field);

describeEachBackend('trust events ingestion', (ctx) => {
  let admin = '';
  const token = async () => (admin ||= await ctx().token());

  test('the same batch twice: 200 {accepted: N} then 200 {accepted: 0, duplicates: N}, aggregates counted once', async () => {
    const id = hash('idempotent');
    const batch = [
      event('trade.completed', id, { amount: 50, currency: 'EUR' }),
      event('trade.completed', id, { amount: 70, currency: 'EUR' }),
      event('chargeback', id),
    ];
    assert.deepEqual(await postEvents(ctx(), await token(), batch), { accepted: 3, duplicates: 0 });
    assert.deepEqual(await postEvents(ctx(), await token(), batch), { accepted: 0, duplicates: 3 });
    // the same id with different content is no duplicate: 409 conflict (docs/api.md, "Trust scoring", issue 8 item 7)
    const body = problem(
      await post(ctx(), await token(), { events: [{ ...batch[2], type: 'fraud.reported' }] }),
      409,
      'conflict',
    );
    assert.deepEqual(fields(body), ['events.0.event_id']);
    const agg = (await entity(ctx(), await token(), id)).json();
    assert.equal(agg.trades_completed, 2);
    assert.deepEqual(agg.volume_completed, { EUR: 120 });
    assert.equal(agg.chargebacks, 1);
    assert.equal(agg.fraud_reports, 0);
  });

  test('duplicate event_ids within one batch: 200, the first is stored and the rest count as duplicates', async () => {
    const id = hash('dup-in-batch');
    const a = event('trade.cancelled', id);
    const b = event('trade.cancelled', id);
    assert.deepEqual(await postEvents(ctx(), await token(), [a, a, b, { ...a }]), { accepted: 2, duplicates: 2 });
    assert.equal((await entity(ctx(), await token(), id)).json().trades_cancelled, 2);
  });

  test('aggregates do not depend on how events are split into batches, their order, or re-sends (property)', async () => {
    const types = [
      'trade.completed',
      'trade.cancelled',
      'dispute.opened',
      'dispute.resolved',
      'chargeback',
      'fraud.reported',
    ] as const;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            type: fc.constantFrom(...types),
            amount: fc.integer({ min: 1, max: 1000 }),
            won: fc.boolean(),
            ageMin: fc.integer({ min: 1, max: 100_000 }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        fc.integer({ min: 1, max: 5 }),
        fc.infiniteStream(fc.boolean()),
        async (specs, batchSize, resend) => {
          run += 1;
          const tag = `prop-${process.pid}-${Date.now()}-${run}`;
          const one = hash(`${tag}-one`);
          const many = hash(`${tag}-many`);
          const base = Date.now();
          const make = (id: string) =>
            specs.map((s, i) => ({
              event_id: `${tag}-${id.slice(0, 6)}-${i}`,
              type: s.type,
              entity_id: id,
              occurred_at: new Date(base - s.ageMin * 60_000).toISOString(),
              ...(s.type === 'trade.completed' ? { amount: s.amount, currency: 'USD' } : {}),
              ...(s.type === 'dispute.resolved' ? { resolution: s.won ? 'in_favor' : 'against' } : {}),
            }));
          await postEvents(ctx(), await token(), make(one));
          const reversed = make(many).reverse();
          for (let i = 0; i < reversed.length; i += batchSize) {
            const chunk = reversed.slice(i, i + batchSize);
            await postEvents(ctx(), await token(), chunk);
            if (resend.next().value) assert.equal((await postEvents(ctx(), await token(), chunk)).accepted, 0);
          }
          const a = (await entity(ctx(), await token(), one)).json();
          const b = (await entity(ctx(), await token(), many)).json();
          for (const k of [
            'first_seen_at',
            'last_event_at',
            'trades_completed',
            'trades_cancelled',
            'volume_completed',
            'disputes_opened',
            'disputes_won',
            'disputes_lost',
            'chargebacks',
            'fraud_reports',
            'blocklisted',
          ]) {
            assert.deepEqual(b[k], a[k], k);
          }
        },
      ),
      { numRuns: 8 },
    );
  });

  test('concurrent batches flagging entities that share identifiers all succeed (200, no deadlock) and every event counts', async () => {
    const ring = Array.from({ length: 6 }, (_, i) => hash(`ring-${i}`));
    const device = hash('ring-device');
    await postEvents(
      ctx(),
      await token(),
      ring.map((id) => event('identifier.linked', id, { linked_identifiers: [{ type: 'device', hash: device }] })),
    );
    // each batch flags three ring members in its own order, so every batch bumps the others' neighbours
    const batches = Array.from({ length: 24 }, (_, k) =>
      [0, 1, 2]
        .map((j) => ring[(k * 5 + j * (k % 2 ? 1 : 5)) % ring.length]!)
        .map((id) => event(k % 3 === 0 ? 'entity.blocklisted' : 'fraud.reported', id)),
    );
    const results = await Promise.all(batches.map(async (events) => post(ctx(), await token(), { events })));
    assert.deepEqual(
      results.map((r) => r.statusCode),
      results.map(() => 200),
      results.find((r) => r.statusCode !== 200)?.body,
    );
    const reports = batches.flat().filter((e) => e.type === 'fraud.reported');
    let total = 0;
    for (const id of ring) total += (await entity(ctx(), await token(), id)).json().fraud_reports;
    assert.equal(total, reports.length);
  });

  test('an event_id reused with a different payload: 409 conflict naming events.N.event_id, and nothing of the batch is stored', async () => {
    const id = hash('reused-id');
    const original = event('trade.completed', id, { amount: 40, currency: 'USD' });
    assert.deepEqual(await postEvents(ctx(), await token(), [original]), { accepted: 1, duplicates: 0 });
    // the chargeback re-uses the trade's id: it must not vanish as a "duplicate"
    const fresh = event('trade.cancelled', id);
    const hidden = { ...original, type: 'chargeback', amount: undefined, currency: undefined };
    const res = await post(ctx(), await token(), { events: [fresh, JSON.parse(JSON.stringify(hidden))] });
    const body = problem(res, 409, 'conflict');
    assert.deepEqual(body.errors, [{ field: 'events.1.event_id', message: 'was already used for a different event' }]);
    const agg = (await entity(ctx(), await token(), id)).json();
    assert.equal(agg.trades_cancelled, 0, 'the batch is all or nothing');
    assert.equal(agg.chargebacks, 0);
    // the same payload with its keys in another order is the same event: a duplicate
    const reordered = Object.fromEntries(Object.entries(original).reverse());
    assert.deepEqual(await postEvents(ctx(), await token(), [reordered, fresh]), { accepted: 1, duplicates: 1 });
    // …and so is the same instant spelled with milliseconds, or in another offset
    const at = Date.parse(original.occurred_at as string);
    const respelled = { ...original, occurred_at: new Date(at).toISOString().replace('Z', '+00:00') };
    assert.deepEqual(await postEvents(ctx(), await token(), [respelled]), { accepted: 0, duplicates: 1 });
    // two different events under one id in one batch: 409 naming the second, nothing stored
    const twin = event('chargeback', id);
    const clash = problem(
      await post(ctx(), await token(), { events: [twin, { ...twin, type: 'fraud.reported' }] }),
      409,
      'conflict',
    );
    assert.deepEqual(fields(clash), ['events.1.event_id']);
    assert.equal((await entity(ctx(), await token(), id)).json().chargebacks, 0);
  });

  test("event ids are scoped to the client: another client's id is not a duplicate (200 accepted), its own re-send is", async () => {
    const a = await ctx().token(['trust:write', 'trust:read']);
    const b = await ctx().token(['trust:write', 'trust:read']);
    const id = hash('scoped-ids');
    const ev = event('trade.completed', id, { amount: 10, currency: 'USD', event_id: `shared-${Date.now()}` });
    assert.deepEqual(await postEvents(ctx(), a, [ev]), { accepted: 1, duplicates: 0 });
    // client B's chargeback happens to use the same id: it is B's own event and counts
    const other = { ...ev, type: 'chargeback', amount: undefined, currency: undefined };
    assert.deepEqual(await postEvents(ctx(), b, [JSON.parse(JSON.stringify(other))]), { accepted: 1, duplicates: 0 });
    assert.deepEqual(await postEvents(ctx(), b, [JSON.parse(JSON.stringify(other))]), { accepted: 0, duplicates: 1 });
    assert.deepEqual(await postEvents(ctx(), a, [ev]), { accepted: 0, duplicates: 1 });
    const agg = (await entity(ctx(), a, id)).json();
    assert.equal(agg.trades_completed, 1);
    assert.equal(agg.chargebacks, 1);
  });

  test('one invalid event in a batch of 3: 400 and none of the 3 is stored', async () => {
    const ids = [hash('atomic-1'), hash('atomic-2'), hash('atomic-3')];
    const good = [event('trade.completed', ids[0]!, { amount: 10, currency: 'USD' }), event('fraud.reported', ids[1]!)];
    const invalid: Array<[Ev, number, string]> = [
      [event('trade.exploded', ids[2]!), 400, 'validation_failed'],
      [event('trade.completed', ids[2]!, { currency: 'USD' }), 400, 'validation_failed'], // amount is optional, but goes with currency
      [event('chargeback', 'carol@example.com'), 400, 'raw_identifier_rejected'],
    ];
    for (const [bad, status, code] of invalid) {
      for (const batch of [
        [...good, bad],
        [bad, ...good],
        [good[0]!, bad, good[1]!],
      ]) {
        problem(await post(ctx(), await token(), { events: batch }), status, code);
      }
    }
    for (const id of ids) problem(await entity(ctx(), await token(), id), 404, 'not_found');
    // the same good events are accepted afterwards: none of them was stored by the failed batches
    assert.deepEqual(await postEvents(ctx(), await token(), good), { accepted: 2, duplicates: 0 });
  });

  test('per-type required fields: 400 validation_failed naming events.N.field', async () => {
    const id = hash('required');
    const ok = event('trade.cancelled', id);
    const cases: Array<[Ev, string[]]> = [
      [event('trade.completed', id, { currency: 'USD' }), ['events.1.amount']],
      [event('trade.completed', id, { amount: 5 }), ['events.1.currency']],
      [event('dispute.resolved', id), ['events.1.resolution']],
      [event('dispute.resolved', id, { resolution: 'draw' }), ['events.1.resolution']],
      [event('identifier.linked', id), ['events.1.linked_identifiers']],
      [event('identifier.linked', id, { linked_identifiers: [] }), ['events.1.linked_identifiers']],
      [
        event('identifier.linked', id, { linked_identifiers: [{ type: 'passport', hash: hash('p') }] }),
        ['events.1.linked_identifiers.0.type'],
      ],
      [event('chargeback', id, { amount: 5 }), ['events.1.currency']],
      [event('trade.completed', id, { amount: 5, currency: 'usd' }), ['events.1.currency']],
      [event('trade.completed', id, { amount: 5, currency: 'ZZZ' }), ['events.1.currency']],
      [event('trade.completed', id, { amount: 0, currency: 'USD' }), ['events.1.amount']],
      [event('trade.completed', id, { amount: -3, currency: 'USD' }), ['events.1.amount']],
      [event('chargeback', id, { occurred_at: 'last tuesday' }), ['events.1.occurred_at']],
      // valid RFC 3339 shapes for the schema that Date.parse cannot read
      [event('chargeback', id, { occurred_at: '2016-12-31T23:59:60Z' }), ['events.1.occurred_at']],
      [event('chargeback', id, { occurred_at: '2024-01-01T00:00:00+01' }), ['events.1.occurred_at']],
      [event('chargeback', id, {}, -3_600_000), ['events.1.occurred_at']], // an hour in the future
      [event('chargeback', id, { note: 'x' }), ['events.1.note']],
      [{ type: 'chargeback', entity_id: id, occurred_at: new Date().toISOString() }, ['events.1.event_id']],
      [event('chargeback', ''), ['events.1.entity_id']],
    ];
    for (const [bad, expected] of cases) {
      const body = problem(await post(ctx(), await token(), { events: [ok, bad] }), 400, 'validation_failed');
      for (const f of expected)
        assert.ok(fields(body).includes(f), `${JSON.stringify(bad).slice(0, 120)} → ${fields(body).join(',')}`);
    }
    problem(await entity(ctx(), await token(), id), 404, 'not_found');
    // a minute of clock skew is tolerated
    assert.deepEqual(await postEvents(ctx(), await token(), [event('chargeback', hash('skewed-clock'), {}, -60_000)]), {
      accepted: 1,
      duplicates: 0,
    });
    // an unknown top-level member and an empty or missing list are refused as well
    assert.ok(
      fields(problem(await post(ctx(), await token(), { events: [ok], extra: 1 }), 400, 'validation_failed')).includes(
        'extra',
      ),
    );
    assert.ok(
      fields(problem(await post(ctx(), await token(), { events: [] }), 400, 'validation_failed')).includes('events'),
    );
    assert.ok(fields(problem(await post(ctx(), await token(), {}), 400, 'validation_failed')).includes('events'));
  });

  test('raw identifiers in an event: 400 raw_identifier_rejected naming the field, never echoing the value', async () => {
    const id = hash('raw-check');
    const cases: Array<[Ev, string, string]> = [
      [event('chargeback', '+44 7700 900123'), 'events.0.entity_id', '+44 7700 900123'],
      [
        event('trade.completed', id, { amount: 1, currency: 'USD', counterparty_id: 'bob@example.com' }),
        'events.0.counterparty_id',
        'bob@example.com',
      ],
      [
        event('identifier.linked', id, {
          linked_identifiers: [
            { type: 'device', hash: hash('d') },
            { type: 'bank_account', hash: 'DE89370400440532013000' },
          ],
        }),
        'events.0.linked_identifiers.1.hash',
        'DE89370400440532013000',
      ],
      [event('chargeback', '4111111111111111'), 'events.0.entity_id', '4111111111111111'],
    ];
    for (const [ev, field, value] of cases) {
      const body = problem(await post(ctx(), await token(), { events: [ev] }), 400, 'raw_identifier_rejected');
      assert.deepEqual(fields(body), [field]);
      assert.ok(!JSON.stringify(body).includes(value), 'the raw value is never echoed');
    }
    problem(await entity(ctx(), await token(), id), 404, 'not_found');
  });

  test('more than 1000 events: 400 validation_failed; exactly 1000: 200', async () => {
    const id = hash('thousand');
    const many = Array.from({ length: 1001 }, () => event('trade.cancelled', id));
    assert.ok(
      fields(problem(await post(ctx(), await token(), { events: many }), 400, 'validation_failed')).includes('events'),
    );
    assert.deepEqual(await postEvents(ctx(), await token(), many.slice(0, 1000)), { accepted: 1000, duplicates: 0 });
    assert.equal((await entity(ctx(), await token(), id)).json().trades_cancelled, 1000);
  });

  test('a body over 64 KiB but under 1 MiB is accepted for events (200) though not for scoring (413); over 1 MiB: 413', async () => {
    const id = hash('big-batch');
    const padded = Array.from({ length: 400 }, (_, i) =>
      event('trade.completed', id, { amount: 10, currency: 'USD', trade_id: `t-${i}-${'x'.repeat(200)}` }),
    );
    const payload = JSON.stringify({ events: padded });
    assert.ok(payload.length > 64 * 1024 && payload.length < 1024 * 1024, `${payload.length}`);
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/events',
      headers: { ...bearer(await token()), 'content-type': 'application/json' },
      payload,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { accepted: 400, duplicates: 0 });

    const bigScore = JSON.stringify({
      entity_id: id,
      amount: 1,
      currency: 'USD',
      context: { note: 'x'.repeat(70 * 1024) },
    });
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        headers: { ...bearer(await token()), 'content-type': 'application/json' },
        payload: bigScore,
      }),
      413,
      'payload_too_large',
    );

    const huge = JSON.stringify({ events: [event('chargeback', id, { trade_id: 'y'.repeat(1024 * 1024) })] });
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/events',
        headers: { ...bearer(await token()), 'content-type': 'application/json' },
        payload: huge,
      }),
      413,
      'payload_too_large',
    );
    assert.equal((await entity(ctx(), await token(), id)).json().chargebacks, 0);
  });

  test('malformed JSON: 400 invalid_request', async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/events',
      headers: { ...bearer(await token()), 'content-type': 'application/json' },
      payload: '{"events": [',
    });
    problem(res, 400, 'invalid_request');
  });

  test('ingestion requires trust:write: 403 insufficient_scope with trust:read only; no credentials: 401', async () => {
    const reader = await ctx().token(['trust:read']);
    const id = hash('scope-check');
    const res = await post(ctx(), reader, { events: [event('fraud.reported', id)] });
    problem(res, 403, 'insufficient_scope');
    assert.match(String(res.headers['www-authenticate']), /trust:write/);
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/events',
        payload: { events: [event('fraud.reported', id)] },
      }),
      401,
      'unauthenticated',
    );
    problem(await entity(ctx(), await token(), id), 404, 'not_found');
    // and the writer alone cannot read aggregates back
    const writer = await ctx().token(['trust:write']);
    assert.deepEqual(await postEvents(ctx(), writer, [event('fraud.reported', id)]), { accepted: 1, duplicates: 0 });
    problem(await entity(ctx(), writer, id), 403, 'insufficient_scope');
  });
});
