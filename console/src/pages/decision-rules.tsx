// A score decision's outcome and the rules behind it (docs/rules.md): the active rules that matched,
// with the values their condition read, and beside them the shadow rules that matched, with the
// outcome each would have given. Used by the decision page (and any page showing a decision's rules).
import './rules.css';
import { hasScope } from '../api.ts';
import { Link, fmtNumber } from '../ui.tsx';
import type { Decision } from '../types.ts';
import { ReadValue } from './rules-test.tsx';
import { Breakable } from './rules-parts.tsx';

interface DecisionRule {
  id: string;
  name: string;
  version: number;
  action: string | null;
  override?: boolean;
  final?: boolean;
  cap?: number | null;
  reads: Record<string, unknown>;
  /** a shadow rule's outcome, had it been active */
  would_be_outcome?: string;
}

/** The members a score decision carries since rules (docs/api.md, "Rules and lists"). */
export interface DecisionOutcome {
  outcome?: string | null;
  rules?: DecisionRule[] | null;
  shadow_rules?: DecisionRule[] | null;
}

export const outcomeOf = (d: Decision): DecisionOutcome => {
  const x = d as unknown as DecisionOutcome & { result?: DecisionOutcome };
  return {
    outcome: x.outcome ?? x.result?.outcome ?? null,
    rules: x.rules ?? x.result?.rules ?? null,
    shadow_rules: x.shadow_rules ?? null,
  };
};

/** Whether the policy decided by money (its economics): the result then carries the expected costs. */
const byMoney = (d: Decision): boolean =>
  Boolean((d as unknown as { result?: { expected_costs?: unknown } }).result?.expected_costs);

export const OutcomeBadge = ({ outcome }: { outcome: string | null | undefined }) =>
  outcome ? <span class={`badge outcome-${outcome}`}>{outcome}</span> : <span class="muted">not recorded</span>;

function RuleName({ r }: { r: DecisionRule }) {
  const name = (
    <>
      <span class="mono">
        <Breakable name={r.name} />
      </span>{' '}
      <small class="muted">v{r.version}</small>
    </>
  );
  return hasScope('rules:read') ? <Link to={`/rules/${encodeURIComponent(r.id)}`}>{name}</Link> : name;
}

function RuleRows({ rules, shadow }: { rules: DecisionRule[]; shadow: boolean }) {
  return (
    <ul class={shadow ? 'decision-rules shadow' : 'decision-rules'}>
      {rules.map((r) => (
        <li key={`${r.id}-${r.version}`} data-rule={r.name}>
          <div class="rule-head">
            <RuleName r={r} />
            {r.action ? <span class={`badge outcome-${r.action}`}>{r.action}</span> : null}
            {r.override && <small class="flag">override</small>}
            {r.final && <small class="flag">final</small>}
            {typeof r.cap === 'number' && <small>cap {fmtNumber(r.cap)}</small>}
            {shadow && r.would_be_outcome && (
              <small class="would-be">
                would have made it <span class={`badge outcome-${r.would_be_outcome}`}>{r.would_be_outcome}</span>
              </small>
            )}
          </div>
          <ul class="reads">
            {Object.entries(r.reads ?? {}).map(([k, v]) => (
              <li key={k}>
                <span class="mono">{k}</span> = <ReadValue v={v} />
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

/** The outcome's rules section of a score decision: nothing when the decision predates rules. */
export function DecisionRules({ d }: { d: Decision }) {
  const o = outcomeOf(d);
  const rules = o.rules ?? [];
  const shadow = o.shadow_rules ?? [];
  if (!o.outcome && rules.length === 0 && shadow.length === 0) return null;
  return (
    <section aria-labelledby="h-decision-rules" class="decision-outcome">
      <h2 id="h-decision-rules">
        Why this outcome: <OutcomeBadge outcome={o.outcome} />
      </h2>
      {rules.length === 0 ? (
        <p class="muted">
          {byMoney(d)
            ? "No rule matched: the outcome is the policy's least-cost choice."
            : "No rule matched: the outcome is the policy's for this risk level."}
        </p>
      ) : (
        <>
          <h3>Rules that matched</h3>
          <RuleRows rules={rules} shadow={false} />
        </>
      )}
      {shadow.length > 0 && (
        <>
          <h3>
            Shadow rules that matched <small class="muted">(evaluated, not applied)</small>
          </h3>
          <RuleRows rules={shadow} shadow />
        </>
      )}
    </section>
  );
}
