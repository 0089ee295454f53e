// What each kind of trader does over the simulated period. Rates, sizes and methods are plain
// guesses at a P2P fiat/crypto desk, documented here so a reader can argue with them; the fraud
// patterns follow the ones operators report: throw-away accounts, reputation-farming exit scams,
// chargeback fraud on reversible rails, triangulation through third-party payers, and mule rings
// that share bank accounts and devices.
import type { PaymentMethod } from '../../src/model/types.ts';
import { chance, logNormal, pick, weighted } from './prng.ts';
import { COUNTRIES, DAY, HOUR, type Entity, type World } from './world.ts';

export interface Pools {
  /** honest and sloppy traders by country: the usual counterparties (and fraud's victims) */
  byCountry: Map<string, Entity[]>;
}

const HONEST_METHODS: Partial<Record<PaymentMethod, number>> = {
  bank_transfer: 55,
  mobile_money: 15,
  e_wallet: 12,
  card: 10,
  cash: 5,
  other: 3,
};
const uniform = (w: World, lo: number, hi: number): number => lo + w.random() * (hi - lo);

/** A counterparty active at `t`: a repeat partner, else someone at home (or, sometimes, abroad). */
export function counterparty(
  w: World,
  e: Entity,
  t: number,
  pools: Pools,
  options: { repeat?: number; abroad?: number } = {},
): Entity {
  if (e.partners.length > 0 && chance(w.random, options.repeat ?? 0)) return pick(w.random, e.partners);
  let chosen: Entity | undefined;
  for (let attempt = 0; attempt < 6 && chosen === undefined; attempt++) {
    const country = chance(w.random, options.abroad ?? 0.05) ? pick(w.random, COUNTRIES).country : e.home.country;
    const pool = pools.byCountry.get(country) ?? [];
    const candidate = pool.length > 0 ? pick(w.random, pool) : undefined;
    if (candidate && candidate !== e && candidate.createdAt <= t) chosen = candidate;
  }
  chosen ??= pick(
    w.random,
    [...pools.byCountry.values()].flat().filter((c) => c !== e),
  );
  if (e.partners.length < 8 && !e.partners.includes(chosen)) e.partners.push(chosen);
  return chosen;
}

const activeFrom = (w: World, e: Entity) => Math.max(w.start, e.createdAt);
const activeTo = (w: World, e: Entity) => Math.min(w.end, e.goneAt);

function linkShared(w: World, e: Entity): void {
  for (const s of e.shared)
    w.event(activeFrom(w, e) + uniform(w, 0, HOUR), 'identifier.linked', e, {
      linked_identifiers: [{ type: s.type, hash: s.hash }],
    });
}

/**
 * Links the identifiers of a household or a triangulation crew (market.ts, crewsAndHouseholds) a
 * minute after the account starts. It draws no random number, so the rest of the market is the
 * same as without these links.
 */
function linkQuietly(w: World, e: Entity): void {
  for (const s of e.shared)
    w.event(activeFrom(w, e) + 60_000, 'identifier.linked', e, {
      linked_identifiers: [{ type: s.type, hash: s.hash }],
    });
}

/** Honest traders (and, with more cancellations and disputes, sloppy ones): never fraud. */
export function trader(w: World, e: Entity, pools: Pools, sloppy: boolean): void {
  linkQuietly(w, e);
  e.methods = HONEST_METHODS;
  const one = (at: number, factor: number) => {
    const disputed = chance(w.random, sloppy ? 0.07 : 0.01);
    w.trade({
      entity: e,
      at,
      usd: w.size(e, factor),
      method: weighted(w.random, e.methods),
      fraud: null,
      counterparty: counterparty(w, e, at, pools, { repeat: 0.5, abroad: 0.1 }),
      cancel: chance(w.random, sloppy ? 0.25 : 0.03),
      dispute: disputed ? (chance(w.random, sloppy ? 0.5 : 0.85) ? 'won' : 'lost') : undefined,
    });
  };
  for (const at of w.arrivals(activeFrom(w, e), activeTo(w, e), e.rate)) {
    // Honest people also buy big once in a while, and sometimes trade a lot in one sitting; the
    // model has to tell that from an exit scam.
    one(at, chance(w.random, 0.06) ? uniform(w, 3, 8) : 1);
    if (chance(w.random, 0.015)) {
      const burst = 3 + Math.floor(w.random() * 5);
      for (let i = 1; i <= burst; i++) one(at + i * uniform(w, 5, 40) * 60_000, 1);
    }
  }
}

/** New account, one to three large trades on reversible rails, then gone. */
export function throwaway(w: World, e: Entity, pools: Pools): void {
  linkShared(w, e);
  let at = e.createdAt + logNormal(w.random, 4 * HOUR, 1);
  const trades = 1 + Math.floor(w.random() * 3);
  for (let i = 0; i < trades && at < e.goneAt; i++) {
    w.trade({
      // Cards and e-wallets mostly; a hijacked bank login sometimes.
      entity: e,
      at,
      usd: w.size(e, uniform(w, 2, 8)),
      method: weighted(w.random, { card: 5, e_wallet: 3, bank_transfer: 2 }),
      counterparty: counterparty(w, e, at, pools, { abroad: 0.4 }),
      fraud: chance(w.random, 0.7) ? 'chargeback' : 'reported',
      showLinked: chance(w.random, 0.3),
    });
    at += logNormal(w.random, 8 * HOUR, 1);
  }
  if (chance(w.random, 0.5)) w.event(e.goneAt + uniform(w, 5, 30) * DAY, 'entity.blocklisted', e);
}

