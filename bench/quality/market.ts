// A seeded simulation of a P2P fiat/crypto market for the policy-quality run: an event history in the shape POST
// /api/v1/trust/events takes, and the score requests a marketplace would send before releasing funds, each with its
// ground truth and the outcome events that later arrive. The same seed and options give the same output, byte for byte.
//
//   const { events, requests } = simulateMarket({ seed: 1, entities: 2000, days: 60 });
//
// Every outcome event is also in `events`, so a run may post the history in time order (labels then arrive as
// docs/api.md, "Outcomes and labels" derives them) or use `label` directly. `eventLabel` differs from the ground truth
// where real data would too: a sloppy trader's lost dispute labels a legit trade fraud, and fraud whose chargeback
// lands after `end` is not labelled yet.
import type { TrustEvent } from '../../src/trust/schemas.ts';
import { logNormal, mulberry32, weighted } from './prng.ts';
import { chargebackFraud, exitScam, mule, throwaway, trader, triangulation, type Pools } from './populations.ts';
import { COUNTRIES, DAY, World, type Country, type Entity, type LabelledRequest, type Population } from './world.ts';

export type { LabelledRequest, Population } from './world.ts';
export { FRAUD_POPULATIONS } from './world.ts';

export interface MarketOptions {
  seed: number;
  /** traders in the market (default 2000) */
  entities?: number;
  /** length of the simulated period (default 60) */
  days?: number;
  /** end of the period; fixed by default so output does not depend on the clock */
  end?: string | number;
  /** days at the start that only build history, with no score request (default days / 3) */
  warmupDays?: number;
  /** share of entities per population; normalised (defaults: DEFAULT_MIX) */
  mix?: Partial<Record<Population, number>>;
  /** multiplies every trade rate (default 1) */
  activity?: number;
}

export interface Market {
  events: TrustEvent[];
  requests: LabelledRequest[];
  entities: { entity_id: string; population: Population }[];
  start: string;
  end: string;
  /** requests are emitted from here on */
  requestsFrom: string;
}

export const DEFAULT_END = '2026-11-01T00:00:00Z';
export const DEFAULT_MIX: Readonly<Record<Population, number>> = {
  honest: 0.8,
  sloppy: 0.1,
  throwaway: 0.03,
  exit_scam: 0.015,
  chargeback: 0.02,
  triangulation: 0.015,
  mule: 0.02,
};

const COUNTRY_WEIGHTS = Object.fromEntries(COUNTRIES.map((c) => [c.country, c.weight])) as Record<string, number>;

/**
 * The graph structure of rings and of ordinary life, drawn from its own generator so the rest of
 * the market (trades, outcomes) is the one it was without it:
 * - a mule ring rents bank accounts and phones in pairs: member i shares a bank account with one
 *   neighbour and a device with the other, so the ring is a chain and most members are two or
 *   more hops from one another (the members of one ring share an activation time);
 * - triangulation crews of 3–5 accounts, in order of creation, rotate over two devices, and half
 *   of the accounts also name the crew's drop bank account;
 * - 6% of honest and sloppy traders live in households of two or three sharing a device or a bank
 *   account: legitimate sharing the ring signals must not punish.
 */
function crewsAndHouseholds(
  w: World,
  entities: Entity[],
  random: () => number,
  activation: (e: Entity) => number | undefined,
): void {
  const rings = new Map<number, Entity[]>();
  for (const e of entities)
    if (e.population === 'mule') rings.set(activation(e)!, [...(rings.get(activation(e)!) ?? []), e]);
  for (const members of rings.values()) {
    const banks = Array.from({ length: Math.ceil(members.length / 2) + 1 }, () => w.newHash());
    const devices = Array.from({ length: Math.ceil(members.length / 2) + 1 }, () => w.newHash());
    members.forEach((e, i) => {
      e.shared = [
        { type: 'bank_account', hash: banks[Math.floor(i / 2)]! },
        { type: 'device', hash: devices[Math.floor((i + 1) / 2)]! },
      ];
    });
  }
  const crews = entities.filter((e) => e.population === 'triangulation').sort((a, b) => a.createdAt - b.createdAt);
  for (let i = 0; i < crews.length;) {
    const size = 3 + Math.floor(random() * 3);
    const devices = [w.newHash(), w.newHash()];
    const drop = w.newHash();
    crews.slice(i, i + size).forEach((e, j) => {
      e.shared = [
        { type: 'device', hash: devices[j % 2]! },
        ...(random() < 0.5 ? [{ type: 'bank_account' as const, hash: drop }] : []),
      ];
    });
    i += size;
  }
  const people = entities.filter((e) => (e.population === 'honest' || e.population === 'sloppy') && random() < 0.06);
  for (let i = 0; i + 1 < people.length;) {
    const size = random() < 0.7 ? 2 : 3;
    const shared = { type: random() < 0.6 ? ('device' as const) : ('bank_account' as const), hash: w.newHash() };
    for (const e of people.slice(i, i + size)) e.shared = [shared];
    i += size;
  }
}

