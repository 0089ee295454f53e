// Signal descriptions (docs/api.md, "Trust scoring", issue 10 item 2): one plain sentence with the figure, on every
// returned signal, never an identifier.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, SIGNAL_NAMES } from '../../src/model/policy.ts';
import { computeSignals } from '../../src/model/signal-model.ts';
import type { ScoreRequest } from '../../src/model/types.ts';
import type { Ring } from '../../src/model/ring.ts';
import {
  anyPolicy,
  contextArb,
  currencyArb,
  DAY,
  freshProfile,
  NOW,
  profileArb,
  veteranProfile,
} from '../helpers/profiles.ts';

const hexId = fc.stringMatching(/^[0-9a-f]{64}$/);
const b64Id = fc.stringMatching(/^[A-Za-z0-9_-]{32,48}$/);
const anyId = fc.oneof(hexId, b64Id);

const ALL_ON = {
  ...DEFAULT_POLICY,
  weights: Object.fromEntries(
    SIGNAL_NAMES.map((n) => [n, n === 'completed_trades' ? -1 : 1]),
  ) as typeof DEFAULT_POLICY.weights,
};
/**
 * A ring: the root, an unflagged neighbour through a device, and behind it an account reported for fraud 9 days ago
 * through a bank account.
 */
const ring = (): Ring => ({
  root: 'e1',
  edges: [],
  hubs: [],
  truncated: false,
  nodes: [
    { entityId: 'e1', distance: 0, flags: [], flaggedAt: 0, via: [] },
    { entityId: 'n1', distance: 1, flags: [], flaggedAt: 0, via: ['device'] },
    {
      entityId: 'n2',
      distance: 2,
      flags: ['fraud_reported'],
      flaggedAt: NOW - 9 * DAY - 3600_000,
      via: ['device', 'bank_account'],
    },
  ],
});
/** The same ring with three more accounts two hops away: five in all, three more than a household. */
const wideRing = (): Ring => {
  const r = ring();
  for (let i = 3; i <= 5; i++)
    r.nodes.push({ entityId: `n${i}`, distance: 2, flags: [], flaggedAt: 0, via: ['device', 'phone'] });
  return r;
};
const describe1 = (name: string, r: ScoreRequest, p = veteranProfile()) =>
  computeSignals(p, r, ALL_ON, NOW).find((s) => s.name === name)?.description;

