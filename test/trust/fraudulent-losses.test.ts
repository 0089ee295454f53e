// fraudulent_dispute_losses (docs/signals.md): disputes lost for a third-party payment, a fake proof,
// an underpayment or no payment, decayed like the other history counts. Another such loss never
// lowers a score under any valid policy, the explanation still sums to the score, the description
// names the reason, the fit can weigh it, and ingest → score sees it on both stores.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_POLICY, SIGNAL_NAMES, type SignalName } from '../../src/model/policy.ts';
import { fitSignalWeights } from '../../src/policies/signal-fit.ts';
import { evaluate } from '../../src/model/signal-model.ts';
import { decodeFeatures } from '../../src/model/feature-vector.ts';
import type { EntityProfile } from '../../src/model/types.ts';
import { describeEachBackend } from '../helpers/app.ts';
import { anyPolicy, NOW, profileArb, requestArb, veteranProfile } from '../helpers/profiles.ts';
import { event, hash, postEvents, score } from '../helpers/trust.ts';

const withLosses = (p: EntityProfile, decayed: number, fakeProof = 0, thirdParty = 0): EntityProfile => ({
  ...p,
  decayed: { ...p.decayed, fraudulentLosses: decayed },
  disputesLostFor: { fake_proof: fakeProof, third_party_payment: thirdParty, underpayment: 0, no_payment: 0 },
});

describe('fraudulent_dispute_losses', () => {
  test('one more fraudulent loss never lowers the score under any valid policy; the signals sum to it', () => {
    fc.assert(
      fc.property(
        profileArb,
        requestArb,
        anyPolicy,
        fc.double({ min: 0, max: 40, noNaN: true }),
        fc.double({ min: 0, max: 5, noNaN: true }),
        (profile, request, policy, losses, more) => {
          const before = evaluate(withLosses(profile, losses), request, policy, NOW).result;
          const after = evaluate(withLosses(profile, losses + more), request, policy, NOW).result;
          assert.ok(after.score >= before.score, `${before.score} → ${after.score}`);
          for (const r of [before, after]) {
            const logit = policy.bias + r.signals.reduce((s, x) => s + x.weight * x.value, 0);
            assert.ok(Math.abs(r.score - 100 / (1 + Math.exp(-logit))) <= 0.5 + 1e-9);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  test('log2(1 + decayed losses): 1 for one fresh loss, capped at 4, 0 without; decayed from decayed.at', () => {
    const request = { entity_id: 'e1', amount: 100, currency: 'USD', context: {} };
    const value = (p: EntityProfile) => evaluate(p, request, DEFAULT_POLICY, NOW).values.fraudulent_dispute_losses;
    const fresh = { ...veteranProfile(), decayed: { ...veteranProfile().decayed, at: NOW } };
    assert.equal(value(fresh), 0);
    assert.equal(value(withLosses(fresh, 1)), 1);
    assert.equal(value(withLosses(fresh, 3)), 2);
    assert.equal(value(withLosses(fresh, 500)), 4);
    // one loss a half-life ago counts a half
    const old = withLosses(
      { ...fresh, decayed: { ...fresh.decayed, at: NOW - DEFAULT_POLICY.decayHalfLifeDays * 86_400_000 } },
      1,
    );
    assert.equal(value(old), Math.round(Math.log2(1.5) * 1e4) / 1e4);
  });

  test('the description names the reason: "lost 2 disputes for fake payment proof"', () => {
    const request = { entity_id: 'e1', amount: 100, currency: 'USD', context: {} };
    const text = (p: EntityProfile) =>
      evaluate(p, request, DEFAULT_POLICY, NOW).result.signals.find((s) => s.name === 'fraudulent_dispute_losses')
        ?.description;
    assert.equal(text(withLosses(veteranProfile(), 2, 2)), 'lost 2 disputes for fake payment proof');
    assert.equal(text(withLosses(veteranProfile(), 1, 0, 1)), 'lost 1 dispute for a third-party payment');
    assert.equal(
      text(withLosses(veteranProfile(), 3, 2, 1)),
      'lost 3 disputes for fraud: 2 for fake payment proof, 1 for a third-party payment',
    );
    assert.equal(text(veteranProfile()), undefined, 'no such loss, no signal');
  });

  test('the fit can move its weight: positive when such losses come with fraud, 0 when they do not', () => {
    const zeros = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, 0])) as Record<SignalName, number>;
    const rows = (predictive: boolean) =>
      Array.from({ length: 400 }, (_, i) => {
        const fraud = i % 4 === 0;
        const lost = predictive ? (fraud ? i % 8 === 0 : i % 40 === 1) : i % 5 === 0;
        return {
          features: { ...zeros, new_account: (i % 3) / 2, fraudulent_dispute_losses: lost ? 1 : 0 },
          label: (fraud ? 1 : 0) as 0 | 1,
        };
      });
    assert.ok(fitSignalWeights(rows(true)).weights.fraudulent_dispute_losses > 1);
    assert.ok(fitSignalWeights(rows(false)).weights.fraudulent_dispute_losses < 0.1);
  });
});

describeEachBackend('fraudulent_dispute_losses from ingest to score', (ctx) => {
  test('losses for a fake proof count, a loss for a wrong amount does not; the decision stores the value', async () => {
    const token = await ctx().token();
    const id = hash('fraudulent-losses-a');
    const counterparty = hash('fraudulent-losses-cp');
    await postEvents(ctx(), token, [
      event('trade.completed', id, { amount: 100, currency: 'USD', counterparty_id: counterparty }, 3 * 86_400_000),
      event('dispute.resolved', id, { trade_id: 'fl-1', resolution: 'against', reason: 'fake_proof' }),
      event('dispute.resolved', id, { trade_id: 'fl-2', resolution: 'against', reason: 'fake_proof' }),
      event('dispute.resolved', id, { trade_id: 'fl-3', resolution: 'against', reason: 'wrong_amount' }),
      // won against the counterparty: the reason is the loser's, the counterparty's
      event('dispute.resolved', id, {
        trade_id: 'fl-4',
        resolution: 'in_favor',
        counterparty_id: counterparty,
        reason: 'no_payment',
      }),
    ]);
    const res = await score(ctx(), token, { entity_id: id, amount: 100, currency: 'USD', context: {} });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as {
      decision_id: string;
      signals: Array<{ name: string; value: number; description: string }>;
    };
    const signal = body.signals.find((s) => s.name === 'fraudulent_dispute_losses');
    assert.ok(signal, JSON.stringify(body.signals));
    assert.equal(signal.description, 'lost 2 disputes for fake payment proof');
    // two losses an hour ago, decayed over that hour: just under log2(3)
    assert.ok(signal.value > 1.584 && signal.value <= 1.585, String(signal.value));
    const row = await ctx()
      .store.db.selectFrom('decisions')
      .select(['features'])
      .where('id', '=', body.decision_id)
      .executeTakeFirstOrThrow();
    assert.equal(decodeFeatures(row.features!).fraudulent_dispute_losses, signal.value);
    const loser = await score(ctx(), token, { entity_id: counterparty, amount: 100, currency: 'USD', context: {} });
    const mirrored = (loser.json() as { signals: Array<{ name: string; description: string }> }).signals.find(
      (s) => s.name === 'fraudulent_dispute_losses',
    );
    assert.equal(mirrored?.description, 'lost 1 dispute for not paying');
  });
});
