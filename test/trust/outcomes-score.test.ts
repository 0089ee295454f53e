// Outcomes on every score (docs/rules.md; issue 30 item 1): the policy's outcome per risk level
// without rules, a Decider's verdict applied (outcome, matched rules, a cap on safe_amount; score
// and risk level the model's), the rules' revision in the cache key, and what a decision stores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { event, hash, postEvents, score } from '../helpers/trust.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import { AT_LEVEL, CAP, TestDecider } from './outcomes-support.ts';
import { storedContext, storedEntity } from '../../src/model/stored-rule-inputs.ts';

const DEFAULTS = { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' } as const;
const RESPONSE_MEMBERS = [
  'cached',
  'decision_id',
  'entity_id',
  'outcome',
  'policy_version',
  'risk_level',
  'rules',
  'safe_amount',
  'score',
  'scored_at',
  'signals',
];

describeEachBackend('outcomes without rules: the policy decides', (ctx) => {
  test('each risk level gets the default outcome, with no rules; the stored decision says the same', async () => {
    const token = await ctx().token();
    for (const [level, request] of Object.entries(AT_LEVEL)) {
      const res = await score(ctx(), token, { entity_id: hash(`plain-${level}`), currency: 'USD', ...request });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      // a review or hold opened a review, which the score names
      const opened = body.outcome === 'review' || body.outcome === 'hold';
      assert.deepEqual(Object.keys(body).sort(), [...RESPONSE_MEMBERS, ...(opened ? ['review_id'] : [])].sort());
      assert.equal(body.risk_level, level, `${level}: ${body.score}`);
      assert.equal(body.outcome, DEFAULTS[level as keyof typeof DEFAULTS]);
      assert.deepEqual(body.rules, []);
      const row = await ctx()
        .store.db.selectFrom('decisions')
        .select(['outcome', 'rules', 'shadow_rules', 'rule_inputs', 'result', 'request', 'created_at'])
        .where('id', '=', body.decision_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.outcome, body.outcome);
      assert.equal(row.rules, null);
      assert.equal(row.shadow_rules, null);
      // the short form (src/model/stored-rule-inputs.ts): the summary holds this context, the time the
      // entity's age, the answer the policy's safe amount
      const inputs = JSON.parse(row.rule_inputs!);
      assert.deepEqual(Object.keys(inputs).sort(), ['amount_ref', 'entity']);
      assert.equal(inputs.amount_ref, request.amount / 1000, 'USD reference amount 1000');
      const { amount: _a, currency: _cur, ...summary } = JSON.parse(row.request!);
      assert.deepEqual(storedContext(inputs, summary), request.context);
      assert.deepEqual(storedEntity(inputs, Number(row.created_at)), {
        account_age_days: 0,
        completed_trades: 0,
        chargebacks: 0,
        fraud_reports: 0,
        disputes_lost: 0,
        first_seen_at: null,
      });
      assert.equal(
        JSON.parse(row.result).safe_amount,
        body.safe_amount,
        'no rule: the policy safe amount is the answer',
      );
      const { cached: _c, ...stored } = body;
      assert.deepEqual(JSON.parse(row.result), stored, 'the stored JSON is the response');
    }
  });

  test('GET /decisions/{id} shows outcome, rules and shadow_rules; ?outcome= filters', async () => {
    const token = await ctx().token();
    const declined = (
      await score(ctx(), token, { entity_id: hash('view-critical'), currency: 'USD', ...AT_LEVEL.critical })
    ).json();
    const approved = (
      await score(ctx(), token, { entity_id: hash('view-low'), currency: 'USD', ...AT_LEVEL.low })
    ).json();
    const one = await ctx().inject({
      method: 'GET',
      url: `/api/v1/decisions/${declined.decision_id}`,
      headers: bearer(token),
    });
    assert.equal(one.statusCode, 200, one.body);
    assert.equal(one.json().outcome, 'decline');
    assert.deepEqual(one.json().rules, []);
    assert.deepEqual(one.json().shadow_rules, []);
    const list = await ctx().inject({
      method: 'GET',
      url: '/api/v1/decisions?outcome=decline&limit=100',
      headers: bearer(token),
    });
    assert.equal(list.statusCode, 200, list.body);
    const data = list.json().data as Array<{ id: string; outcome: string }>;
    assert.ok(data.some((d) => d.id === declined.decision_id));
    assert.ok(!data.some((d) => d.id === approved.decision_id));
    assert.ok(data.every((d) => d.outcome === 'decline'));
    const bad = await ctx().inject({ method: 'GET', url: '/api/v1/decisions?outcome=maybe', headers: bearer(token) });
    assert.equal(bad.statusCode, 400);
  });
});

const decider = new TestDecider();

describeEachBackend(
  'outcomes with a decider',
  (ctx) => {
    test("a decline rule declines a low score; score, level and safe amount stay the model's", async () => {
      const token = await ctx().token();
      const entity = hash('decider-decline');
      const plain = (await score(ctx(), token, { entity_id: entity, currency: 'USD', ...AT_LEVEL.low })).json();
      assert.equal(plain.outcome, 'approve');
      assert.equal(decider.last?.policyOutcome, 'approve');
      const res = await score(ctx(), token, {
        entity_id: entity,
        currency: 'USD',
        amount: AT_LEVEL.low.amount,
        context: { ...AT_LEVEL.low.context, rule: 'decline' },
      });
      const body = res.json();
      assert.equal(body.cached, false, 'a context member a rule reads is part of the cache key');
      assert.equal(body.outcome, 'decline');
      assert.equal(body.score, plain.score);
      assert.equal(body.risk_level, plain.risk_level);
      assert.equal(body.safe_amount, plain.safe_amount);
      assert.deepEqual(body.rules, [
        {
          id: 'rul_decline-it',
          name: 'decline-it',
          version: 2,
          action: 'decline',
          reads: { 'context.rule': 'decline', amount: 10 },
        },
      ]);
      const row = await ctx()
        .store.db.selectFrom('decisions')
        .select(['outcome', 'rules'])
        .where('id', '=', body.decision_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.outcome, 'decline');
      assert.deepEqual(JSON.parse(row.rules!), body.rules);
    });

    test("a cap lowers safe_amount (never the stored policy figure); the outcome stays the policy's", async () => {
      const token = await ctx().token();
      const body = (
        await score(ctx(), token, {
          entity_id: hash('decider-cap'),
          currency: 'USD',
          amount: 10,
          context: { ...AT_LEVEL.low.context, rule: 'cap' },
        })
      ).json();
      const policySafe = decider.last!.facts.safe_amount!;
      assert.ok(policySafe > CAP, `the policy's safe amount ${policySafe} is above the cap`);
      assert.equal(body.safe_amount, CAP);
      assert.equal(body.outcome, 'approve');
      assert.equal(body.risk_level, 'low');
      assert.equal(body.rules[0].cap, CAP);
      const row = await ctx()
        .store.db.selectFrom('decisions')
        .select(['rule_inputs'])
        .where('id', '=', body.decision_id)
        .executeTakeFirstOrThrow();
      assert.equal(
        JSON.parse(row.rule_inputs!).safe_amount,
        policySafe,
        'rule_inputs keeps the policy safe amount, before caps (the answer holds the cap)',
      );
    });

    test('shadow matches are stored, never returned, and change nothing', async () => {
      const token = await ctx().token();
      const body = (
        await score(ctx(), token, {
          entity_id: hash('decider-shadow'),
          currency: 'USD',
          amount: 10,
          context: { ...AT_LEVEL.low.context, rule: 'shadow' },
        })
      ).json();
      assert.equal(body.outcome, 'approve');
      assert.deepEqual(body.rules, []);
      assert.equal('shadow_rules' in body, false);
      const view = (
        await ctx().inject({ method: 'GET', url: `/api/v1/decisions/${body.decision_id}`, headers: bearer(token) })
      ).json();
      assert.equal(view.shadow_rules.length, 1);
      assert.equal(view.shadow_rules[0].would_be_outcome, 'decline');
      assert.equal(view.shadow_rules[0].name, 'watch-it');
    });

    test('the decider reads the entity facts, amount_ref and every signal by name', async () => {
      const token = await ctx().token();
      const entity = hash('decider-facts');
      await postEvents(ctx(), token, [
        event('trade.completed', entity, { amount: 100, currency: 'USD' }, 10 * 86_400_000),
        event('trade.completed', entity, { amount: 120, currency: 'USD' }, 5 * 86_400_000),
        event('chargeback', entity, {}, 2 * 86_400_000),
      ]);
      await score(ctx(), token, {
        entity_id: entity,
        amount: 250,
        currency: 'USD',
        context: { payment_method: 'card' },
      });
      const { facts, environment } = decider.last!;
      assert.equal(environment, 'live');
      assert.equal(facts.entity_id, entity);
      assert.equal(facts.amount_ref, 0.25);
      assert.equal(facts.entity.completed_trades, 2);
      assert.equal(facts.entity.chargebacks, 1);
      assert.ok(
        facts.entity.account_age_days > 9.9 && facts.entity.account_age_days < 10.1,
        String(facts.entity.account_age_days),
      );
      assert.equal(typeof facts.entity.first_seen_at, 'string');
      assert.deepEqual(Object.keys(facts.signals).sort(), [...SIGNAL_NAMES].sort());
      assert.ok(facts.signals.chargebacks! > 0);
      await score(ctx(), token, { entity_id: entity, amount: 250, currency: 'SEK' });
      assert.equal(decider.last!.facts.amount_ref, null, 'a currency without a reference amount');
    });

    test('a changed revision is never answered from the cache; a hit carries the stored outcome and rules', async () => {
      const token = await ctx().token();
      const request = {
        entity_id: hash('decider-cache'),
        currency: 'USD',
        amount: 10,
        context: { ...AT_LEVEL.low.context, rule: 'review' },
      };
      const miss = (await score(ctx(), token, request)).json();
      const calls = decider.calls;
      const hit = (await score(ctx(), token, request)).json();
      assert.equal(hit.cached, true);
      assert.equal(decider.calls, calls, 'a hit does not decide again');
      assert.equal(hit.decision_id, miss.decision_id);
      assert.equal(hit.outcome, 'review');
      assert.deepEqual(hit.rules, miss.rules);
      decider.rev += 1;
      const after = (await score(ctx(), token, request)).json();
      assert.equal(after.cached, false);
      assert.notEqual(after.decision_id, miss.decision_id);
      assert.equal(decider.calls, calls + 1);
      assert.equal((await score(ctx(), token, request)).json().cached, true, 'cached again under the new revision');
    });

    test('batch items carry outcome and rules like single scores', async () => {
      const token = await ctx().token();
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/trust/score/batch',
        headers: bearer(token),
        payload: {
          requests: [
            {
              entity_id: hash('batch-a'),
              currency: 'USD',
              amount: 10,
              context: { ...AT_LEVEL.low.context, rule: 'hold' },
            },
            { entity_id: hash('batch-b'), currency: 'USD', ...AT_LEVEL.critical },
            { entity_id: hash('batch-c'), currency: 'usd', amount: 10 },
          ],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const [a, b, c] = res.json().results;
      assert.equal(a.outcome, 'hold');
      assert.equal(a.rules[0].name, 'hold-it');
      assert.equal(b.outcome, 'decline');
      assert.deepEqual(b.rules, []);
      assert.equal(c.status, 400);
    });
  },
  {},
  { decider, webhookWorker: { enabled: false } },
);