export function simulateMarket(options: MarketOptions): Market {
  const count = options.entities ?? 2000;
  const days = options.days ?? 60;
  const end = typeof options.end === 'number' ? options.end : Date.parse(options.end ?? DEFAULT_END);
  if (!Number.isInteger(count) || count < 10) throw new RangeError('simulateMarket: entities must be an integer ≥ 10');
  if (!(days >= 1) || !Number.isFinite(end))
    throw new RangeError('simulateMarket: days must be ≥ 1 and end a valid time');
  const start = end - days * DAY;
  const warmup = options.warmupDays ?? days / 3;
  const activity = options.activity ?? 1;
  const mix = { ...DEFAULT_MIX, ...options.mix };
  const random = mulberry32(options.seed);
  const w = new World(random, options.seed, start, end, start + warmup * DAY);
  const u = (lo: number, hi: number) => lo + random() * (hi - lo);

  const throwawayDevices: string[] = [];
  let ring: { left: number; shared: Entity['shared']; activation: number } = { left: 0, shared: [], activation: 0 };
  const entities: Entity[] = [];
  const activations = new Map<Entity, number>();
  for (let index = 0; index < count; index++) {
    const population = weighted(random, mix);
    const country = weighted(random, COUNTRY_WEIGHTS);
    const home = COUNTRIES.find((c) => c.country === country) as Country;
    const e: Entity = {
      index,
      id: w.entityId(index),
      population,
      home,
      createdAt: start - u(0, 730) * DAY,
      typicalUsd: logNormal(random, 150, 0.9),
      rate: Math.min(8, logNormal(random, 0.35, 0.9)) * activity,
      methods: {},
      partners: [],
      shared: [],
      goneAt: Infinity,
    };
    if (population === 'honest' && random() < 0.15) e.createdAt = u(start, end);
    if (population === 'sloppy') e.rate *= 0.7;
    if (population === 'throwaway') {
      e.createdAt = u(start, end);
      e.goneAt = e.createdAt + u(2, 10) * DAY;
      // one operator runs a few throw-away accounts from the same device
      if (throwawayDevices.length === 0 || random() < 0.35) throwawayDevices.push(w.newHash());
      e.shared = [{ type: 'device', hash: throwawayDevices[throwawayDevices.length - 1]! }];
    } else if (population === 'exit_scam') {
      e.createdAt = random() < 0.5 ? start - u(0, 60) * DAY : u(start, start + (end - start) / 3);
      e.rate = u(1, 3) * activity;
      e.typicalUsd = logNormal(random, 60, 0.5);
    } else if (population === 'chargeback') {
      e.createdAt = random() < 0.7 ? start - u(10, 120) * DAY : u(start, end);
      e.rate = logNormal(random, 0.5, 0.5) * activity;
      e.typicalUsd = logNormal(random, 200, 0.6);
    } else if (population === 'triangulation') {
      e.createdAt = random() < 0.6 ? start - u(5, 60) * DAY : u(start, end);
      e.rate = u(0.5, 1.5) * activity;
      e.typicalUsd = logNormal(random, 250, 0.5);
    } else if (population === 'mule') {
      if (ring.left === 0) {
        ring = {
          left: 3 + Math.floor(random() * 6),
          shared: [
            { type: 'bank_account', hash: w.newHash() },
            { type: 'device', hash: w.newHash() },
          ],
          activation: u(w.requestsFrom, end),
        };
      }
      ring.left--;
      e.shared = ring.shared;
      e.createdAt = start - u(30, 200) * DAY;
      e.rate = logNormal(random, 0.3, 0.5) * activity;
      activations.set(e, ring.activation);
    }
    entities.push(e);
  }

  crewsAndHouseholds(w, entities, mulberry32(options.seed + 7919), (e) => activations.get(e));

  const pools: Pools = { byCountry: new Map() };
  for (const e of entities) {
    if (e.population !== 'honest' && e.population !== 'sloppy') continue;
    const pool = pools.byCountry.get(e.home.country) ?? [];
    pool.push(e);
    pools.byCountry.set(e.home.country, pool);
  }
  if (pools.byCountry.size === 0)
    throw new RangeError('simulateMarket: the mix leaves no honest or sloppy trader to trade with');

  for (const e of entities) {
    switch (e.population) {
      case 'honest':
        trader(w, e, pools, false);
        break;
      case 'sloppy':
        trader(w, e, pools, true);
        break;
      case 'throwaway':
        throwaway(w, e, pools);
        break;
      case 'exit_scam':
        exitScam(w, e, pools);
        break;
      case 'chargeback':
        chargebackFraud(w, e, pools);
        break;
      case 'triangulation':
        triangulation(w, e, pools);
        break;
      case 'mule':
        mule(w, e, pools, activations.get(e)!);
        break;
    }
  }

  const byTime = (a: { t: number; seq: number }, b: { t: number; seq: number }) => a.t - b.t || a.seq - b.seq;
  return {
    events: w.events.sort(byTime).map((x) => x.event),
    requests: w.requests.sort(byTime).map((x) => x.request),
    entities: entities.map((e) => ({ entity_id: e.id, population: e.population })),
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    requestsFrom: new Date(w.requestsFrom).toISOString(),
  };
}