/** Farms a reputation with many small trades, then cashes out in a burst far above its own size. */
export function exitScam(w: World, e: Entity, pools: Pools): void {
  const from = activeFrom(w, e);
  const exitAt =
    Math.max(w.requestsFrom, from + 20 * DAY) +
    w.random() * Math.max(0, w.end - Math.max(w.requestsFrom, from + 20 * DAY));
  e.goneAt = exitAt + 6 * HOUR;
  for (const at of w.arrivals(from, Math.min(exitAt, w.end), e.rate)) {
    w.trade({
      entity: e,
      at,
      usd: w.size(e),
      method: chance(w.random, 0.7) ? 'bank_transfer' : 'mobile_money',
      fraud: null,
      counterparty: counterparty(w, e, at, pools, { repeat: 0.4 }),
      cancel: chance(w.random, 0.01),
    });
  }
  const burst = 3 + Math.floor(w.random() * 6);
  const span = uniform(w, 1, 6) * HOUR;
  for (let i = 0; i < burst; i++) {
    const at = exitAt + (span * i) / burst;
    w.trade({
      entity: e,
      at,
      usd: w.size(e, uniform(w, 3, 12), 0.3),
      method: chance(w.random, 0.6) ? 'bank_transfer' : 'e_wallet',
      counterparty: counterparty(w, e, at, pools, { abroad: 0.2 }),
      fraud: 'reported',
    });
  }
  if (chance(w.random, 0.7)) w.event(exitAt + uniform(w, 2, 6) * DAY, 'entity.blocklisted', e);
}

/** Pays with cards and e-wallets and reverses a share of the payments once the crypto is out. */
export function chargebackFraud(w: World, e: Entity, pools: Pools): void {
  let trades = 0;
  let firstFraud = Infinity;
  for (const at of w.arrivals(activeFrom(w, e), activeTo(w, e), e.rate)) {
    const fraud = trades++ >= 2 && chance(w.random, 0.35);
    if (fraud && firstFraud === Infinity) firstFraud = at;
    w.trade({
      entity: e,
      at,
      usd: w.size(e, fraud ? uniform(w, 1, 3) : 1),
      method: chance(w.random, 0.6) ? 'card' : 'e_wallet',
      counterparty: counterparty(w, e, at, pools, { repeat: 0.2, abroad: 0.15 }),
      fraud: fraud ? 'chargeback' : null,
    });
    // The platform blocks the account some weeks after its first reversal.
    if (firstFraud !== Infinity && at > firstFraud + 45 * DAY) {
      if (chance(w.random, 0.6)) w.event(at + DAY, 'entity.blocklisted', e);
      break;
    }
  }
}

/** Buys with a third party's (stolen or scammed) money: cross-border, new counterparties, bank rails. */
export function triangulation(w: World, e: Entity, pools: Pools): void {
  linkQuietly(w, e);
  let trades = 0;
  let lostAt = Infinity;
  for (const at of w.arrivals(activeFrom(w, e), activeTo(w, e), e.rate)) {
    if (at > lostAt + 15 * DAY) break;
    const fraud = trades++ >= 2 && chance(w.random, 0.6);
    if (fraud && lostAt === Infinity) lostAt = at + 4 * DAY;
    w.trade({
      entity: e,
      at,
      usd: w.size(e, fraud ? uniform(w, 1.5, 4) : 1),
      method: fraud ? 'bank_transfer' : weighted(w.random, HONEST_METHODS),
      counterparty: counterparty(w, e, at, pools, { abroad: fraud ? 0.7 : 0.1 }),
      fraud: fraud ? 'third_party' : null,
    });
  }
}

/** A mule ring member: quiet until the ring is activated, then cashes out fraud proceeds. */
export function mule(w: World, e: Entity, pools: Pools, activation: number): void {
  linkShared(w, e);
  e.goneAt = Math.min(e.goneAt, activation + uniform(w, 5, 20) * DAY);
  for (const at of w.arrivals(activeFrom(w, e), Math.min(activation, w.end), e.rate)) {
    w.trade({
      entity: e,
      at,
      usd: w.size(e),
      method: weighted(w.random, HONEST_METHODS),
      fraud: null,
      counterparty: counterparty(w, e, at, pools, { repeat: 0.3 }),
    });
  }
  for (const at of w.arrivals(activation, activeTo(w, e), e.rate * 4)) {
    const fraud = chance(w.random, 0.5);
    w.trade({
      entity: e,
      at,
      usd: w.size(e, fraud ? 2 : 1),
      method: chance(w.random, 0.7) ? 'bank_transfer' : 'mobile_money',
      counterparty: counterparty(w, e, at, pools, { abroad: 0.3 }),
      fraud: fraud ? 'reported' : null,
      showLinked: chance(w.random, 0.5),
    });
  }
  if (chance(w.random, 0.4)) w.event(e.goneAt + uniform(w, 1, 10) * DAY, 'entity.blocklisted', e);
}
