import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from 'typebox/value';
import {
  analyseDispute,
  explainDispute,
  DISPUTE_REASONS,
  type DisputeAnalysis,
  type DisputeEvidence,
  type DisputeInput,
  type PartyAssessment,
} from '../../src/disputes/analyser.ts';
import { compareFlags, FLAG_CODES } from '../../src/disputes/flags.ts';
import { DEFAULT_DISPUTE_POLICY, DisputePolicySchema, type DisputePolicy } from '../../src/model/dispute-policy.ts';
import type { EntityProfile, RiskLevel } from '../../src/model/types.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const DAY = 86_400_000;
const P = DEFAULT_DISPUTE_POLICY;

function cleanProfile(over: Partial<EntityProfile> = {}): EntityProfile {
  return {
    entityId: 'ent_clean',
    known: true,
    firstSeenAt: NOW - 400 * DAY,
    lastEventAt: NOW - DAY,
    tradesCompleted: 40,
    tradesCancelled: 1,
    disputesOpened: 0,
    disputesWon: 0,
    disputesLost: 0,
    chargebacks: 0,
    fraudReports: 0,
    blocklisted: false,
    decayed: { at: NOW, tradesCompleted: 40, tradesCancelled: 1, disputesLost: 0, chargebacks: 0, fraudReports: 0 },
    velocity: { tradesLastHour: 0, tradesLastDay: 1, volumeLastDay: 100 },
    amountStats: { n: 0, logMean: 0, logM2: 0, volume: 0 },
    counterpartyTrades: null,
    linkedFlaggedEntities: 0,
    ...over,
  };
}

const levelOf = (score: number): RiskLevel =>
  score < 30 ? 'low' : score < 60 ? 'medium' : score < 85 ? 'high' : 'critical';
function party(over: Partial<EntityProfile> = {}, score = 10): PartyAssessment {
  const profile = cleanProfile(over);
  return { entityId: profile.entityId, score, riskLevel: levelOf(score), signals: [], profile };
}
const cleanParties = () => ({ buyer: party({ entityId: 'buyer_h' }), seller: party({ entityId: 'seller_h' }) });

function dispute(evidence: DisputeEvidence | undefined, over: Partial<DisputeInput> = {}): DisputeInput {
  return {
    dispute_id: 'dsp_1',
    trade: { trade_id: 'trd_1', amount: 500, currency: 'USD' },
    buyer_id: 'buyer_h',
    seller_id: 'seller_h',
    opened_by: 'buyer',
    reason: 'asset_not_released',
    ...(evidence === undefined ? {} : { evidence }),
    ...over,
  };
}
const run = (input: DisputeInput, parties = cleanParties(), policy: DisputePolicy = P) =>
  analyseDispute(input, parties, policy, NOW);
const codes = (a: DisputeAnalysis) => a.risk_flags.map((f) => f.code);
const flag = (a: DisputeAnalysis, code: string) => a.risk_flags.find((f) => f.code === code);
const GOOD: DisputeEvidence = { payment_proof_submitted: true, bank_reference_matches: true, payer_name_matches: true };

