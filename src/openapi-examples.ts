// Request-body examples for the OpenAPI document, keyed by operationId: what Swagger UI's
// "Try it out" opens with. Identifiers are hashed (64 hex characters), never raw phone numbers or
// e-mail addresses, which the API refuses.
import { DEFAULT_POLICY } from './model/policy.ts';

const h = (seed: string) => seed.repeat(64 / seed.length).slice(0, 64);
const BUYER = h('3f9a1c7e5b2d');
const SELLER = h('a81e4c09d7b6');
const PHONE_HASH = h('c4d29e1f');

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  issueToken: {
    grant_type: 'client_credentials',
    client_id: 'marketplace-backend',
    client_secret: 'change-me-to-the-client-secret',
    scope: 'trust:read trust:write',
  },
  createKey: {
    name: 'checkout-service',
    scopes: ['trust:read', 'dispute:analyze'],
    role: 'service',
    environment: 'live',
    expires_at: '2027-06-30T00:00:00Z',
  },
  rotateKey: { grace_period_seconds: 86400 },
  recordTrustEvents: {
    events: [
      {
        event_id: 'evt_20261123_000184',
        type: 'trade.completed',
        entity_id: SELLER,
        occurred_at: '2026-11-23T14:02:11Z',
        amount: 250,
        currency: 'USDT',
        counterparty_id: BUYER,
        trade_id: 'trd_8f41c2a9',
      },
      {
        event_id: 'evt_20261123_000185',
        type: 'identifier.linked',
        entity_id: BUYER,
        occurred_at: '2026-11-23T14:05:40Z',
        linked_identifiers: [{ type: 'phone', hash: PHONE_HASH }],
      },
    ],
  },
  scoreTrust: {
    entity_id: BUYER,
    amount: 1200,
    currency: 'USD',
    context: {
      counterparty_id: SELLER,
      side: 'buy',
      payment_method: 'bank_transfer',
      country: 'NG',
      counterparty_country: 'NG',
      account_created_at: '2026-03-02T09:00:00Z',
      trade_id: 'trd_8f41c2a9',
    },
  },
  createRule: {
    name: 'hold a first big card trade',
    condition:
      'entity.completed_trades == 0.0 && context.payment_method == "card" && amount_ref != null && amount_ref > 2.0',
    action: 'hold',
    status: 'shadow',
    description: 'new buyers paying by card above twice the reference amount',
  },
  updateRule: { status: 'active', reason: 'a week in shadow: 3 matches, all fraud' },
  checkRule: { condition: 'in_list("mules", entity_id) || entity.chargebacks > 0.0' },
  createList: { name: 'mules', kind: 'entity', description: 'accounts seen moving stolen funds' },
  addListEntries: { values: [SELLER], reason: 'confirmed mule (case 4471)', expires_at: '2027-06-30T00:00:00Z' },
  testRule: {
    rule: {
      name: 'decline listed mules',
      condition: 'has(context.counterparty_id) && in_list("mules", context.counterparty_id)',
      action: 'decline',
      final: true,
    },
    since: '2026-10-28T00:00:00Z',
  },
  testStoredRule: { since: '2026-10-28T00:00:00Z', until: '2026-11-27T00:00:00Z' },
  claimNextReview: { outcome: 'hold' },
  derivePolicy: { version: 'default-v2-sampled', changes: { reviewSampleRate: 0.02 } },
  resolveReview: {
    resolution: 'decline',
    note: 'payer name differs from the account holder; bank confirmed a recall',
    add_to_list: 'mules',
  },
  scoreTrustBatch: {
    requests: [
      { entity_id: BUYER, amount: 1200, currency: 'USD' },
      { entity_id: SELLER, amount: 85000, currency: 'NGN', context: { side: 'sell', payment_method: 'mobile_money' } },
    ],
  },
  analyzeDispute: {
    dispute_id: 'dsp_20261123_0042',
    trade: {
      trade_id: 'trd_8f41c2a9',
      amount: 1200,
      currency: 'USD',
      payment_method: 'bank_transfer',
      created_at: '2026-11-23T13:40:00Z',
      paid_at: '2026-11-23T13:52:00Z',
    },
    buyer_id: BUYER,
    seller_id: SELLER,
    opened_by: 'buyer',
    opened_at: '2026-11-23T15:10:00Z',
    reason: 'asset_not_released',
    evidence: {
      payment_proof_submitted: true,
      bank_reference_matches: true,
      payer_name_matches: true,
      seller_confirmed_receipt: false,
      buyer_response_minutes: 4,
      seller_response_minutes: 95,
      messages_count: 7,
    },
  },
  labelDecision: { label: 'fraud', note: 'Chargeback confirmed by the bank' },
  labelDecisions: {
    labels: [
      { decision_id: 'dec_01J9Z6V4W1K8Q2R3S4T5U6V7W8', label: 'fraud', note: 'Chargeback confirmed by the bank' },
      { decision_id: 'dec_01J9Z6V4W1K8Q2R3S4T5U6V7W9', label: 'legit' },
    ],
  },
  // a desk's own version of the built-in numbers: a built-in version would collide with the stored one (409)
  createPolicy: { ...DEFAULT_POLICY, version: `${DEFAULT_POLICY.version}-desk` },
  fitPolicy: {
    since: '2026-08-01T00:00:00Z',
    until: '2026-11-01T00:00:00Z',
    assume_legit_after_days: 30,
    holdout_fraction: 0.2,
    objective: 'cost',
    economics: {
      currency: 'USD',
      lossRate: 1,
      declineCost: { rate: 0.01, fixed: 20 },
      reviewCost: 3,
      reviewerAccuracy: 0.95,
      reviewsPerDay: 400,
    },
  },
  backtestPolicy: { since: '2026-10-01T00:00:00Z', until: '2026-11-01T00:00:00Z' },
  activatePolicy: {},
  shadowPolicy: {},
  inviteUser: { email: 'ana@desk.example', name: 'Ana Lima', role: 'analyst' },
  changeUser: { role: 'operator' },
  acceptInvitation: {
    token: 'kP3x9Qe0vT1-6yJd2Wm8sLr4Zc7Ab5Nh0Fg2Ui4Oq6E',
    password: 'a long and unguessable passphrase',
  },
  login: { email: 'ana@desk.example', password: 'a long and unguessable passphrase' },
  confirmTotp: { code: '492039' },
  disableTotp: { code: '492039' },
  createWebhook: {
    url: 'https://example.com/hooks/vouch',
    events: ['decision.high_risk', 'dispute.analyzed'],
    description: 'Risk team alerts',
  },
  putSettings: { four_eyes: ['rules', 'policies', 'lists'] },
  approveChange: { note: 'Checked the backtest: fine to go live.' },
  rejectChange: { note: 'Too broad: it would hold every new account.' },
};
