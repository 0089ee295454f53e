// A score's decision in money (docs/api.md, "Decisions by money"): with the policy's economics the
// outcome is the one of least expected cost, so the decision page and the review desk say which
// costs were weighed — and, when a matched rule set the outcome instead, what money alone chose.
import './money.css';
import { Fragment, type ComponentChildren } from 'preact';
import { fmtMoney } from '../ui.tsx';
import { fmtProbability } from '../money.ts';

type Costs = { approve: number; review: number; decline: number; currency: string };
type Choice = 'approve' | 'review' | 'decline';

/** The members of a stored score result this reads (the SDK types them; older results lack them). */
export interface MoneyResult {
  outcome?: string | null;
  fraud_probability?: number;
  expected_costs?: Costs;
}
interface MatchedRule {
  name: string;
  action: string | null;
}

/**
 * The cheapest outcome, ties going to approve. The policy also asks a review to save at least its
 * reviewGainMin, which the result does not carry: a cheapest review the outcome did not take was
 * short of it.
 */
function cheapest(c: Costs): Choice {
  const better = c.approve <= c.decline ? 'approve' : 'decline';
  return c.review < Math.min(c.approve, c.decline) ? 'review' : better;
}

const compare = (a: number, b: number) => (a < b ? '<' : a > b ? '>' : '=');

/** What money says for `choice`: the decided form ("Declined: …") or, when a rule decided, the conditional one. */
function reason(choice: Choice, c: Costs, decided: boolean): string {
  const money = (x: number) => fmtMoney(x, c.currency);
  // the two costs set against a review, without repeating the currency
  const bare = (x: number) => money(x).slice(0, -(c.currency.length + 1));
  const loss = `expected loss ${money(c.approve)} if approved ${compare(c.approve, c.decline)} ${money(c.decline)} to turn away`;
  if (choice === 'review')
    return decided
      ? `Review: ${money(c.review)} for a review saves more than approving (${bare(c.approve)}) or declining (${bare(c.decline)}).`
      : `By money a review is cheapest: ${money(c.review)}, against approving (${bare(c.approve)}) or declining (${bare(c.decline)}).`;
  if (decided) return `${choice === 'approve' ? 'Approved' : 'Declined'}: ${loss}.`;
  return `By money the policy would ${choice}: ${loss}.`;
}

const MONEY_OUTCOMES: ReadonlySet<string> = new Set(['approve', 'review', 'decline']);

export function MoneyWhy({ result, rules }: { result: MoneyResult; rules: MatchedRule[] | null | undefined }) {
  const c = result.expected_costs;
  if (!c) return null;
  const outcome = result.outcome ?? null;
  const money = cheapest(c);
  const deciding = (rules ?? []).filter((r) => r.action);
  let line: string;
  let rule: ComponentChildren;
  if (outcome === money) {
    line = reason(money, c, true);
    const agreeing = deciding.filter((r) => r.action === outcome).map((r) => r.name);
    if (agreeing.length > 0) rule = <>{ruleNames(agreeing)} asked for the same.</>;
  } else if (deciding.length === 0 && outcome && MONEY_OUTCOMES.has(outcome) && outcome !== 'review') {
    // a review was cheapest but short of the least saving the policy asks of one
    const choice = outcome as Choice;
    const saves = Math.min(c.approve, c.decline) - c.review;
    line = `${reason(choice, c, true).slice(0, -1)}; a review (${fmtMoney(c.review, c.currency)}) would save only ${fmtMoney(saves, c.currency)}, less than the policy asks of one.`;
  } else {
    line = reason(money, c, false);
    rule =
      deciding.length > 0 ? (
        <>
          {ruleNames(
            deciding.map((r) => r.name),
            deciding.map((r) => ` (${r.action})`),
          )}{' '}
          decided the outcome instead: <strong>{outcome ?? 'not recorded'}</strong>.
        </>
      ) : (
        <>The outcome recorded is {outcome ?? 'none'}.</>
      );
  }
  return (
    <section class="money-why" aria-labelledby="h-money-why">
      <h2 id="h-money-why">Why in money</h2>
      <p class="money-line">
        <strong>{line}</strong>
      </p>
      {rule && <p class="money-rule">{rule}</p>}
      <p class="muted small">
        Probability of fraud {fmtProbability(result.fraud_probability)}. Expected cost of approving{' '}
        {fmtMoney(c.approve, c.currency)}, of a review {fmtMoney(c.review, c.currency)}, of declining{' '}
        {fmtMoney(c.decline, c.currency)}, by the policy's economics.
      </p>
    </section>
  );
}

/** "Rule a" or "Rules a, b", the names as code, each followed by its `notes` entry. */
const ruleNames = (names: string[], notes: string[] = []) => (
  <>
    {names.length === 1 ? 'Rule' : 'Rules'}{' '}
    {names.map((n, i) => (
      <Fragment key={n}>
        {i > 0 && ', '}
        <span class="mono">{n}</span>
        {notes[i]}
      </Fragment>
    ))}
  </>
);
