// A score decision's rule inputs in their short form (issue 42; src/model/stored-rule-inputs.ts):
// what the row already holds is left out (the request summary's context members, the entity's age,
// the answered safe amount) and rebuilt by the readers, so a rule replayed on a decision stored
// now sees exactly what the live rule saw, and exactly what it sees on the same decision stored
// in the long form rows kept before. src/trust/scoring.ts writes the request summary from
// SUMMARY_CONTEXT, the list the short form leaves out: a member the two disagreed on would be lost here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/app.ts';
import { hash, postEvents, score, tradeHistory } from '../helpers/trust.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import { decodeFeatures } from '../../src/model/feature-vector.ts';
import { shortRuleInputs, storedContext, storedEntity } from '../../src/model/stored-rule-inputs.ts';
import type { RuleFacts } from '../../src/model/outcomes.ts';
import { RuleTestTally, StoredFacts, type ReplayRow, type ReplaySettings } from '../../src/rules/replay.ts';
import { compileRule } from '../../src/rules/compile.ts';
import { evaluateRules } from '../../src/rules/decide.ts';
import { ListHistory } from '../../src/rules/replay-lists.ts';
import { AT_LEVEL, TestDecider } from './outcomes-support.ts';

const settings: ReplaySettings = {
  outcomes: { low: 'approve', medium: 'approve', high: 'review', critical: 'decline' },
  signalNames: SIGNAL_NAMES,
  disputePrior: { alpha: 1, beta: 9 },
};

/** Everything a rule reads, as plain values. */
const view = (f: RuleFacts) => ({
  entity_id: f.entity_id,
  amount: f.amount,
  currency: f.currency,
  amount_ref: f.amount_ref,
  context: f.context,
  entity: f.entity,
  signals: f.signals,
  score: f.score,
  risk_level: f.risk_level,
  safe_amount: f.safe_amount,
});

const RULES = [
  'context.payment_method == "card" && entity.account_age_days >= 0.0',
  'has(context.counterparty_id) || context.exists(k, k == "side")',
  'safe_amount != null && safe_amount < amount * 100.0 && entity.completed_trades >= 0.0',
  'signals.new_account > 0.0 || amount_ref != null',
];

function outcomesOn(row: ReplayRow): unknown[] {
  return RULES.map((condition) => {
    const rule = compileRule(
      { id: 'r', version: 1, status: 'active', body: { name: 'r', action: 'decline', condition } },
      SIGNAL_NAMES,
    );
    const tally = new RuleTestTally(rule, new ListHistory([]), settings, evaluateRules);
    tally.add(row);
    const { matched, errors, outcomes, examples } = tally.result();
    return { condition, matched, errors, outcomes, reads: examples.map((e) => e.reads) };
  });
}

const decider = new TestDecider();

describeEachBackend(
  'short rule inputs',
  (ctx) => {
    const cases: Array<[string, Record<string, unknown>, string?]> = [
      [
        'every summary member and more',
        {
          amount: 120,
          context: {
            counterparty_id: hash('sri-cp'),
            side: 'sell',
            payment_method: 'card',
            country: 'DE',
            counterparty_country: 'NG',
            trade_id: 'trade-sri-1',
            items: [1, 2, { deep: 'x' }],
            note: 'n',
          },
        },
      ],
      ['only summary members', { ...AT_LEVEL.low }],
      ['no context', { amount: 10 }],
      ['a cap below the policy safe amount', { amount: 10, context: { ...AT_LEVEL.low.context, rule: 'cap' } }],
      ['a known entity', { amount: 80, context: { side: 'buy', counterparty_id: hash('sri-cp2') } }, 'history'],
    ];
    for (const [name, body, history] of cases) {
      test(`${name}: the replayed facts are the live ones, on the new row and on the long form`, async () => {
        const token = await ctx().token();
        const entity = hash(`sri-${name}`);
        if (history) await postEvents(ctx(), token, tradeHistory(entity, 12, 30));
        const res = await score(ctx(), token, { entity_id: entity, currency: 'USD', ...body });
        assert.equal(res.statusCode, 200, res.body);
        const live = structuredClone(view(decider.last!.facts));
        const stored = await ctx()
          .store.db.selectFrom('decisions')
          .select(['id', 'subject_id', 'created_at', 'request', 'features', 'feature_set', 'result'])
          .select(['risk_level', 'outcome', 'rules', 'label', 'rule_inputs'])
          .where('id', '=', res.json().decision_id)
          .executeTakeFirstOrThrow();
        const row = {
          ...stored,
          created_at: Number(stored.created_at),
          feature_set: Number(stored.feature_set),
        } as ReplayRow;
        const inputs = JSON.parse(row.rule_inputs!) as Record<string, unknown>;
        assert.ok(!('context' in inputs), `the summary holds its members: ${row.rule_inputs}`);
        assert.ok(!('account_age_days' in (inputs.entity as object)), 'the age is rebuilt from the time');
        assert.equal('safe_amount' in inputs, name.startsWith('a cap'), 'kept only when a rule capped it');
        // the long form, as rows stored before kept it, beside the object of names
        const longRow: ReplayRow = {
          ...row,
          features: JSON.stringify(decodeFeatures(row.features!)),
          rule_inputs: JSON.stringify({
            amount_ref: live.amount_ref,
            context: live.context,
            entity: live.entity,
            safe_amount: live.safe_amount,
          }),
        };
        assert.ok(row.rule_inputs!.length < longRow.rule_inputs!.length);
        const now = view(new StoredFacts(row, settings));
        assert.deepStrictEqual(now, live);
        assert.deepStrictEqual(now, view(new StoredFacts(longRow, settings)));
        assert.deepStrictEqual(outcomesOn(row), outcomesOn(longRow));
      });
    }
  },
  {},
  { decider, webhookWorker: { enabled: false } },
);

test('a summary that is not the context keeps the whole context; the readers take both forms', () => {
  const entity = {
    account_age_days: 1.5,
    completed_trades: 2,
    chargebacks: 0,
    fraud_reports: 0,
    disputes_lost: 0,
    first_seen_at: new Date(1_000).toISOString(),
  };
  const createdAt = 1_000 + 1.5 * 86_400_000;
  const inputs = { amount_ref: 0.5, context: { side: 'buy', x: 1 }, entity, safe_amount: 10 };
  const other = shortRuleInputs(inputs, {
    summaryContext: { side: 'sell' },
    answeredSafeAmount: 9,
    createdAt: createdAt + 86_400_000,
  });
  assert.deepEqual(JSON.parse(other), inputs, 'nothing the row holds differs from what it would rebuild');
  const short = JSON.parse(
    shortRuleInputs(inputs, { summaryContext: { side: 'buy' }, answeredSafeAmount: 10, createdAt }),
  ) as Record<string, unknown>;
  const { account_age_days: _age, ...withoutAge } = entity;
  assert.deepEqual(short, { amount_ref: 0.5, extra_context: { x: 1 }, entity: withoutAge });
  assert.deepStrictEqual(storedContext(short, { side: 'buy' }), inputs.context);
  assert.deepStrictEqual(storedEntity(short, createdAt), entity);
  assert.deepStrictEqual(storedContext(inputs, { side: 'other' }), inputs.context, 'the long form as stored');
  assert.deepStrictEqual(storedContext(null, { side: 'buy' }), { side: 'buy' }, 'before rule inputs: the summary');
});