describe('dispute scenarios', () => {
  test('clean case: proof, reference, payer name and seller confirmation → release with high confidence', () => {
    const a = run(dispute({ ...GOOD, seller_confirmed_receipt: true }));
    assert.equal(a.recommendation, 'release_to_buyer');
    assert.ok(a.confidence >= 0.9, `confidence ${a.confidence}`);
    assert.ok(!a.risk_flags.some((f) => f.severity === 'critical' || f.severity === 'high'));
  });

  test('payment reversed never releases, by evidence or by reason', () => {
    for (const input of [
      dispute({ ...GOOD, seller_confirmed_receipt: true, payment_reversed: true }),
      dispute({ ...GOOD, seller_confirmed_receipt: true }, { reason: 'payment_reversed', opened_by: 'seller' }),
      dispute({ payment_reversed: true }),
    ]) {
      const a = run(input);
      assert.notEqual(a.recommendation, 'release_to_buyer');
      assert.equal(flag(a, 'payment_reversed')?.severity, 'critical');
    }
  });

  test('third-party payer: no release and a critical payer_name_mismatch flag explaining triangulation', () => {
    for (const input of [
      dispute({ ...GOOD, payer_name_matches: false, seller_confirmed_receipt: true }),
      dispute({ payment_proof_submitted: true }, { reason: 'third_party_payment', opened_by: 'seller' }),
    ]) {
      const a = run(input);
      assert.notEqual(a.recommendation, 'release_to_buyer');
      const f = flag(a, 'payer_name_mismatch');
      assert.equal(f?.severity, 'critical');
      assert.equal(f?.party, 'buyer');
      assert.match(f?.message ?? '', /third-party/);
      assert.match(f?.message ?? '', /triangulation/);
      assert.equal(a.risk_flags[0]?.severity, 'critical');
    }
  });

  test('fake-proof pattern → return_to_seller or manual_review', () => {
    const a = run(
      dispute(
        { payment_proof_submitted: true, bank_reference_matches: false, seller_confirmed_receipt: false },
        { reason: 'payment_not_received', opened_by: 'seller' },
      ),
    );
    assert.ok(['return_to_seller', 'manual_review'].includes(a.recommendation), a.recommendation);
    assert.equal(flag(a, 'bank_reference_mismatch')?.severity, 'high');
  });

  test('unresponsive seller with good buyer evidence → release', () => {
    const a = run(dispute({ ...GOOD, seller_response_minutes: 300 }, { reason: 'asset_not_released' }));
    assert.equal(a.recommendation, 'release_to_buyer');
    const f = flag(a, 'unresponsive_party');
    assert.equal(f?.party, 'seller');
    assert.match(f?.message ?? '', /300 minutes/);
  });

  test('conflicting evidence (proof and reference vs seller denial and a buyer who lost disputes) → manual_review', () => {
    for (const lost of [1, 2, 3]) {
      const parties = { ...cleanParties(), buyer: party({ disputesLost: lost }) };
      const input = dispute({
        payment_proof_submitted: true,
        bank_reference_matches: true,
        seller_confirmed_receipt: false,
      });
      const a = run(input, parties);
      assert.equal(a.recommendation, 'manual_review', `lost=${lost}`);
      assert.ok(codes(a).includes('prior_lost_disputes'));
    }
  });

  test('no evidence at all → manual_review, and absent evidence is not negative evidence', () => {
    for (const input of [dispute(undefined), dispute({})]) {
      const x = explainDispute(input, cleanParties(), P, NOW);
      assert.equal(x.analysis.recommendation, 'manual_review');
      assert.equal(x.logOdds, 0);
      assert.equal(flag(x.analysis, 'no_payment_proof')?.severity, 'low');
    }
    const explicit = explainDispute(dispute({ payment_proof_submitted: false }), cleanParties(), P, NOW);
    assert.ok(explicit.logOdds < 0);
    assert.equal(flag(explicit.analysis, 'no_payment_proof')?.severity, 'medium');
  });
});

describe('flag rules', () => {
  test('amount_mismatch: short payment blocks release, overpayment is flagged', () => {
    const short = run(dispute({ ...GOOD, amount_paid: 450 }));
    assert.equal(flag(short, 'amount_mismatch')?.severity, 'high');
    assert.match(flag(short, 'amount_mismatch')?.message ?? '', /10% short/);
    const over = run(dispute({ ...GOOD, amount_paid: 600 }));
    assert.equal(flag(over, 'amount_mismatch')?.severity, 'medium');
    assert.equal(flag(run(dispute({ ...GOOD, amount_paid: 500 })), 'amount_mismatch'), undefined);
  });

  test("amount_above_history uses the party's Welford log-amount statistics", () => {
    const logs = [4, 4.2, 3.8, 4.1, 3.9, 4, 4.05, 3.95].map((x) => x);
    const mean = logs.reduce((s, x) => s + x, 0) / logs.length;
    const m2 = logs.reduce((s, x) => s + (x - mean) ** 2, 0);
    const stats = { n: logs.length, logMean: mean, logM2: m2, volume: 0 };
    const parties = { ...cleanParties(), buyer: party({ amountStats: stats }) };
    const big = run(dispute(GOOD, { trade: { trade_id: 't', amount: 5000, currency: 'USD' } }), parties);
    assert.equal(flag(big, 'amount_above_history')?.party, 'buyer');
    const usual = run(dispute(GOOD, { trade: { trade_id: 't', amount: 60, currency: 'USD' } }), parties);
    assert.equal(flag(usual, 'amount_above_history'), undefined);
  });

  test('new_account, fast_dispute, high_risk_party, linked_to_flagged_entity', () => {
    const parties = {
      buyer: party({ firstSeenAt: null, known: false, linkedFlaggedEntities: 2 }, 70),
      seller: party({ firstSeenAt: NOW - 3 * DAY }, 90),
    };
    const input = dispute(GOOD, {
      trade: { trade_id: 't', amount: 500, currency: 'USD', paid_at: new Date(NOW - 10 * 60_000).toISOString() },
      opened_by: 'seller',
      reason: 'payment_not_received',
    });
    const a = run(input, parties);
    const by = (code: string, p: string) => a.risk_flags.find((f) => f.code === code && f.party === p);
    assert.match(by('new_account', 'buyer')?.message ?? '', /no recorded history/);
    assert.match(by('new_account', 'seller')?.message ?? '', /3 days ago/);
    assert.match(by('fast_dispute', 'seller')?.message ?? '', /10 minutes/);
    assert.equal(by('high_risk_party', 'buyer')?.severity, 'high');
    assert.equal(by('high_risk_party', 'seller')?.severity, 'critical');
    assert.match(by('linked_to_flagged_entity', 'buyer')?.message ?? '', /2 fraud-reported or blocklisted entities/);
  });

  test('a critical flag against the favoured side forces manual_review', () => {
    const parties = { ...cleanParties(), buyer: party({ blocklisted: true }) };
    const a = run(dispute({ ...GOOD, seller_confirmed_receipt: true }), parties);
    assert.equal(a.recommendation, 'manual_review');
    assert.equal(flag(a, 'blocklisted_party')?.severity, 'critical');
  });

  test('reputation alone never moves escrow', () => {
    const badSeller = { ...cleanParties(), seller: party({ blocklisted: true, fraudReports: 3 }, 95) };
    assert.equal(run(dispute({}), badSeller).recommendation, 'manual_review');
    const badBuyer = { ...cleanParties(), buyer: party({ blocklisted: true, fraudReports: 3 }, 95) };
    assert.equal(run(dispute({}), badBuyer).recommendation, 'manual_review');
  });

  test('flags are ordered critical first, then by code; messages carry no ids', () => {
    const parties = {
      buyer: party({ disputesLost: 4, fraudReports: 1, chargebacks: 2, blocklisted: true, firstSeenAt: null }, 90),
      seller: party({ disputesLost: 1 }),
    };
    const a = run(
      dispute({ payer_name_matches: false, bank_reference_matches: false, payment_reversed: true }),
      parties,
    );
    assert.deepEqual([...a.risk_flags].sort(compareFlags), a.risk_flags);
    assert.equal(a.risk_flags[0]?.severity, 'critical');
    for (const f of a.risk_flags) {
      assert.ok(FLAG_CODES.includes(f.code));
      for (const id of ['buyer_h', 'seller_h', 'dsp_1', 'trd_1']) assert.ok(!f.message.includes(id), f.message);
    }
  });

  test('the default policy satisfies its schema, which is closed', () => {
    assert.ok(Value.Check(DisputePolicySchema, DEFAULT_DISPUTE_POLICY));
    assert.ok(!Value.Check(DisputePolicySchema, { ...DEFAULT_DISPUTE_POLICY, extra: 1 }));
    assert.ok(!Value.Check(DisputePolicySchema, { ...P, weights: { ...P.weights, paymentProof: -1 } }));
  });
});

