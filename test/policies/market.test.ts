import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from 'typebox/value';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { checkScoreBody, eventErrors, ScoreBody, TrustEvent } from '../../src/trust/schemas.ts';
import { FRAUD_POPULATIONS, simulateMarket } from '../../bench/quality/market.ts';

const SMALL = { seed: 7, entities: 400, days: 30 };

describe('simulateMarket', () => {
  const market = simulateMarket(SMALL);

  test('the same seed gives the same market; another seed a different one', () => {
    assert.deepEqual(simulateMarket(SMALL), market);
    assert.notDeepEqual(simulateMarket({ ...SMALL, seed: 8 }).events.slice(0, 50), market.events.slice(0, 50));
  });

  test('every event passes the events schema and the per-event checks', () => {
    assert.ok(market.events.length > 1000);
    const now = Date.parse(market.end);
    market.events.forEach((event, i) => {
      assert.ok(Value.Check(TrustEvent, event), `event ${i} fails the schema: ${JSON.stringify(event)}`);
      const { validation, raw } = eventErrors(event, `events.${i}`, DEFAULT_POLICY.cryptoAssets, now);
      assert.deepEqual([...validation, ...raw], [], JSON.stringify(event));
    });
    assert.equal(new Set(market.events.map((e) => e.event_id)).size, market.events.length);
  });

  test('every request body passes the score schema and its checks', () => {
    assert.ok(market.requests.length > 100);
    for (const r of market.requests) {
      assert.ok(Value.Check(ScoreBody, r.body), JSON.stringify(r.body));
      assert.doesNotThrow(() => checkScoreBody(r.body, DEFAULT_POLICY.cryptoAssets));
      assert.match(r.body.entity_id, /^[0-9a-f]{64}$/);
      assert.equal(typeof r.body.context?.trade_id, 'string');
    }
  });

  test('events and requests are in time order, within the period; requests only after the warm-up', () => {
    const times = market.events.map((e) => Date.parse(e.occurred_at));
    assert.ok(times.every((t, i) => i === 0 || times[i - 1]! <= t));
    assert.ok(times[0]! >= Date.parse(market.start) && times.at(-1)! <= Date.parse(market.end));
    const at = market.requests.map((r) => Date.parse(r.at));
    assert.ok(at.every((t, i) => i === 0 || at[i - 1]! <= t));
    assert.ok(at[0]! >= Date.parse(market.requestsFrom));
  });

  test('outcome events follow their request, carry its trade and entity, and are part of the history', () => {
    const ids = new Set(market.events.map((e) => e.event_id));
    for (const r of market.requests) {
      for (const e of r.outcomeEvents) {
        assert.ok(ids.has(e.event_id));
        assert.equal(e.trade_id, r.body.context?.trade_id);
        assert.equal(e.entity_id, r.body.entity_id);
        assert.ok(Date.parse(e.occurred_at) > Date.parse(r.at));
      }
    }
  });

  test('fraud is a few percent of requests, only from fraud populations, with labelling outcomes', () => {
    const big = simulateMarket({ seed: 3, entities: 2000, days: 60 });
    const fraud = big.requests.filter((r) => r.label === 'fraud');
    const share = fraud.length / big.requests.length;
    assert.ok(share > 0.01 && share < 0.08, `fraud share ${share}`);
    assert.ok(fraud.every((r) => FRAUD_POPULATIONS.includes(r.population)));
    for (const p of FRAUD_POPULATIONS)
      assert.ok(
        fraud.some((r) => r.population === p),
        `no fraud from ${p}`,
      );
    // Most fraud is labelled by an event before the end; the rest is still in flight, as in life.
    assert.ok(fraud.filter((r) => r.eventLabel === 'fraud').length > fraud.length / 2);
    const kinds = new Set(big.events.map((e) => e.type));
    for (const t of [
      'trade.completed',
      'trade.cancelled',
      'dispute.opened',
      'dispute.resolved',
      'chargeback',
      'fraud.reported',
      'entity.blocklisted',
      'identifier.linked',
    ]) {
      assert.ok(kinds.has(t as never), `no ${t} event`);
    }
    // Mule rings share identifiers across several entities.
    const linked = new Map<string, Set<string>>();
    for (const e of big.events)
      for (const l of e.linked_identifiers ?? [])
        linked.set(l.hash, (linked.get(l.hash) ?? new Set()).add(e.entity_id));
    assert.ok([...linked.values()].some((s) => s.size >= 3));
  });

  test('100k events take a few seconds', () => {
    // CPU time, not wall time: the machine running the suite may be busy with other work.
    const t0 = process.cpuUsage();
    const m = simulateMarket({ seed: 5, entities: 2000, days: 60 });
    const used = process.cpuUsage(t0);
    const seconds = (used.user + used.system) / 1e6;
    assert.ok(m.events.length >= 90_000, `${m.events.length} events`);
    assert.ok(seconds < 10, `${seconds} s`);
  });

  test('bad options are refused', () => {
    assert.throws(() => simulateMarket({ seed: 1, entities: 3 }), RangeError);
    assert.throws(() => simulateMarket({ seed: 1, days: 0 }), RangeError);
    assert.throws(() => simulateMarket({ seed: 1, end: 'yesterday' }), RangeError);
    assert.throws(() => simulateMarket({ seed: 1, mix: { honest: 0, sloppy: 0 } }), RangeError);
  });
});
