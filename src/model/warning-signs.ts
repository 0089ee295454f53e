// The warning signs of a record (docs/signals.md, "New accounts"): a clean record's amount is judged
// against its tier's limit, any other's against its own history alone (amount-signals.ts).
import { SIGNAL_NAMES, type SignalName } from './policy.ts';
import { modelValue } from './arithmetic.ts';
import { AMOUNT_SIGNALS, type AmountSignal } from './amount-signals.ts';
import { PEER_CAP } from './network-signal.ts';

/**
 * What a clean record may show (docs/signals.md, "New accounts"): being new, its trades (a
 * protective count), the request's context and the products of those. Every other signal that
 * does not depend on the amount is a warning sign: one of them non-zero (as summed), or a burst in
 * the day's trades, and the tier limit no longer excuses an amount: it is judged against the
 * entity's own history alone, as before the tiers. Listed as the exceptions, so that a signal added
 * later is a warning sign unless it is put here.
 */
const NOT_WARNING_SIGNS: ReadonlySet<SignalName> = new Set<SignalName>([
  'completed_trades',
  'new_account',
  'cold_start',
  'new_counterparty',
  'payment_method_risk',
  'cross_border',
  'young_account_reversible_method',
  'reversible_new_counterparty',
  'cross_border_new_counterparty',
]);
/**
 * network_flags is a warning sign only once independent peers agree (above one peer's cap): a lone
 * peer, honest or not, moves a score through its own term alone (docs/network.md, "The signal").
 */
const isWarning = (name: Exclude<SignalName, AmountSignal>, value: number): boolean =>
  name === 'network_flags' ? value > PEER_CAP : modelValue(value) !== 0;
const WARNING_SIGNS = SIGNAL_NAMES.filter(
  (name): name is Exclude<SignalName, AmountSignal> =>
    !NOT_WARNING_SIGNS.has(name) && !(AMOUNT_SIGNALS as readonly SignalName[]).includes(name),
);

/** Whether a signal that does not depend on the amount is a warning sign at these values. */
export const showsWarningSign = (fixed: Readonly<Record<Exclude<SignalName, AmountSignal>, number>>): boolean =>
  WARNING_SIGNS.some((name) => isWarning(name, fixed[name]));