// ---- properties -------------------------------------------------------------------------

// Biased towards a paying buyer and clean parties so that releases are common enough for the
// monotonicity property to be exercised, while every combination stays reachable.
const mostly = (value: boolean, weight: number) =>
  fc.oneof({ arbitrary: fc.constant(value), weight }, { arbitrary: fc.constant(!value), weight: 1 });
const evidenceArb: fc.Arbitrary<DisputeEvidence> = fc.record(
  {
    payment_proof_submitted: mostly(true, 3),
    bank_reference_matches: mostly(true, 3),
    payer_name_matches: mostly(true, 4),
    seller_confirmed_receipt: mostly(true, 2),
    payment_reversed: mostly(false, 4),
    amount_paid: fc.oneof(fc.constant(500), fc.double({ min: 0, max: 2000, noNaN: true })),
    buyer_response_minutes: fc.integer({ min: 0, max: 600 }),
    seller_response_minutes: fc.integer({ min: 0, max: 600 }),
    messages_count: fc.integer({ min: 0, max: 50 }),
  },
  { requiredKeys: [] },
);

const riskyPartyArb: fc.Arbitrary<PartyAssessment> = fc
  .record({
    disputesLost: fc.integer({ min: 0, max: 5 }),
    fraudReports: fc.integer({ min: 0, max: 4 }),
    chargebacks: fc.integer({ min: 0, max: 4 }),
    blocklisted: mostly(false, 3),
    linkedFlaggedEntities: fc.integer({ min: 0, max: 3 }),
    firstSeenAt: fc.option(
      fc.integer({ min: 0, max: 800 }).map((d) => NOW - d * DAY),
      { nil: null },
    ),
    amountStats: fc.record({
      n: fc.integer({ min: 0, max: 40 }),
      logMean: fc.double({ min: 0, max: 9, noNaN: true }),
      logM2: fc.double({ min: 0, max: 40, noNaN: true }),
      volume: fc.constant(0),
    }),
    score: fc.integer({ min: 0, max: 100 }),
  })
  .map(({ score, ...over }) => party(over, score));
const partyArb = fc.oneof({ arbitrary: riskyPartyArb, weight: 1 }, { arbitrary: fc.constant(party()), weight: 1 });

