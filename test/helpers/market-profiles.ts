// Entities as a marketplace shows them: mostly clean, a history of plausible size and spread, a
// few warning signs now and then, under the default policy or one with another `high`. profileArb
// (profiles.ts) draws every counter up to thousands, so nearly every entity it makes is flagged
// many times over and scores high at any amount; these keep the safe amount's step in play: tier
// limits, the history's own bound, bursts and strangers.
import fc from 'fast-check';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import type { EntityProfile } from '../../src/model/types.ts';
import { DAY, NOW } from './profiles.ts';

/** Mostly 0: a warning sign is the exception. */
const rare = (max: number) =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.double({ min: 0, max, noNaN: true }));
const rareCount = (max: number) => fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.nat({ max }));

const historyArb = fc.oneof(
  fc.constant({ n: 0, logMean: 0, logM2: 0, volume: 0 }),
  fc
    .record({
      n: fc.integer({ min: 1, max: 500 }),
      logMean: fc.double({ min: Math.log(1e-4), max: Math.log(1e6), noNaN: true }),
      std: fc.double({ min: 0, max: 1.5, noNaN: true }),
    })
    .map(({ n, logMean, std }) => ({ n, logMean, logM2: (n - 1) * std * std, volume: n * Math.exp(logMean) })),
);

export const marketProfileArb: fc.Arbitrary<EntityProfile> = fc
  .record({
    ageDays: fc.double({ min: 0, max: 400, noNaN: true }),
    trades: fc.nat({ max: 500 }),
    cancelled: rareCount(5),
    lost: rareCount(3),
    chargebacks: rare(2),
    fraudReports: rare(2),
    blocklisted: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, fc.constant(true)),
    tradesLastDay: fc.nat({ max: 12 }),
    amountStats: historyArb,
    counterpartyTrades: fc.option(fc.nat({ max: 5 }), { nil: null }),
    linkedFlaggedEntities: rareCount(2),
    sharedIdentifierEntities: rareCount(4),
  })
  .map((d) => ({
    entityId: 'e1',
    known: d.trades > 0 || d.ageDays > 0,
    firstSeenAt: NOW - d.ageDays * DAY,
    lastEventAt: NOW - Math.min(d.ageDays, 1) * DAY,
    tradesCompleted: d.trades,
    tradesCancelled: d.cancelled,
    disputesOpened: d.lost,
    disputesWon: 0,
    disputesLost: d.lost,
    chargebacks: Math.ceil(d.chargebacks),
    fraudReports: Math.ceil(d.fraudReports),
    blocklisted: d.blocklisted,
    decayed: {
      at: NOW,
      tradesCompleted: d.trades * 0.7,
      tradesCancelled: d.cancelled * 0.7,
      disputesLost: d.lost * 0.7,
      chargebacks: d.chargebacks,
      fraudReports: d.fraudReports,
    },
    velocity: {
      tradesLastHour: Math.min(d.tradesLastDay, 3),
      tradesLastDay: d.tradesLastDay,
      volumeLastDay: d.tradesLastDay * Math.exp(d.amountStats.logMean),
    },
    amountStats: d.amountStats,
    counterpartyTrades: d.counterpartyTrades,
    linkedFlaggedEntities: d.linkedFlaggedEntities,
    lastTradeAt: d.trades > 0 ? NOW - Math.min(d.ageDays, 2) * DAY : null,
    sharedIdentifierEntities: d.sharedIdentifierEntities,
  }));

export const marketPolicyArb: fc.Arbitrary<Policy> = fc.oneof(
  fc.constant(DEFAULT_POLICY),
  fc
    .integer({ min: 20, max: 95 })
    .map((high) => ({ ...DEFAULT_POLICY, thresholds: { medium: 10, high, critical: 99 } })),
);
