// The party-history rules (docs/risk-flags.md): pure flag rules over a party's own record, each
// fact counting against that party, beside the evidence of the dispute itself (analyser.ts).
import type { EntityProfile, LossReasonCounts, RiskLevel, Signal } from '../model/types.ts';
import { fraudulentLossWeight, type DisputePolicy } from '../model/dispute-policy.ts';
import { add, finite, raise, toward, type Findings, type Side } from './flags.ts';

/** The part of a party assessment the history rules read. */
export interface PartyRisk {
  score: number;
  riskLevel: RiskLevel;
  profile: EntityProfile;
  /** the score's signals, largest contribution first: what high_risk_party names */
  signals?: readonly Signal[];
}

/** The two signals that raised the score most, as the score explains them ("; "-separated). */
function mainReasons(signals: readonly Signal[] | undefined): string {
  return (signals ?? [])
    .filter((s) => s.weight * s.value > 0)
    .sort((a, b) => b.weight * b.value - a.weight * a.value)
    .slice(0, 2)
    .map((s) => s.description)
    .join('; ');
}

const DAY = 86_400_000;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** How each fraud-naming loss reason reads in a flag message, in the order they are listed. */
const LOSS_REASON_WORDS: Record<keyof LossReasonCounts, string> = {
  fake_proof: 'fake payment proof',
  third_party_payment: 'a third-party payment',
  no_payment: 'not paying',
  underpayment: 'underpaying',
};

/** "2 earlier disputes for fake payment proof and 1 for underpaying": most frequent reason first. */
function lossReasonPhrase(counts: LossReasonCounts): string {
  const order = Object.keys(LOSS_REASON_WORDS) as Array<keyof LossReasonCounts>;
  const parts = order
    .filter((r) => counts[r] > 0)
    .sort((a, b) => counts[b] - counts[a] || order.indexOf(a) - order.indexOf(b))
    .map((r, i) => `${i === 0 ? plural(counts[r], 'earlier dispute') : counts[r]} for ${LOSS_REASON_WORDS[r]}`);
  return parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/** Facts from a party's own record; each counts against that party. */
export function weighHistory(
  side: Side,
  party: PartyRisk,
  trade: { amount: number; currency: string },
  policy: DisputePolicy,
  now: number,
  acc: Findings,
): void {
  const p = party.profile;
  const w = policy.weights;
  const s = toward(side);
  const capped = (n: number) => Math.min(n, policy.countCap);
  const The = `The ${side}`;

  if (p.disputesLost > 0) {
    add(acc, 'prior_lost_disputes', side, 'history', s * w.priorLostDispute * capped(p.disputesLost));
    raise(
      acc,
      'prior_lost_disputes',
      p.disputesLost >= policy.countCap ? 'high' : 'medium',
      side,
      side,
      `${The} has lost ${plural(p.disputesLost, 'earlier dispute')}.`,
    );
  }
  const lostFor = p.disputesLostFor;
  const fraudulentLosses = lostFor ? Object.values(lostFor).reduce((a, b) => a + b, 0) : 0;
  if (lostFor && fraudulentLosses > 0) {
    // On top of prior_lost_disputes: a loss for fraud says more than a loss for slowness or a mistake.
    add(acc, 'prior_fraudulent_losses', side, 'history', s * fraudulentLossWeight(policy) * capped(fraudulentLosses));
    raise(acc, 'prior_fraudulent_losses', 'high', side, side, `${The} has lost ${lossReasonPhrase(lostFor)}.`);
  }
  if (p.fraudReports > 0) {
    add(acc, 'prior_fraud_reports', side, 'history', s * w.priorFraudReport * capped(p.fraudReports));
    raise(
      acc,
      'prior_fraud_reports',
      'high',
      side,
      side,
      `${The} has ${plural(p.fraudReports, 'fraud report')} on record.`,
    );
  }
  if (p.chargebacks > 0) {
    add(acc, 'prior_chargebacks', side, 'history', s * w.priorChargeback * capped(p.chargebacks));
    // a buyer's reversals predict this payment being reversed; a seller's matter less here
    raise(
      acc,
      'prior_chargebacks',
      side === 'buyer' ? 'high' : 'medium',
      side,
      side,
      `${The} has ${plural(p.chargebacks, 'chargeback or payment reversal')} on record.`,
    );
  }
  if (p.blocklisted) {
    add(acc, 'blocklisted_party', side, 'history', s * w.blocklisted);
    raise(acc, 'blocklisted_party', 'critical', side, side, `${The} is blocklisted.`);
  }
  if (p.linkedFlaggedEntities > 0) {
    add(acc, 'linked_to_flagged_entity', side, 'history', s * w.linkedFlaggedEntity * capped(p.linkedFlaggedEntities));
    raise(
      acc,
      'linked_to_flagged_entity',
      'high',
      side,
      side,
      `${The} shares identifiers with ${p.linkedFlaggedEntities} fraud-reported or blocklisted ` +
        `${p.linkedFlaggedEntities === 1 ? 'entity' : 'entities'}.`,
    );
  }

  const ageMs = p.firstSeenAt === null ? null : now - p.firstSeenAt;
  if (ageMs === null || ageMs < policy.newAccountDays * DAY) {
    add(acc, 'new_account', side, 'history', s * w.newAccount);
    const seen =
      ageMs === null
        ? `${The} has no recorded history.`
        : `${The} was first seen ${Math.max(0, Math.floor(ageMs / DAY))} days ago (under ${policy.newAccountDays}).`;
    raise(acc, 'new_account', 'low', side, side, seen);
  }

  const { n, logMean, logM2 } = p.amountStats;
  const amount = trade.amount;
  if (n >= policy.amountHistoryMinTrades && finite(amount) && amount > 0) {
    const sd = Math.max(Math.sqrt(Math.max(logM2, 0) / (n - 1)), policy.amountMinLogSd);
    const z = (Math.log(amount) - logMean) / sd;
    if (z >= policy.amountSpikeZ) {
      add(acc, 'amount_above_history', side, 'history', s * w.amountAboveHistory);
      const typical = Math.round(Math.exp(logMean) * 100) / 100;
      raise(
        acc,
        'amount_above_history',
        'medium',
        side,
        side,
        `This trade is ${z.toFixed(1)} standard deviations above the ${side}'s usual amount ` +
          `(typically about ${typical} ${trade.currency} over ${n} trades).`,
      );
    }
  }

  const critical = party.riskLevel === 'critical' || party.score >= policy.criticalRiskScore;
  if (critical || party.riskLevel === 'high' || party.score >= policy.highRiskScore) {
    add(acc, 'high_risk_party', side, 'history', s * w.highRiskParty);
    const reasons = mainReasons(party.signals);
    // A party without history is risky from this trade alone; "its record" would contradict new_account.
    const from =
      p.firstSeenAt === null ? 'from this trade alone (no recorded history)' : 'from its record and this trade';
    raise(
      acc,
      'high_risk_party',
      critical ? 'critical' : 'high',
      side,
      side,
      `${The}'s risk score for this trade is ${Math.round(party.score)} (${party.riskLevel}), ${from}${reasons ? `, mostly: ${reasons}` : ''}.`,
    );
  }
}
