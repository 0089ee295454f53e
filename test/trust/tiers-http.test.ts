// New-account tiers over HTTP (docs/api.md, "Trust scoring"; docs/signals.md, "New accounts"), on
// both stores: a clean newcomer is scored below high with a safe_amount of at least its tier
// limit, a chargeback still takes it to 0, and a stored policy that predates the tiers keeps
// loading and scoring, with the default tiers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { event, hash, postEvents, score } from '../helpers/trust.ts';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import { insertPolicy } from '../../src/policies/repository.ts';

const newcomerBody = (entity: string, amount: number, method = 'bank_transfer') => ({
  entity_id: hash(entity),
  amount,
  currency: 'USD',
  context: { counterparty_id: hash(`${entity}-cp`), payment_method: method },
});

describeEachBackend('new-account tiers over HTTP', (ctx) => {
  test('a clean never-seen entity, bank transfer, new counterparty, USD 200 (limit 250): low, safe_amount 399.18', async () => {
    const token = await ctx().token();
    const res = await score(ctx(), token, newcomerBody('tiers-newcomer', 200));
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.policy_version, DEFAULT_POLICY.version);
    assert.equal(body.score, 21);
    assert.equal(body.risk_level, 'low');
    assert.equal(body.safe_amount, 399.18);
    assert.ok(
      !body.signals.some((s: { name: string }) => s.name === 'amount_vs_history'),
      'an amount within the tier limit carries no amount risk',
    );
  });

  test('the riskiest clean newcomer (card) within its limit is medium; two chargebacks take safe_amount to 0', async () => {
    const token = await ctx().token();
    const clean = await score(ctx(), token, newcomerBody('tiers-card', 250, 'card'));
    assert.equal(clean.statusCode, 200, clean.body);
    assert.equal(clean.json().risk_level, 'medium');
    assert.ok(clean.json().safe_amount >= 250);
    await postEvents(ctx(), token, [
      event('chargeback', hash('tiers-card'), { amount: 80, currency: 'USD' }),
      event('chargeback', hash('tiers-card'), { amount: 90, currency: 'USD' }),
    ]);
    const flagged = await score(ctx(), token, newcomerBody('tiers-card', 250, 'card'));
    assert.equal(flagged.json().safe_amount, 0);
    assert.equal(flagged.json().risk_level, 'critical');
  });

  test('a stored policy without newAccounts (older documents) loads, scores and gets the default tiers', async () => {
    const old = JSON.parse(JSON.stringify({ ...DEFAULT_POLICY, version: 'pre-tiers-1', bias: -1.7 })) as Policy;
    delete old.newAccounts;
    // stored as an older release stored it (not through the upload route, which would also accept it)
    await insertPolicy(ctx().store.db, 'live', { policy: old, source: 'upload' });
    const token = await ctx().token();
    const activate = (version: string) =>
      ctx().inject({
        method: 'POST',
        url: `/api/v1/policies/${version}/activate`,
        headers: bearer(token),
        payload: { confirm: true },
      });
    assert.equal((await activate('pre-tiers-1')).statusCode, 200);
    try {
      const res = await score(ctx(), token, newcomerBody('tiers-old-policy', 200));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().policy_version, 'pre-tiers-1');
      // σ(−1.7 + 0.6 + 0.2 + 0.3 + 0.3) = 43; the amount counts beyond USD 250 only
      assert.equal(res.json().score, 43);
      assert.ok(res.json().safe_amount >= 250, res.body);
      const stored = await ctx().inject({ method: 'GET', url: '/api/v1/policies/pre-tiers-1', headers: bearer(token) });
      assert.equal(stored.statusCode, 200, stored.body);
    } finally {
      assert.equal((await activate(DEFAULT_POLICY.version)).statusCode, 200);
    }
  });
});
