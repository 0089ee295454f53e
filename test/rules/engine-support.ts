// Shared fixtures for the rules-engine tests: facts as a score builds them, and compiled rules.
import { compileRule, type CompiledRule, type RuleBody } from '../../src/rules/compile.ts';
import { SIGNAL_NAMES } from '../../src/model/policy.ts';
import type { RuleFacts } from '../../src/model/outcomes.ts';

export const LISTS = new Map([
  ['mules', 'entity'],
  ['high_risk_countries', 'country'],
]);

export function facts(over: Partial<RuleFacts> = {}): RuleFacts {
  return {
    entity_id: 'ent_buyer1',
    amount: 1500,
    currency: 'USDT',
    amount_ref: 3,
    context: { payment_method: 'card', country: 'NG', counterparty_id: 'ent_mule9' },
    entity: {
      account_age_days: 3,
      completed_trades: 0,
      chargebacks: 0,
      fraud_reports: 0,
      disputes_lost: 0,
      first_seen_at: '2026-11-24T10:00:00Z',
    },
    signals: { velocity_trades: 0.7, new_account: 1 },
    score: 55,
    risk_level: 'medium',
    safe_amount: 800,
    ...over,
  };
}

let seq = 0;
export function rule(
  body: Partial<RuleBody> & { condition: string },
  status: 'active' | 'shadow' = 'active',
  version = 1,
): CompiledRule {
  seq += 1;
  return compileRule({ id: `rul_${seq}`, version, status, body: { name: `rule ${seq}`, ...body } }, SIGNAL_NAMES);
}

/** Lists as a lookup: mules holds ent_mule9, high_risk_countries holds NG. */
export const lookup = (name: string, value: string): boolean =>
  (name === 'mules' && value === 'ent_mule9') || (name === 'high_risk_countries' && value === 'NG');
