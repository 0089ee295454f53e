// prior_fraudulent_losses (docs/risk-flags.md): a party that lost earlier disputes for a fraud
// (fake proof, third-party payment, underpayment, no payment) is flagged for it, and the
// recommendation leans against it; through HTTP the counts come from dispute.resolved reasons.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { explainDispute, type DisputeInput, type PartyAssessment } from '../../src/disputes/analyser.ts';
import { DEFAULT_DISPUTE_POLICY, type DisputePolicy } from '../../src/model/dispute-policy.ts';
import type { EntityProfile, LossReasonCounts } from '../../src/model/types.ts';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { event, hash, postEvents, tradeHistory } from '../helpers/trust.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const DAY = 86_400_000;
const NONE: LossReasonCounts = { third_party_payment: 0, fake_proof: 0, underpayment: 0, no_payment: 0 };

function party(id: string, over: Partial<EntityProfile> = {}): PartyAssessment {
  const profile: EntityProfile = {
    entityId: id,
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
  return { entityId: id, score: 10, riskLevel: 'low', signals: [], profile };
}
const input: DisputeInput = {
  dispute_id: 'dsp_1',
  trade: { trade_id: 'trd_1', amount: 500, currency: 'USD' },
  buyer_id: 'b',
  seller_id: 's',
  opened_by: 'buyer',
  reason: 'asset_not_released',
  evidence: { payment_proof_submitted: true, bank_reference_matches: true, payer_name_matches: true },
};
const buyerWith = (lostFor: LossReasonCounts | undefined, lost: number) => ({
  buyer: party('b', { disputesLost: lost, ...(lostFor ? { disputesLostFor: lostFor } : {}) }),
  seller: party('s'),
});
const fraudFlag = (x: ReturnType<typeof explainDispute>) =>
  x.analysis.risk_flags.find((f) => f.code === 'prior_fraudulent_losses');

describe('prior_fraudulent_losses (pure)', () => {
  test("names the reasons, most frequent first, and lowers the buyer's odds beyond the plain lost-dispute count", () => {
    const plain = explainDispute(input, buyerWith({ ...NONE }, 3), DEFAULT_DISPUTE_POLICY, NOW);
    const caught = explainDispute(
      input,
      buyerWith({ ...NONE, fake_proof: 2, third_party_payment: 1 }, 3),
      DEFAULT_DISPUTE_POLICY,
      NOW,
    );
    assert.equal(fraudFlag(plain), undefined);
    const f = fraudFlag(caught);
    assert.deepEqual([f?.severity, f?.party], ['high', 'buyer']);
    assert.match(
      f?.message ?? '',
      /^The buyer has lost 2 earlier disputes for fake payment proof and 1 for a third-party payment\. /,
    );
    assert.ok(caught.logOdds < plain.logOdds, `${caught.logOdds} vs ${plain.logOdds}`);
    const term = caught.contributions.find((c) => c.factor === 'prior_fraudulent_losses');
    assert.deepEqual(term, { factor: 'prior_fraudulent_losses', party: 'buyer', kind: 'history', logOdds: -3 * 0.8 });
    // a clean buyer with this evidence is released to; one caught at fraud three times is not
    assert.equal(
      explainDispute(input, buyerWith(undefined, 0), DEFAULT_DISPUTE_POLICY, NOW).analysis.recommendation,
      'release_to_buyer',
    );
    assert.notEqual(caught.analysis.recommendation, 'release_to_buyer');
  });

  test('one reason reads in the singular; the count is capped; the weight comes from the policy', () => {
    const one = fraudFlag(explainDispute(input, buyerWith({ ...NONE, no_payment: 1 }, 1), DEFAULT_DISPUTE_POLICY, NOW));
    assert.match(one?.message ?? '', /^The buyer has lost 1 earlier dispute for not paying\. /);
    const three = explainDispute(
      input,
      buyerWith({ ...NONE, underpayment: 1, no_payment: 1, fake_proof: 1 }, 3),
      DEFAULT_DISPUTE_POLICY,
      NOW,
    );
    assert.match(
      fraudFlag(three)?.message ?? '',
      /lost 1 earlier dispute for fake payment proof, 1 for not paying and 1 for underpaying\./,
    );
    const many = explainDispute(input, buyerWith({ ...NONE, fake_proof: 9 }, 9), DEFAULT_DISPUTE_POLICY, NOW);
    assert.equal(
      many.contributions.find((c) => c.factor === 'prior_fraudulent_losses')?.logOdds,
      -DEFAULT_DISPUTE_POLICY.countCap * 0.8,
    );
    const policy: DisputePolicy = {
      ...DEFAULT_DISPUTE_POLICY,
      weights: { ...DEFAULT_DISPUTE_POLICY.weights, priorFraudulentLoss: 2 },
    };
    assert.equal(
      explainDispute(input, buyerWith({ ...NONE, fake_proof: 1 }, 1), policy, NOW).contributions.find(
        (c) => c.factor === 'prior_fraudulent_losses',
      )?.logOdds,
      -2,
    );
    // a policy written before the weight existed takes the default
    const { priorFraudulentLoss: _omitted, ...older } = DEFAULT_DISPUTE_POLICY.weights;
    assert.equal(
      explainDispute(
        input,
        buyerWith({ ...NONE, fake_proof: 1 }, 1),
        { ...DEFAULT_DISPUTE_POLICY, weights: older },
        NOW,
      ).contributions.find((c) => c.factor === 'prior_fraudulent_losses')?.logOdds,
      -0.8,
    );
  });
});

describeEachBackend('prior_fraudulent_losses over HTTP', (ctx) => {
  test('a seller that lost disputes for fake proof (as the mirrored counterparty) is flagged in the next analysis', async () => {
    const admin = await ctx().token();
    const buyer = hash('lossreason-buyer');
    const seller = hash('lossreason-seller');
    const other = hash('lossreason-other');
    await postEvents(ctx(), admin, [...tradeHistory(buyer, 30, 300), ...tradeHistory(seller, 30, 300)]);
    await postEvents(ctx(), admin, [
      // other won against the seller, who had faked a payment proof
      event(
        'dispute.resolved',
        other,
        { trade_id: 'lr-1', resolution: 'in_favor', counterparty_id: seller, reason: 'fake_proof' },
        20 * DAY,
      ),
      event('dispute.resolved', seller, { trade_id: 'lr-2', resolution: 'against', reason: 'fake_proof' }, 10 * DAY),
      event(
        'dispute.resolved',
        seller,
        { trade_id: 'lr-3', resolution: 'against', reason: 'unresponsive_counterparty' },
        5 * DAY,
      ),
    ]);
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/dispute/analyze',
      headers: bearer(admin),
      payload: {
        dispute_id: 'dsp-lossreason',
        buyer_id: buyer,
        seller_id: seller,
        opened_by: 'buyer',
        reason: 'asset_not_released',
        trade: {
          trade_id: 'lr-now',
          amount: 100,
          currency: 'USD',
          payment_method: 'bank_transfer',
          paid_at: new Date(Date.now() - 2 * 3_600_000).toISOString(),
        },
        evidence: { payment_proof_submitted: true, bank_reference_matches: true },
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const flags = res.json().risk_flags as Array<{ code: string; party: string; severity: string; message: string }>;
    const f = flags.find((x) => x.code === 'prior_fraudulent_losses');
    assert.deepEqual([f?.party, f?.severity], ['seller', 'high']);
    assert.match(f?.message ?? '', /^The seller has lost 2 earlier disputes for fake payment proof\. /);
    assert.match(flags.find((x) => x.code === 'prior_lost_disputes')?.message ?? '', /lost 3 earlier disputes/);
    assert.equal(
      flags.find((x) => x.code === 'prior_fraudulent_losses' && x.party === 'buyer'),
      undefined,
    );
  });
});
