// The rules' metric (docs/operations.md, "Metrics"): a condition that fails at run time counts as no
// match and is counted here by rule id, as is a stored rule that no longer compiles (skipped).
import type { Counter } from 'prom-client';
import type { Metrics } from '../http/observability.ts';

export const ruleErrorCounter = (metrics: Metrics) =>
  metrics.counter(
    'vouch_rule_errors_total',
    'Rule evaluations that failed at run time (counted as no match), and stored rules that no longer compile, by rule id',
    ['rule'],
  ) as Counter<'rule'>;
