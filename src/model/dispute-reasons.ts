// Why a trade was disputed: the reasons a dispute and a trust event may carry.
export const DISPUTE_REASONS = [
  'payment_not_received',
  'asset_not_released',
  'wrong_amount',
  'third_party_payment',
  'payment_reversed',
  'unresponsive_counterparty',
  'other',
] as const;
