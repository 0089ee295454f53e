// A Decider for the outcomes tests: it reads the request's `context.rule` (an unknown context
// member, as a rule may read any) and answers as a set of rules would, and it records what it was
// handed. Its revision moves when a test says so, as a rule or list change moves the real one.
import type { Environment } from '../../src/lib/principal.ts';
import { DEFAULT_POLICY, type Policy } from '../../src/model/policy.ts';
import {
  OUTCOME_SEVERITY,
  type Decider,
  type MatchedRule,
  type Outcome,
  type RuleFacts,
  type RuleVerdict,
} from '../../src/model/outcomes.ts';
import { bearer, type TestContext } from '../helpers/app.ts';

export const CAP = 50;

const rule = (
  name: string,
  action: Outcome | null,
  facts: RuleFacts,
  extra: Partial<MatchedRule> = {},
): MatchedRule => ({
  id: `rul_${name}`,
  name,
  version: 2,
  action,
  reads: { 'context.rule': facts.context.rule, amount: facts.amount },
  ...extra,
});

export class TestDecider implements Decider {
  rev = 0;
  calls = 0;
  last: { environment: Environment; facts: RuleFacts; policyOutcome: Outcome; now: number } | undefined;

  revision(environment: Environment): string {
    return `${environment}:${this.rev}`;
  }

  decide(environment: Environment, facts: RuleFacts, policyOutcome: Outcome, now: number): RuleVerdict {
    this.calls += 1;
    this.last = { environment, facts, policyOutcome, now };
    const none: RuleVerdict = { outcome: policyOutcome, rules: [], shadow_rules: [], safe_amount: facts.safe_amount };
    const worst = (action: Outcome) =>
      OUTCOME_SEVERITY[action] > OUTCOME_SEVERITY[policyOutcome] ? action : policyOutcome;
    switch (facts.context.rule) {
      case 'decline':
      case 'hold':
      case 'review': {
        const action = facts.context.rule;
        return { ...none, outcome: worst(action), rules: [rule(`${action}-it`, action, facts)] };
      }
      case 'cap': {
        const safe = facts.safe_amount === null ? CAP : Math.min(facts.safe_amount, CAP);
        return { ...none, safe_amount: safe, rules: [rule('cap-it', null, facts, { cap: CAP })] };
      }
      case 'shadow':
        return { ...none, shadow_rules: [{ ...rule('watch-it', 'decline', facts), would_be_outcome: 'decline' }] };
      default:
        return none;
    }
  }
}

/** Uploads `changes` over the built-in policy as a new version and activates it. */
export async function activatePolicy(
  ctx: TestContext,
  token: string,
  version: string,
  changes: Partial<Policy>,
): Promise<void> {
  const doc = { ...structuredClone(DEFAULT_POLICY), version, ...changes };
  const created = await ctx.inject({ method: 'POST', url: '/api/v1/policies', headers: bearer(token), payload: doc });
  if (created.statusCode !== 201) throw new Error(`policy upload: ${created.statusCode} ${created.body}`);
  const active = await ctx.inject({
    method: 'POST',
    url: `/api/v1/policies/${version}/activate`,
    headers: bearer(token),
    payload: { confirm: true },
  });
  if (active.statusCode !== 200) throw new Error(`policy activation: ${active.statusCode} ${active.body}`);
}

/** A fresh entity and context the default policy rates at `level` (no history). */
export const AT_LEVEL = {
  low: { amount: 10, context: { payment_method: 'bank_transfer', country: 'DE', counterparty_country: 'NG' } },
  medium: { amount: 10, context: { payment_method: 'card', country: 'DE', counterparty_country: 'NG' } },
  high: { amount: 1000, context: { payment_method: 'bank_transfer', country: 'DE', counterparty_country: 'NG' } },
  critical: { amount: 3000, context: { payment_method: 'card', country: 'DE', counterparty_country: 'NG' } },
} as const;
