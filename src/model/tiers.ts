// New-account tiers (docs/signals.md, "New accounts"; trust-gated limits as Bisq's account-age
// limits): the policy's reference amount per currency times the multiple of the entity's tier. A
// clean entity's amounts within the limit carry no amount risk (amount-signals.ts), which is what
// gives it a safe_amount of at least the limit.
import type { Policy } from './policy.ts';
import { newAccountsOf } from './new-accounts.ts';

export interface Tier {
  /** index in the policy's tiers (0: a brand-new account) */
  index: number;
  /** the tier's limit in the request's currency; 0 when the currency has no reference amount */
  limit: number;
}

/**
 * The last tier whose minimums the entity meets. The policy's tiers grow together (validated), so
 * the tiers met are a prefix and an older account, or one with more completed trades, never gets a
 * lower limit. Non-finite or negative inputs count as 0.
 */
export function tierFor(
  policy: Pick<Policy, 'newAccounts'>,
  currency: string,
  ageDays: number,
  completedTrades: number,
): Tier {
  const { referenceAmounts, tiers } = newAccountsOf(policy);
  const age = Number.isFinite(ageDays) && ageDays > 0 ? ageDays : 0;
  const trades = Number.isFinite(completedTrades) && completedTrades > 0 ? completedTrades : 0;
  let index = 0;
  for (let i = 1; i < tiers.length; i++) {
    if (age >= tiers[i]!.minAgeDays && trades >= tiers[i]!.minCompletedTrades) index = i;
  }
  const reference = Object.hasOwn(referenceAmounts, currency) ? referenceAmounts[currency]! : 0;
  const multiple = tiers[index]?.limitMultiple ?? 0;
  return { index, limit: reference * multiple };
}
