// Every signal the model can emit and the sign its weight must have (docs/signals.md): the model's
// vocabulary, below the policy document (policy.ts) and the pairs a fit may learn (pairs.ts).
/**
 * Every signal the model can emit, with the sign its weight must have. The sign constraint is
 * what makes the monotonicity guarantees (docs/signals.md) hold for any valid policy: each signal
 * value moves in one direction as its history input grows, so a weight of the wrong sign would
 * let, say, an extra chargeback lower the score.
 */
export const SIGNAL_DIRECTIONS = {
  completed_trades: 'protective',
  dispute_rate: 'risk',
  cancellation_rate: 'risk',
  chargebacks: 'risk',
  fraud_reports: 'risk',
  blocklisted: 'risk',
  new_account: 'risk',
  cold_start: 'risk',
  velocity_trades: 'risk',
  velocity_volume: 'risk',
  amount_vs_history: 'risk',
  new_counterparty: 'risk',
  payment_method_risk: 'risk',
  cross_border: 'risk',
  linked_flagged_entities: 'risk',
  // P2P patterns (issue 10; src/model/features.ts)
  cash_out_burst: 'risk',
  dormant_reactivation: 'risk',
  young_account_reversible_method: 'risk',
  shared_identifier_entities: 'risk',
  new_counterparty_large_trade: 'risk',
  // the network (issue 22; docs/network.md): other marketplaces' flags on its identifiers
  network_flags: 'risk',
  // Rings (issue 21; src/model/ring-signals.ts): flagged entities and entities within two hops
  ring_flagged_entities: 'risk',
  ring_size: 'risk',
  // Interactions (issue 20; src/model/features.ts INTERACTIONS): products of the signals above
  reversible_new_counterparty: 'risk',
  cross_border_new_counterparty: 'risk',
  // Dispute reasons (issue 20 item 7): disputes lost for a third-party payment, a fake proof, an
  // underpayment or no payment (src/model/features.ts)
  fraudulent_dispute_losses: 'risk',
} as const satisfies Record<string, 'risk' | 'protective'>;

export type SignalName = keyof typeof SIGNAL_DIRECTIONS;
export const SIGNAL_NAMES = Object.keys(SIGNAL_DIRECTIONS) as SignalName[];
