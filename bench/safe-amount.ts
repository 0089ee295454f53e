// `npx tsx bench/safe-amount.ts`: how long safe_amount takes in-process, on a veteran (200 trades
// of ~100 USD over a year) trading with a new counterparty by bank transfer. Timings live here, not
// in the tests, which a busy shared machine would make flaky.
import { DEFAULT_POLICY } from '../src/model/policy.ts';
import { decayFactor } from '../src/model/signal-model.ts';
import { safeAmount } from '../src/trust/safe-amount.ts';
import type { EntityProfile, ScoreRequest } from '../src/model/types.ts';

const DAY = 86_400_000;
const now = Date.parse('2026-11-21T12:00:00Z');
let decayed = 0;
for (let i = 0; i < 200; i++)
  decayed += decayFactor(now - ((i + 0.5) * 365 * DAY) / 200, now, DEFAULT_POLICY.decayHalfLifeDays);
const veteran: EntityProfile = {
  entityId: 'e1',
  known: true,
  firstSeenAt: now - 365 * DAY,
  lastEventAt: now - DAY,
  lastTradeAt: now - DAY,
  tradesCompleted: 200,
  tradesCancelled: 0,
  disputesOpened: 0,
  disputesWon: 0,
  disputesLost: 0,
  chargebacks: 0,
  fraudReports: 0,
  blocklisted: false,
  decayed: { at: now, tradesCompleted: decayed, tradesCancelled: 0, disputesLost: 0, chargebacks: 0, fraudReports: 0 },
  velocity: { tradesLastHour: 0, tradesLastDay: 1, volumeLastDay: 100 },
  amountStats: { n: 200, logMean: Math.log(100), logM2: 199 * 0.25, volume: 20_000 },
  counterpartyTrades: 0,
  linkedFlaggedEntities: 0,
};
const request: ScoreRequest = {
  entity_id: 'e1',
  amount: 100,
  currency: 'USD',
  context: { counterparty_id: 'cp', payment_method: 'bank_transfer' },
};

const N = Number(process.env.N ?? 10_000);
for (let i = 0; i < 1000; i++) safeAmount(veteran, { ...request, amount: i + 1 }, DEFAULT_POLICY, now);
const t0 = performance.now();
let answer: number | null = null;
for (let i = 0; i < N; i++) answer = safeAmount(veteran, { ...request, amount: i + 1 }, DEFAULT_POLICY, now);
const ms = performance.now() - t0;
console.log(
  JSON.stringify({
    safe_amount: answer,
    calls: N,
    total_ms: Number(ms.toFixed(1)),
    us_per_call: Number(((ms * 1000) / N).toFixed(2)),
  }),
);
