// One plain sentence per signal (docs/api.md, "Trust scoring" `description`): what was seen, with the figure. Built
// only from counts, durations, ratios and the fixed vocabularies (currency code, payment method),
// never from an identifier, so a description can be shown to an operator or a counterparty and
// logged without leaking who was linked to whom. Templates are listed in docs/signals.md.
import type { SignalName } from './policy.ts';
import type { LossReasonCounts } from './types.ts';
import { describeRingFlagged, describeRingSize, type RingFacts } from './ring-signals.ts';

/** The raw figures behind the signals, gathered by the model (signal-model.ts, prepare). */
export interface Facts {
  tradesCompleted: number;
  tradesCancelled: number;
  disputesLost: number;
  /** of those, the ones lost for a fraud, per reason (undecayed); absent = not known */
  disputesLostFor?: LossReasonCounts;
  /** the policy's prior mean of the lost-dispute rate, α / (α + β) */
  expectedDisputeRate: number;
  chargebacks: number;
  fraudReports: number;
  ageDays: number;
  tradesLastDay: number;
  tradesLastHour: number;
  /** the entity's own completed trades per active day */
  tradesPerDay: number;
  /** the last day's volume over its usual daily volume in the request's currency (0: no norm) */
  dayVolumeRatio: number;
  /** exp(mean ln amount) in the request's currency; 0 without history */
  typicalAmount: number;
  currency: string;
  paymentMethod: string;
  linkedFlagged: number;
  sharedEntities: number;
  dormantDays: number;
  amount?: number;
  /** the entity's tier limit in the request's currency (model/tiers.ts); 0 or absent: none */
  tierLimit?: number;
  /** network_flags' sentence, built from counts, kinds and a month only (network/signal.ts) */
  network?: string;
  /** the ring within two hops (src/model/ring-signals.ts); absent = none */
  ring?: RingFacts;
}

/** A count as people write it: whole numbers plain, anything else to one decimal. */
function num(x: number): string {
  if (!Number.isFinite(x)) return '0';
  const r = Math.round(x * 10) / 10;
  return Number.isInteger(r) ? String(r) : r.toFixed(1);
}

const plural = (n: number, one: string, many = `${one}s`): string =>
  `${num(n)} ${Math.round(n * 10) === 10 ? one : many}`;

/** "5×", "1.5×", "120×": one decimal below 10, whole above, "over 1000×" beyond. */
function times(r: number): string {
  if (Number.isNaN(r) || r <= 0) return '0×';
  if (r < 0.1) return 'under 0.1×';
  if (r > 1000) return 'over 1000×';
  if (r >= 10) return `${Math.round(r)}×`;
  return `${(Math.round(r * 10) / 10).toString()}×`;
}

/** "10%", "2.5%": a share as people write it, one decimal at most. */
function percent(share: number): string {
  return `${num(share * 100)}%`;
}

function days(d: number): string {
  if (d < 1) return 'less than a day';
  return plural(Math.floor(d), 'day');
}

const METHOD_WORDS: Readonly<Record<string, string>> = {
  bank_transfer: 'a bank transfer',
  card: 'card',
  mobile_money: 'mobile money',
  cash: 'cash',
  e_wallet: 'an e-wallet',
  crypto: 'crypto',
  other: 'another method',
};
const method = (m: string): string => METHOD_WORDS[m] ?? 'an unnamed method';
/** Currency codes come from a validated list (ISO 4217 or the policy's assets); anything else is not shown. */
const currency = (c: string): string => (/^[A-Z][A-Z0-9]{1,9}$/.test(c) ? `${c} ` : '');

/** A policy amount as written: up to six significant digits, no exponent for the usual sizes. */
const money = (x: number): string => Number(x.toPrecision(6)).toString();

/** ", above its tier's limit of USD 250" when the amount exceeds a tier limit, else nothing. */
function beyondLimit(f: Facts): string {
  const limit = f.tierLimit ?? 0;
  return limit > 0 && f.amount !== undefined && f.amount > limit
    ? `, above its tier's limit of ${currency(f.currency)}${money(limit)}`
    : '';
}

function amountRatio(f: Facts): number {
  return f.amount !== undefined && f.typicalAmount > 0 ? f.amount / f.typicalAmount : 0;
}

const LOSS_WORDS: Readonly<Record<keyof LossReasonCounts, string>> = {
  fake_proof: 'fake payment proof',
  third_party_payment: 'a third-party payment',
  underpayment: 'underpaying',
  no_payment: 'not paying',
};

/**
 * "lost 2 disputes for fake payment proof"; several reasons: "lost 3 disputes for fraud: 2 for fake payment proof, 1
 * for not paying".
 */