describe('signal descriptions: properties', () => {
  test('every returned signal has a one-line sentence; none contains an entity, counterparty or identifier hash', () => {
    fc.assert(
      fc.property(
        profileArb,
        anyId,
        anyId,
        fc.array(fc.record({ type: fc.constantFrom('phone', 'bank_account', 'device'), hash: anyId }), {
          maxLength: 3,
        }),
        contextArb,
        currencyArb,
        fc.double({ min: 1e-3, max: 1e9, noNaN: true }),
        anyPolicy,
        (profile, entityId, counterpartyId, linked, ctx, currency, amount, policy) => {
          const p = { ...profile, entityId };
          const r: ScoreRequest = {
            entity_id: entityId,
            amount,
            currency,
            context: {
              ...ctx,
              counterparty_id: counterpartyId,
              trade_id: counterpartyId.slice(0, 20),
              linked_identifiers: linked,
            },
          };
          for (const s of computeSignals(p, r, policy, NOW)) {
            assert.ok(
              s.description.length > 0 && s.description.length < 200 && !/[\n\r]/.test(s.description),
              `${s.name}: ${JSON.stringify(s.description)}`,
            );
            for (const id of [entityId, counterpartyId, ...linked.map((l) => l.hash)]) {
              assert.ok(
                !s.description.includes(id) && !s.description.includes(id.slice(0, 12)),
                `${s.name} leaks an identifier: ${s.description}`,
              );
            }
            assert.ok(!/[0-9a-f]{12,}/i.test(s.description), `${s.name} has a hash-like run: ${s.description}`);
            // a party with no history has no "usual amount" to be a multiple of
            assert.ok(!/(^|\D)0×/.test(s.description), `${s.name} says 0×: ${s.description}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('every signal name has a template (all weights on, worst-case profile)', () => {
    const p = veteranProfile();
    Object.assign(p, {
      chargebacks: 3,
      fraudReports: 1,
      blocklisted: true,
      linkedFlaggedEntities: 2,
      sharedIdentifierEntities: 4,
      lastTradeAt: NOW - 200 * DAY,
      tradesCancelled: 20,
      disputesLost: 4,
      counterpartyTrades: 0,
    });
    p.networkFlags = [
      {
        peer_id: 'peer_a',
        peer_name: 'A',
        weight: 1,
        kinds: { chargeback: 2 },
        latest_month: new Date(NOW).toISOString().slice(0, 7),
      },
    ];
    Object.assign(p, {
      chargebacks: 3,
      fraudReports: 1,
      blocklisted: true,
      linkedFlaggedEntities: 2,
      sharedIdentifierEntities: 4,
      ring: wideRing(),
      lastTradeAt: NOW - 200 * DAY,
      tradesCancelled: 20,
      disputesLost: 4,
      counterpartyTrades: 0,
    });
    // dispute_rate shows only above the prior's rate: 40 recent losses against ~120 decayed trades.
    p.decayed = {
      ...p.decayed,
      chargebacks: 3,
      fraudReports: 1,
      tradesCancelled: 20,
      disputesLost: 40,
      fraudulentLosses: 2,
    };
    p.velocity = { tradesLastHour: 8, tradesLastDay: 30, volumeLastDay: 9000 };
    const r: ScoreRequest = {
      entity_id: 'e1',
      amount: 5000,
      currency: 'USD',
      context: {
        counterparty_id: 'cp',
        payment_method: 'card',
        country: 'NG',
        counterparty_country: 'GB',
        account_created_at: new Date(NOW - 5 * DAY).toISOString(),
      },
    };
    const names = new Set(
      [...computeSignals(p, r, ALL_ON, NOW), ...computeSignals(freshProfile(), r, ALL_ON, NOW)].map((s) => s.name),
    );
    assert.deepEqual([...names].sort(), [...SIGNAL_NAMES].sort());
  });
});

describe('signal descriptions: worked examples', () => {
  const R: ScoreRequest = { entity_id: 'e1', amount: 100, currency: 'USD', context: {} };

  test('dispute_rate: "5 lost disputes out of 31 trades, more than the 10% expected"; none for a clean record', () => {
    const p = veteranProfile();
    Object.assign(p, { tradesCompleted: 31, disputesLost: 5 });
    p.decayed = { ...p.decayed, tradesCompleted: 31, disputesLost: 5 };
    assert.equal(describe1('dispute_rate', R, p), '5 lost disputes out of 31 trades, more than the 10% expected');
    const clean = veteranProfile();
    Object.assign(clean, { tradesCompleted: 7 });
    clean.decayed = { ...clean.decayed, tradesCompleted: 7 };
    assert.equal(describe1('dispute_rate', R, clean), undefined, 'a clean record has no dispute_rate to describe');
  });

  test('chargebacks: "3 chargebacks in its history"; 1 → singular', () => {
    const p = veteranProfile();
    p.chargebacks = 3;
    p.decayed.chargebacks = 3;
    assert.equal(describe1('chargebacks', R, p), '3 chargebacks in its history');
    p.chargebacks = 1;
    assert.equal(describe1('chargebacks', R, p), '1 chargeback in its history');
  });

  test("network_flags: how many other marketplaces, when, which kinds — never a peer's name", () => {
    const p = veteranProfile();
    const month = new Date(NOW - 20 * DAY).toISOString().slice(0, 7);
    p.networkFlags = [
      { peer_id: 'peer_a', peer_name: 'Alpha Market', weight: 1, kinds: { chargeback: 2 }, latest_month: month },
      { peer_id: 'peer_b', peer_name: 'Beta Market', weight: 1, kinds: { fraud_report: 1 }, latest_month: month },
    ];
    const text = describe1('network_flags', R, p);
    assert.equal(
      text,
      'an identifier it uses was flagged by 2 other marketplaces in the last 90 days (chargeback, fraud report)',
    );
    assert.ok(!/Alpha|Beta/.test(text!));
    assert.equal(describe1('network_flags', R, veteranProfile()), undefined, 'no match, no signal');
  });

  test('amount_vs_history: "5× its usual USD amount", and the tier limit it is beyond', () => {
    // the clean veteran's tier allows USD 1000: within it the amount is no risk at all
    const withChargeback = veteranProfile();
    withChargeback.chargebacks = withChargeback.decayed.chargebacks = 1;
    assert.equal(describe1('amount_vs_history', { ...R, amount: 500 }), undefined);
    assert.equal(
      describe1('amount_vs_history', { ...R, amount: 2000 }),
      "20× its usual USD amount, above its tier's limit of USD 1000",
    );
    assert.equal(describe1('amount_vs_history', { ...R, amount: 500 }, withChargeback), '5× its usual USD amount');
    assert.equal(
      describe1('amount_vs_history', { ...R, amount: 2000 }, withChargeback),
      '20× its usual USD amount',
      'a warning sign: its tier limit played no part',
    );
    assert.equal(
      describe1('amount_vs_history', { ...R, amount: 1000 }, freshProfile()),
      "no earlier USD trade to compare the amount with, above its tier's limit of USD 250",
    );
  });

  test('linked_flagged_entities and shared_identifier_entities give the count, never which identifier', () => {
    const p = { ...veteranProfile(), linkedFlaggedEntities: 2, sharedIdentifierEntities: 5 };
    assert.equal(
      describe1('linked_flagged_entities', R, p),
      'an identifier shared with 2 reported or blocklisted entities',
    );
    assert.equal(describe1('shared_identifier_entities', R, p), 'identifiers shared with 5 other entities');
  });

  test('the ring signals: the path by identifier type and the age of the flag, never an identifier', () => {
    const p = { ...veteranProfile(), ring: ring() };
    assert.equal(
      describe1('ring_flagged_entities', R, p),
      '2 hops from an account reported for fraud 9 days ago, through a shared device and a shared bank account',
    );
    assert.equal(describe1('ring_size', R, p), undefined, 'two accounts are a household: ring_size is 0 and left out');
    assert.equal(
      describe1('ring_size', R, { ...veteranProfile(), ring: wideRing() }),
      '5 accounts within two hops through shared identifiers, 3 more than a household',
    );
    const two = ring();
    two.nodes.push({ entityId: 'n3', distance: 1, flags: ['chargeback'], flaggedAt: NOW - 400 * DAY, via: ['phone'] });
    assert.equal(
      describe1('ring_flagged_entities', R, { ...veteranProfile(), ring: two }),
      '2 hops from an account reported for fraud 9 days ago, through a shared device and a shared bank account (1 more flagged account within two hops)',
    );
  });

  test('the P2P features', () => {
    const p = veteranProfile();
    p.velocity = { tradesLastHour: 3, tradesLastDay: 6, volumeLastDay: 600 };
    assert.equal(
      describe1('cash_out_burst', { ...R, amount: 500 }, p),
      '5× its usual amount during a burst of 6 trades in a day (usually 0.5)',
    );
    assert.equal(
      describe1('dormant_reactivation', R, { ...veteranProfile(), lastTradeAt: NOW - 120 * DAY }),
      'trading again after 120 days without a completed trade',
    );
    const young = {
      ...R,
      context: { payment_method: 'card' as const, account_created_at: new Date(NOW - 9 * DAY).toISOString() },
    };
    assert.equal(describe1('young_account_reversible_method', young), 'paid by card from an account 9 days old');
    assert.equal(
      describe1(
        'new_counterparty_large_trade',
        { ...R, amount: 2000, context: { counterparty_id: 'cp' } },
        { ...veteranProfile(), counterpartyTrades: 0 },
      ),
      'a first trade with this counterparty at 20× its usual amount',
    );
  });
});