const inputArb: fc.Arbitrary<DisputeInput> = fc
  .record({
    evidence: fc.option(evidenceArb, { nil: undefined }),
    reason: fc.constantFrom(...DISPUTE_REASONS),
    opened_by: fc.constantFrom('buyer' as const, 'seller' as const),
    amount: fc.double({ min: 1, max: 1000, noNaN: true }),
    paidMinutesAgo: fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
  })
  .map(({ evidence, reason, opened_by, amount, paidMinutesAgo }) =>
    dispute(evidence, {
      reason,
      opened_by,
      trade: {
        trade_id: 't',
        amount,
        currency: 'USD',
        ...(paidMinutesAgo === undefined ? {} : { paid_at: new Date(NOW - paidMinutesAgo * 60_000).toISOString() }),
      },
    }),
  );
const partiesArb = fc.record({ buyer: partyArb, seller: partyArb });

const policyArb: fc.Arbitrary<DisputePolicy> = fc
  .record({
    confidenceFloor: fc.double({ min: 0, max: 1, noNaN: true }),
    conflictPenalty: fc.double({ min: 0, max: 1, noNaN: true }),
    highFlagConfidenceCap: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map((over) => ({ ...P, ...over }));

type Worsen = (i: DisputeInput, p: { buyer: PartyAssessment; seller: PartyAssessment }) => void;
const worsenings: Record<string, Worsen> = {
  payer_name_false: (i) => {
    i.evidence = { ...i.evidence, payer_name_matches: false };
  },
  reference_false: (i) => {
    i.evidence = { ...i.evidence, bank_reference_matches: false };
  },
  reversed_true: (i) => {
    i.evidence = { ...i.evidence, payment_reversed: true };
  },
  seller_denies: (i) => {
    if (i.evidence?.seller_confirmed_receipt === undefined)
      i.evidence = { ...i.evidence, seller_confirmed_receipt: false };
  },
  buyer_fraud_report: (_i, p) => {
    p.buyer.profile.fraudReports += 1;
  },
  buyer_lost_dispute: (_i, p) => {
    p.buyer.profile.disputesLost += 1;
  },
  buyer_chargeback: (_i, p) => {
    p.buyer.profile.chargebacks += 1;
  },
};
const releaseConfidence = (a: DisputeAnalysis) => (a.recommendation === 'release_to_buyer' ? a.confidence : 0);

describe('dispute properties', () => {
  test('negative evidence against the buyer never makes release more likely or more confident', () => {
    fc.assert(
      fc.property(
        inputArb,
        partiesArb,
        policyArb,
        fc.constantFrom(...Object.keys(worsenings)),
        (input, parties, policy, w) => {
          const before = explainDispute(input, parties, policy, NOW);
          const [i2, p2] = structuredClone([input, parties] as const) as [DisputeInput, typeof parties];
          worsenings[w]!(i2, p2);
          const after = explainDispute(i2, p2, policy, NOW);
          assert.ok(after.buyerProbability <= before.buyerProbability + 1e-12, `${w}: p rose`);
          assert.ok(
            releaseConfidence(after.analysis) <= releaseConfidence(before.analysis),
            `${w}: release confidence rose`,
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('deterministic: the same input gives a deep-equal output', () => {
    fc.assert(
      fc.property(inputArb, partiesArb, (input, parties) => {
        assert.deepEqual(run(input, parties), run(structuredClone(input), structuredClone(parties)));
      }),
    );
  });

  test('confidence is in [0,1] with 3 decimals; below the floor is always manual_review', () => {
    fc.assert(
      fc.property(inputArb, partiesArb, policyArb, (input, parties, policy) => {
        const x = explainDispute(input, parties, policy, NOW);
        const a = x.analysis;
        assert.equal(x.reviewReasons.length > 0, a.recommendation === 'manual_review');
        assert.ok(a.confidence >= 0 && a.confidence <= 1);
        assert.equal(Math.round(a.confidence * 1000) / 1000, a.confidence);
        if (a.confidence < policy.confidenceFloor) assert.equal(a.recommendation, 'manual_review');
        assert.deepEqual([...a.risk_flags].sort(compareFlags), a.risk_flags);
      }),
      { numRuns: 500 },
    );
  });

  test('hard rules hold for arbitrary inputs: reversal or third-party payment never releases', () => {
    fc.assert(
      fc.property(inputArb, partiesArb, fc.constantFrom('reversed', 'third_party'), (input, parties, kind) => {
        const e = {
          ...input.evidence,
          ...(kind === 'reversed' ? { payment_reversed: true } : { payer_name_matches: false }),
        };
        const a = run({ ...input, evidence: e }, parties);
        assert.notEqual(a.recommendation, 'release_to_buyer');
        assert.ok(a.risk_flags.some((f) => f.severity === 'critical'));
      }),
      { numRuns: 500 },
    );
  });
});