function describeFraudulentLosses(f: Facts): string {
  const by = f.disputesLostFor;
  const reasons = by
    ? (Object.keys(LOSS_WORDS) as Array<keyof LossReasonCounts>).filter((r) => Number.isFinite(by[r]) && by[r] > 0)
    : [];
  if (!by || reasons.length === 0)
    return 'lost disputes for fraud (a fake proof, a third-party payment, underpaying or not paying)';
  const total = reasons.reduce((a, r) => a + by[r], 0);
  if (reasons.length === 1) return `lost ${plural(total, 'dispute')} for ${LOSS_WORDS[reasons[0]!]}`;
  return `lost ${plural(total, 'dispute')} for fraud: ${reasons.map((r) => `${num(by[r])} for ${LOSS_WORDS[r]}`).join(', ')}`;
}

/** The sentence for one signal; `value` is the signal's (rounded) value as returned. */
export function describeSignal(name: SignalName, value: number, f: Facts): string {
  switch (name) {
    case 'completed_trades':
      return `${plural(f.tradesCompleted, 'completed trade')} in its history`;
    case 'dispute_rate':
      // Returned only when the (decayed) rate exceeds the prior's mean, which is what it says.
      return `${plural(f.disputesLost, 'lost dispute')} out of ${plural(f.tradesCompleted, 'trade')}, more than the ${percent(f.expectedDisputeRate)} expected`;
    case 'cancellation_rate':
      return `${plural(f.tradesCancelled, 'cancelled trade')} out of ${num(f.tradesCompleted + f.tradesCancelled)} started`;
    case 'chargebacks':
      return `${plural(f.chargebacks, 'chargeback')} in its history`;
    case 'fraud_reports':
      return `${plural(f.fraudReports, 'fraud report')} against it`;
    case 'blocklisted':
      return 'on the blocklist';
    case 'new_account':
      return `an account ${days(f.ageDays)} old`;
    case 'cold_start':
      return 'never seen before: no history at all';
    case 'velocity_trades':
      return `${plural(f.tradesLastDay, 'trade')} in the last day (${num(f.tradesLastHour)} in the last hour) against its usual ${num(f.tradesPerDay)} a day`;
    case 'velocity_volume':
      return f.dayVolumeRatio > 0
        ? `${times(f.dayVolumeRatio)} its usual daily ${currency(f.currency)}volume in the last day`
        : `more ${currency(f.currency)}volume in the last day than its history allows, with no daily norm to compare`;
    case 'amount_vs_history':
      return f.typicalAmount > 0
        ? `${times(amountRatio(f))} its usual ${currency(f.currency)}amount${beyondLimit(f)}`
        : `no earlier ${currency(f.currency)}trade to compare the amount with${beyondLimit(f)}`;
    case 'new_counterparty':
      return 'a first trade with this counterparty';
    case 'payment_method_risk':
      return `paid by ${method(f.paymentMethod)}, rated ${num(value * 100)}% reversible or disputable`;
    case 'cross_border':
      return 'the two parties are in different countries';
    case 'linked_flagged_entities':
      return `an identifier shared with ${plural(f.linkedFlagged, 'reported or blocklisted entity', 'reported or blocklisted entities')}`;
    case 'cash_out_burst':
      return f.typicalAmount > 0
        ? `${times(amountRatio(f))} its usual amount during a burst of ${plural(f.tradesLastDay, 'trade')} in a day (usually ${num(f.tradesPerDay)})`
        : `a burst of ${plural(f.tradesLastDay, 'trade')} in a day (usually ${num(f.tradesPerDay)}), with no earlier amount to compare`;
    case 'dormant_reactivation':
      return `trading again after ${days(f.dormantDays)} without a completed trade`;
    case 'young_account_reversible_method':
      return `paid by ${method(f.paymentMethod)} from an account ${days(f.ageDays)} old`;
    case 'shared_identifier_entities':
      return `identifiers shared with ${plural(f.sharedEntities, 'other entity', 'other entities')}`;
    case 'new_counterparty_large_trade':
      return f.typicalAmount > 0
        ? `a first trade with this counterparty at ${times(amountRatio(f))} its usual amount`
        : 'a first trade with this counterparty, and no earlier trade to compare its amount with';
    case 'network_flags':
      return f.network ?? 'an identifier it uses was flagged by other marketplaces';
    case 'fraudulent_dispute_losses':
      return describeFraudulentLosses(f);
    case 'ring_flagged_entities':
      return f.ring ? describeRingFlagged(f.ring) : 'no flagged account within two hops';
    case 'ring_size':
      return f.ring ? describeRingSize(f.ring) : 'no account within two hops';
    case 'reversible_new_counterparty':
      return `a first trade with this counterparty, paid by ${method(f.paymentMethod)} (reversible)`;
    case 'cross_border_new_counterparty':
      return 'a first trade with this counterparty, who is in another country';
  }
}
