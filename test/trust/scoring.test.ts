import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer, problem } from '../helpers/app.ts';
import { event, hash, postEvents, score, tradeHistory } from '../helpers/trust.ts';

describeEachBackend('trust scoring end to end', (ctx) => {
  test('fresh entity within its first tier limit gets a low cold-start score: 200', async () => {
    const token = await ctx().token();
    const res = await score(ctx(), token, { entity_id: hash('fresh'), amount: 100, currency: 'USD' });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.entity_id, hash('fresh'));
    // σ(−2.7 + new_account 0.6 + cold_start 0.2); USD 100 is within the first tier's 250
    assert.equal(body.score, 13);
    assert.equal(body.risk_level, 'low');
    assert.equal(body.cached, false);
    assert.match(body.decision_id, /^dec_[0-9A-Z]{26}$/);
    assert.equal(typeof body.policy_version, 'string');
    assert.ok(!Number.isNaN(Date.parse(body.scored_at)));
    assert.ok(body.signals.some((s: { name: string }) => s.name === 'cold_start'));
  });

  test('long clean history scores low; blocklisted scores critical; linked to a fraudster scores high', async () => {
    const token = await ctx().token();
    const clean = hash('clean-veteran');
    const blocked = hash('blocked');
    const fraudster = hash('fraudster');
    const linked = hash('linked-to-fraudster');
    const phone = hash('+15550001111');
    const device = hash('device-42');
    await postEvents(ctx(), token, tradeHistory(clean, 200, 365));
    await postEvents(ctx(), token, [
      ...tradeHistory(blocked, 200, 365),
      event('entity.blocklisted', blocked, {}, 1000),
    ]);
    await postEvents(ctx(), token, [
      event('fraud.reported', fraudster),
      event('identifier.linked', fraudster, {
        linked_identifiers: [
          { type: 'phone', hash: phone },
          { type: 'device', hash: device },
        ],
      }),
    ]);
    await postEvents(ctx(), token, [
      ...tradeHistory(linked, 20, 60),
      event('identifier.linked', linked, { linked_identifiers: [{ type: 'phone', hash: phone }] }),
    ]);
    const control = hash('same-history-no-link');
    await postEvents(ctx(), token, tradeHistory(control, 20, 60));

    const s = async (id: string) =>
      (await score(ctx(), token, { entity_id: id, amount: 100, currency: 'USD', context: {} })).json();
    const [c, b, l, k] = [await s(clean), await s(blocked), await s(linked), await s(control)];
    assert.ok(c.score < 20, `clean ${c.score}`);
    assert.equal(c.risk_level, 'low');
    assert.ok(b.score >= 85, `blocklisted ${b.score}`);
    assert.equal(b.risk_level, 'critical');
    assert.equal(b.signals[0].name, 'blocklisted');
    assert.ok(l.score >= k.score + 10, `linked ${l.score} vs same history unlinked ${k.score}`);
    assert.ok(
      l.signals.some((x: { name: string; value: number }) => x.name === 'linked_flagged_entities' && x.value === 1),
    );
  });

  test('signals reproduce the score: round(100·σ(bias + Σ w·v)), sorted, none zero', async () => {
    const token = await ctx().token();
    const res = await score(ctx(), token, {
      entity_id: hash('clean-veteran'),
      amount: 5000,
      currency: 'USD',
      context: { payment_method: 'card', country: 'DE', counterparty_country: 'NG', counterparty_id: hash('new-cp') },
    });
    const body = res.json();
    const { DEFAULT_POLICY } = await import('../../src/model/policy.ts');
    const z = body.signals.reduce(
      (acc: number, s: { value: number; weight: number }) => acc + s.value * s.weight,
      DEFAULT_POLICY.bias,
    );
    assert.equal(body.score, Math.round(100 / (1 + Math.exp(-z))));
    const contributions = body.signals.map((s: { value: number; weight: number }) => Math.abs(s.value * s.weight));
    assert.ok(contributions.every((c: number, i: number) => c > 0 && (i === 0 || contributions[i - 1] >= c)));
    for (const name of ['payment_method_risk', 'cross_border', 'new_counterparty', 'amount_vs_history']) {
      assert.ok(
        body.signals.some((s: { name: string }) => s.name === name),
        `missing ${name}`,
      );
    }
  });

  test('identical request within the TTL is cached; a new event invalidates it at once', async () => {
    const token = await ctx().token();
    const id = hash('cache-subject');
    await postEvents(ctx(), token, tradeHistory(id, 30, 90));
    const req = { entity_id: id, amount: 120, currency: 'USD', context: { payment_method: 'bank_transfer' } };
    const first = (await score(ctx(), token, req)).json();
    const second = (await score(ctx(), token, { ...req, context: { payment_method: 'bank_transfer' } })).json();
    assert.equal(first.cached, false);
    assert.equal(second.cached, true);
    assert.equal(second.decision_id, first.decision_id);
    assert.equal(second.score, first.score);
    await postEvents(ctx(), token, [event('chargeback', id, {}, 1000)]);
    const third = (await score(ctx(), token, req)).json();
    assert.equal(third.cached, false);
    assert.ok(third.score > first.score, `chargeback must raise the score: ${first.score} → ${third.score}`);
  });

  test('a neighbour becoming a fraudster invalidates the cached score of a linked entity', async () => {
    const token = await ctx().token();
    const a = hash('neighbour-a');
    const b = hash('neighbour-b');
    const shared = hash('shared-bank-account');
    await postEvents(ctx(), token, [
      ...tradeHistory(a, 10, 30),
      event('identifier.linked', a, { linked_identifiers: [{ type: 'bank_account', hash: shared }] }),
      event('identifier.linked', b, { linked_identifiers: [{ type: 'bank_account', hash: shared }] }),
    ]);
    const req = { entity_id: a, amount: 100, currency: 'USD' };
    const before = (await score(ctx(), token, req)).json();
    assert.equal((await score(ctx(), token, req)).json().cached, true);
    await postEvents(ctx(), token, [event('fraud.reported', b, {}, 1000)]);
    const after = (await score(ctx(), token, req)).json();
    assert.equal(after.cached, false);
    assert.ok(after.score > before.score);
  });

  test('validation errors: 400 validation_failed naming the field', async () => {
    const token = await ctx().token();
    const base = { entity_id: hash('v'), amount: 10, currency: 'USD' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ amount: 10, currency: 'USD' }, 'entity_id'],
      [{ ...base, entity_id: '' }, 'entity_id'],
      [{ ...base, entity_id: 'x'.repeat(257) }, 'entity_id'],
      [{ ...base, amount: 0 }, 'amount'],
      [{ ...base, amount: -5 }, 'amount'],
      [{ ...base, amount: '10' }, 'amount'],
      [{ ...base, currency: 'usd' }, 'currency'],
      [{ ...base, currency: 'ZZZ' }, 'currency'],
      [{ ...base, context: 'x' }, 'context'],
      [{ ...base, context: { side: 'hold' } }, 'context.side'],
      [{ ...base, context: { payment_method: 'barter' } }, 'context.payment_method'],
      [{ ...base, context: { country: 'germany' } }, 'context.country'],
      [{ ...base, context: { account_created_at: 'yesterday' } }, 'context.account_created_at'],
      [
        { ...base, context: { linked_identifiers: [{ type: 'ssn', hash: hash('x') }] } },
        'context.linked_identifiers.0.type',
      ],
      [{ ...base, context: { a: { b: { c: { d: { e: { f: 1 } } } } } } }, 'context'],
      [{ ...base, extra: true }, 'extra'],
    ];
    for (const [payload, field] of cases) {
      const body = problem(await score(ctx(), token, payload), 400, 'validation_failed');
      const fields = (body.errors as Array<{ field: string }>).map((e) => e.field);
      assert.ok(fields.includes(field), `${JSON.stringify(payload).slice(0, 80)} → ${fields.join(',')}`);
    }
    // Unknown context members are accepted and ignored; five levels deep is allowed.
    const ok = await score(ctx(), token, { ...base, context: { marketplace_tier: 'gold', a: { b: { c: { d: 1 } } } } });
    assert.equal(ok.statusCode, 200);
  });

  test('raw identifiers of each kind are refused with 400 raw_identifier_rejected; a SHA-256 is accepted', async () => {
    const token = await ctx().token();
    const raw = [
      '+44 7700 900123',
      '(555) 123-4567',
      'alice@example.com',
      'DE89 3704 0044 0532 0130 00',
      '4111 1111 1111 1111',
    ];
    for (const value of raw) {
      const body = problem(
        await score(ctx(), token, { entity_id: value, amount: 10, currency: 'EUR' }),
        400,
        'raw_identifier_rejected',
      );
      assert.ok(!JSON.stringify(body).includes(value), 'the raw value is never echoed');
    }
    const cp = problem(
      await score(ctx(), token, {
        entity_id: hash('ok'),
        amount: 10,
        currency: 'EUR',
        context: { counterparty_id: 'bob@example.com' },
      }),
      400,
      'raw_identifier_rejected',
    );
    assert.deepEqual(
      (cp.errors as Array<{ field: string }>).map((e) => e.field),
      ['context.counterparty_id'],
    );
    problem(
      await score(ctx(), token, {
        entity_id: hash('ok'),
        amount: 10,
        currency: 'EUR',
        context: { linked_identifiers: [{ type: 'phone', hash: '+15551234567' }] },
      }),
      400,
      'raw_identifier_rejected',
    );
    assert.equal(
      (await score(ctx(), token, { entity_id: hash('+15551234567'), amount: 10, currency: 'BTC' })).statusCode,
      200,
    );
  });

  test('the decision is readable by id with audit:read (200) and not without it (403)', async () => {
    const token = await ctx().token();
    const scored = (await score(ctx(), token, { entity_id: hash('audited'), amount: 42, currency: 'USDT' })).json();
    const res = await ctx().inject({
      method: 'GET',
      url: `/api/v1/decisions/${scored.decision_id}`,
      headers: bearer(token),
    });
    assert.equal(res.statusCode, 200);
    const decision = res.json();
    assert.equal(decision.kind, 'score');
    assert.equal(decision.subject_id, hash('audited'));
    assert.equal(decision.result.score, scored.score);
    assert.deepEqual(decision.result.signals, scored.signals);
    assert.match(decision.request_digest, /^[0-9a-f]{64}$/);
    const reader = await ctx().token(['trust:read']);
    problem(
      await ctx().inject({ method: 'GET', url: `/api/v1/decisions/${scored.decision_id}`, headers: bearer(reader) }),
      403,
      'insufficient_scope',
    );
    problem(
      await ctx().inject({ method: 'GET', url: '/api/v1/decisions/dec_unknown', headers: bearer(token) }),
      404,
      'not_found',
    );
  });

  test('scoring requires trust:read: 403 insufficient_scope; no credentials: 401', async () => {
    const writer = await ctx().token(['trust:write']);
    problem(
      await score(ctx(), writer, { entity_id: hash('x'), amount: 1, currency: 'USD' }),
      403,
      'insufficient_scope',
    );
    problem(
      await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/score',
        payload: { entity_id: hash('x'), amount: 1, currency: 'USD' },
      }),
      401,
      'unauthenticated',
    );
  });
});
