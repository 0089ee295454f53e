// Profiles, requests and policies for the pure model's property tests (safe_amount, the P2P
// features, descriptions). Shapes and ranges follow test/trust/model.test.ts, plus the fields
// issue 10 added (lastTradeAt, sharedIdentifierEntities).
import fc from 'fast-check';
import { DEFAULT_POLICY, SIGNAL_DIRECTIONS, SIGNAL_NAMES, type Policy } from '../../src/model/policy.ts';
import { decayFactor } from '../../src/model/signal-model.ts';
import { PAYMENT_METHODS, type EntityProfile, type ScoreRequest } from '../../src/model/types.ts';

export const DAY = 86_400_000;
export const NOW = Date.parse('2026-11-21T12:00:00Z');

export function freshProfile(): EntityProfile {
  return {
    entityId: 'e1',
    known: false,
    firstSeenAt: null,
    lastEventAt: null,
    tradesCompleted: 0,
    tradesCancelled: 0,
    disputesOpened: 0,
    disputesWon: 0,
    disputesLost: 0,
    chargebacks: 0,
    fraudReports: 0,
    blocklisted: false,
    decayed: { at: NOW, tradesCompleted: 0, tradesCancelled: 0, disputesLost: 0, chargebacks: 0, fraudReports: 0 },
    velocity: { tradesLastHour: 0, tradesLastDay: 0, volumeLastDay: 0 },
    amountStats: { n: 0, logMean: 0, logM2: 0, volume: 0 },
    counterpartyTrades: null,
    linkedFlaggedEntities: 0,
    lastTradeAt: null,
    sharedIdentifierEntities: 0,
  };
}

/** 200 clean trades of ~100 (σ of ln amount 0.5) over a year, the last a day ago. */
export function veteranProfile(): EntityProfile {
  const p = freshProfile();
  p.known = true;
  p.firstSeenAt = NOW - 365 * DAY;
  p.lastEventAt = NOW - DAY;
  p.lastTradeAt = NOW - DAY;
  p.tradesCompleted = 200;
  let decayed = 0;
  for (let i = 0; i < 200; i++) decayed += decayFactor(NOW - ((i + 0.5) * 365 * DAY) / 200, NOW, 180);
  p.decayed.tradesCompleted = decayed;
  p.velocity = { tradesLastHour: 0, tradesLastDay: 1, volumeLastDay: 100 };
  p.amountStats = { n: 200, logMean: Math.log(100), logM2: 199 * 0.25, volume: 20_000 };
  return p;
}

const cnt = fc.double({ min: 0, max: 5000, noNaN: true });
const time = fc.integer({ min: NOW - 3 * 365 * DAY, max: NOW + DAY });

export const profileArb: fc.Arbitrary<EntityProfile> = fc.record({
  entityId: fc.constant('e1'),
  known: fc.boolean(),
  firstSeenAt: fc.option(time, { nil: null }),
  lastEventAt: fc.option(time, { nil: null }),
  tradesCompleted: fc.nat({ max: 5000 }),
  tradesCancelled: fc.nat({ max: 5000 }),
  disputesOpened: fc.nat({ max: 100 }),
  disputesWon: fc.nat({ max: 100 }),
  disputesLost: fc.nat({ max: 100 }),
  chargebacks: fc.nat({ max: 50 }),
  fraudReports: fc.nat({ max: 50 }),
  blocklisted: fc.boolean(),
  decayed: fc.record({
    at: time,
    tradesCompleted: cnt,
    tradesCancelled: cnt,
    disputesLost: cnt,
    chargebacks: cnt,
    fraudReports: cnt,
    fraudulentLosses: fc.double({ min: 0, max: 20, noNaN: true }),
  }),
  velocity: fc.record({
    tradesLastHour: fc.nat({ max: 200 }),
    tradesLastDay: fc.nat({ max: 2000 }),
    volumeLastDay: fc.double({ min: 0, max: 1e9, noNaN: true }),
  }),
  amountStats: fc.oneof(
    fc.constant({ n: 0, logMean: 0, logM2: 0, volume: 0 }),
    fc.record({
      n: fc.nat({ max: 5000 }),
      logMean: fc.double({ min: -10, max: 25, noNaN: true }),
      logM2: fc.double({ min: 0, max: 1e5, noNaN: true }),
      volume: fc.double({ min: 0, max: 1e12, noNaN: true }),
    }),
  ),
  counterpartyTrades: fc.option(fc.nat({ max: 100 }), { nil: null }),
  linkedFlaggedEntities: fc.nat({ max: 10 }),
  lastTradeAt: fc.option(time, { nil: null }),
  sharedIdentifierEntities: fc.nat({ max: 100 }),
});

export const currencyArb = fc.constantFrom('USD', 'EUR', 'JPY', 'BHD', 'NGN', 'BTC', 'ETH', 'USDT');

export const contextArb = fc.record(
  {
    counterparty_id: fc.constant('cp1'),
    payment_method: fc.constantFrom(...PAYMENT_METHODS),
    country: fc.constantFrom('NG', 'GB', 'us'),
    counterparty_country: fc.constantFrom('NG', 'GB', 'US'),
    account_created_at: fc.oneof(
      time.map((t) => new Date(t).toISOString()),
      fc.constant('not a date'),
    ),
  },
  { requiredKeys: [] },
);

export const requestArb: fc.Arbitrary<ScoreRequest> = fc.record({
  entity_id: fc.constant('e1'),
  amount: fc.double({ min: 1e-6, max: 1e10, noNaN: true }),
  currency: currencyArb,
  context: contextArb,
});

/** Any policy that passes validation: weights of the allowed sign, including zero. */
export const policyArb: fc.Arbitrary<Policy> = fc
  .record({
    bias: fc.double({ min: -10, max: 10, noNaN: true }),
    weights: fc.tuple(...SIGNAL_NAMES.map(() => fc.oneof(fc.constant(0), fc.double({ min: 0, max: 20, noNaN: true })))),
    high: fc.integer({ min: 2, max: 98 }),
  })
  .map(({ bias, weights, high }) => ({
    ...structuredClone(DEFAULT_POLICY),
    bias,
    thresholds: { medium: 1, high, critical: 99 },
    weights: Object.fromEntries(
      SIGNAL_NAMES.map((n, i) => [n, (SIGNAL_DIRECTIONS[n] === 'protective' ? -1 : 1) * (weights[i] ?? 0) + 0]),
    ) as Policy['weights'],
  }));

export const anyPolicy = fc.oneof(fc.constant(DEFAULT_POLICY), policyArb);
