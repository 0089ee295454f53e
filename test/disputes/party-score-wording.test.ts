// Issue 29, item 20: an analysis said the buyer was "risky from its whole history" beside "The buyer
// has no recorded history", and the buyer scored 93 there but 54 in a plain score of the same 750
// USDT. The party's score is its score for this trade (the other party as counterparty, the trade's
// payment method; docs/disputes.md): the flag says so and names what raised it, and a plain score
// with that context gives the same number.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';

interface Flag {
  code: string;
  party: string;
  message: string;
}

describeEachBackend(
  "a party's score inside a dispute",
  (ctx) => {
    test('a buyer without history: high_risk_party says "for this trade, from this trade alone", never "whole history", and equals the plain score with the same context', async () => {
      const token = await ctx().token(['trust:read', 'trust:write', 'dispute:analyze']);
      const buyer = hash('wording-buyer');
      const seller = hash('wording-seller');
      const events = await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/events',
        headers: bearer(token),
        payload: {
          events: [
            {
              event_id: 'wording-1',
              type: 'trade.completed',
              entity_id: seller,
              occurred_at: '2026-10-01T10:00:00Z',
              amount: 250,
              currency: 'USDT',
              counterparty_id: hash('someone'),
            },
          ],
        },
      });
      assert.equal(events.statusCode, 200, events.body);
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/dispute/analyze',
        headers: bearer(token),
        payload: {
          dispute_id: 'dsp-wording',
          trade: { trade_id: 'trd-wording', amount: 750, currency: 'USDT', payment_method: 'bank_transfer' },
          buyer_id: buyer,
          seller_id: seller,
          opened_by: 'buyer',
          reason: 'asset_not_released',
          evidence: { payment_proof_submitted: true },
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const analysis = res.json() as { parties: { buyer: { score: number } }; risk_flags: Flag[] };
      const buyerFlags = analysis.risk_flags.filter((f) => f.party === 'buyer');
      const highRisk = buyerFlags.find((f) => f.code === 'high_risk_party');
      assert.ok(highRisk, JSON.stringify(buyerFlags));
      assert.ok(buyerFlags.some((f) => f.code === 'new_account' && f.message.includes('no recorded history')));
      assert.doesNotMatch(highRisk.message, /whole history/);
      assert.match(
        highRisk.message,
        new RegExp(
          `risk score for this trade is ${analysis.parties.buyer.score} \\(critical\\), from this trade alone`,
        ),
      );
      assert.match(
        highRisk.message,
        /mostly: a first trade with this counterparty/,
        'the flag names the signal that raised the score most',
      );

      const plain = async (context: Record<string, string>) =>
        (
          await ctx().inject({
            method: 'POST',
            url: '/api/v1/trust/score',
            headers: bearer(token),
            payload: { entity_id: buyer, amount: 750, currency: 'USDT', context },
          })
        ).json() as { score: number; signals: Array<{ name: string }> };
      const same = await plain({ counterparty_id: seller, payment_method: 'bank_transfer' });
      assert.equal(
        same.score,
        analysis.parties.buyer.score,
        'the same trade, scored with the same context, gives the same score',
      );
      const bare = await plain({ payment_method: 'bank_transfer' });
      assert.ok(bare.score < same.score, 'without the counterparty the first-trade signals fall away');
      assert.ok(!bare.signals.some((s) => s.name.startsWith('new_counterparty')));
    });
  },
  {},
);
