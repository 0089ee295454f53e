// A rule's test on past decisions (POST /api/v1/rules/test): how many it would have matched, how the
// outcomes would have moved, the money, the labelled decisions it catches and spares (a confusion
// matrix), and examples with what the condition read, each linking to its decision.
import { Empty, Link, fmtDate, fmtMoney, fmtNumber, fmtPercent } from '../ui.tsx';
import { OUTCOMES, showValue, type RuleTestResult } from './rules-api.ts';

const share = (n: number, of: number) => (of > 0 ? fmtPercent(n / of) : '—');

function Money({ amount }: { amount: RuleTestResult['amount_matched'] }) {
  if (amount === null || amount === undefined) return <>—</>;
  if (typeof amount === 'number') return <>{fmtNumber(amount)}</>;
  const entries = Object.entries(amount);
  if (entries.length === 0) return <>0</>;
  return (
    <>
      {entries.map(([currency, n]) => (
        <span key={currency} class="money-line">
          {fmtMoney(n, currency)}
        </span>
      ))}
    </>
  );
}

/** A value read; a long one (an entity id's hash) cut short, whole in its title. */
export function ReadValue({ v }: { v: unknown }) {
  const text = showValue(v);
  return text.length > 28 ? (
    <span class="mono" title={text}>
      {text.slice(0, 13)}…{text.slice(-6)}
    </span>
  ) : (
    <span class="mono">{text}</span>
  );
}

/** The variables a condition read, as `name = value` chips. */
function Reads({ reads }: { reads: Record<string, unknown> | null | undefined }) {
  const entries = Object.entries(reads ?? {});
  if (entries.length === 0) return <span class="muted">nothing recorded</span>;
  return (
    <ul class="reads">
      {entries.map(([k, v]) => (
        <li key={k}>
          <span class="mono">{k}</span> = <ReadValue v={v} />
        </li>
      ))}
    </ul>
  );
}

export function RuleTestView({ r }: { r: RuleTestResult }) {
  const { fraud, legit } = r.labelled;
  const labelledMatched = fraud.matched + legit.matched;
  const moved = OUTCOMES.some((o) => (r.outcomes.before[o] ?? 0) !== (r.outcomes.after[o] ?? 0));
  return (
    <div class="rule-test" data-testid="rule-test">
      {r.since && r.until && (
        <p class="muted small">
          The score decisions from {fmtDate(r.since)} to {fmtDate(r.until)}, each replayed with its features, request
          and the lists as they were then.
        </p>
      )}
      <dl class="facts">
        <div>
          <dt>Decisions replayed</dt>
          <dd class="big" data-figure="decisions">
            {fmtNumber(r.decisions)}
          </dd>
        </div>
        <div>
          <dt>Matched</dt>
          <dd class="big" data-figure="matched">
            {fmtNumber(r.matched)}
          </dd>
          <dd class="muted small">
            {share(r.matched, r.decisions)} of the decisions
            {r.changed !== undefined ? `; changes ${fmtNumber(r.changed)} outcome${r.changed === 1 ? '' : 's'}` : ''}
          </dd>
        </div>
        <div>
          <dt>Money matched</dt>
          <dd class="big money" data-figure="amount">
            <Money amount={r.amount_matched} />
          </dd>
          <dd class="muted small">the amounts the matched requests asked for</dd>
        </div>
        <div>
          <dt>Fraud caught</dt>
          <dd class="big" data-figure="fraud">
            {fmtNumber(fraud.matched)} <small class="muted">of {fmtNumber(fraud.total)}</small>
          </dd>
          <dd class="muted small">{share(fraud.matched, fraud.total)} of the fraud labelled</dd>
        </div>
        <div>
          <dt>Legit matched</dt>
          <dd class="big" data-figure="legit">
            {fmtNumber(legit.matched)} <small class="muted">of {fmtNumber(legit.total)}</small>
          </dd>
          <dd class="muted small">{share(legit.matched, legit.total)} of the legit labelled</dd>
        </div>
      </dl>
      {r.decisions === 0 ? (
        <Empty>No score decision was stored in this window: there is nothing to replay the rule on yet.</Empty>
      ) : (
        <div class="test-tables">
          <div class="table-wrap">
            <table class="outcomes-table">
              <caption>Outcomes, before and with this rule</caption>
              <thead>
                <tr>
                  <th scope="col">Outcome</th>
                  <th scope="col" class="num">
                    Before
                  </th>
                  <th scope="col" class="num">
                    After
                  </th>
                  <th scope="col" class="num">
                    Change
                  </th>
                </tr>
              </thead>
              <tbody>
                {OUTCOMES.map((o) => {
                  const before = r.outcomes.before[o] ?? 0;
                  const after = r.outcomes.after[o] ?? 0;
                  return (
                    <tr key={o} data-outcome={o} class={before !== after ? 'changed' : undefined}>
                      <th scope="row">
                        <span class={`badge outcome-${o}`}>{o}</span>
                      </th>
                      <td class="num">{fmtNumber(before)}</td>
                      <td class="num">{fmtNumber(after)}</td>
                      <td class="num">
                        {after - before > 0 ? '+' : ''}
                        {after === before ? '—' : fmtNumber(after - before)}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            {!moved && r.matched > 0 && (
              <p class="muted small pad">
                The matches change no outcome: the policy already decided as severely, or the rule only caps the amount.
              </p>
            )}
          </div>
          <div class="table-wrap">
            <table class="confusion">
              <caption>Labelled decisions (confusion matrix)</caption>
              <thead>
                <tr>
                  <th scope="col">Label</th>
                  <th scope="col" class="num">
                    Matched
                  </th>
                  <th scope="col" class="num">
                    Not matched
                  </th>
                  <th scope="col" class="num">
                    Total
                  </th>
                </tr>
              </thead>
              <tbody>
                <tr data-label="fraud">
                  <th scope="row">
                    <span class="badge label-fraud">fraud</span>
                  </th>
                  <td class="num">{fmtNumber(fraud.matched)}</td>
                  <td class="num">{fmtNumber(fraud.total - fraud.matched)}</td>
                  <td class="num">{fmtNumber(fraud.total)}</td>
                </tr>
                <tr data-label="legit">
                  <th scope="row">
                    <span class="badge label-legit">legit</span>
                  </th>
                  <td class="num">{fmtNumber(legit.matched)}</td>
                  <td class="num">{fmtNumber(legit.total - legit.matched)}</td>
                  <td class="num">{fmtNumber(legit.total)}</td>
                </tr>
              </tbody>
            </table>
            <p class="muted small pad">
              {labelledMatched > 0 ? (
                <>Of the labelled decisions it matches, {share(fraud.matched, labelledMatched)} are fraud.</>
              ) : (
                'It matches no labelled decision: the labels say nothing about it yet.'
              )}
            </p>
          </div>
        </div>
      )}
      {((r.errors ?? 0) > 0 || (r.without_inputs ?? 0) > 0) && (
        <p class="note" role="note">
          {(r.errors ?? 0) > 0 && (
            <>
              On {fmtNumber(r.errors)} decisions the condition failed at run time and counts as no match, as in a live
              score.{' '}
            </>
          )}
          {(r.without_inputs ?? 0) > 0 && (
            <>
              {fmtNumber(r.without_inputs)} decisions were stored before rule inputs were kept: the entity facts and
              amount_ref read as absent on them.
            </>
          )}
        </p>
      )}
      {r.examples.length > 0 && (
        <>
          <h3>
            Examples of matched decisions <small class="muted">(the most recent {r.examples.length})</small>
          </h3>
          <div class="table-wrap">
            <table class="stack examples">
              <caption class="sr-only">Matched decisions with what the condition read</caption>
              <thead>
                <tr>
                  <th scope="col">Decision</th>
                  <th scope="col" class="num">
                    Amount
                  </th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Label</th>
                  <th scope="col">What the condition read</th>
                </tr>
              </thead>
              <tbody>
                {r.examples.map((e) => (
                  <tr key={e.decision_id}>
                    <td data-label="Decision">
                      <Link to={`/decisions/${encodeURIComponent(e.decision_id)}`} class="mono">
                        {e.decision_id}
                      </Link>
                      {e.created_at && <small class="muted when">{fmtDate(e.created_at)}</small>}
                    </td>
                    <td data-label="Amount" class="num nowrap">
                      {e.amount === null || e.amount === undefined ? '—' : fmtMoney(e.amount, e.currency ?? undefined)}
                    </td>
                    <td data-label="Outcome" class="nowrap">
                      {e.before ? <span class={`badge outcome-${e.before}`}>{e.before}</span> : '—'}
                      {e.after && e.after !== e.before && (
                        <>
                          {' '}
                          → <span class={`badge outcome-${e.after}`}>{e.after}</span>
                        </>
                      )}
                    </td>
                    <td data-label="Label">
                      {e.label ? (
                        <span class={`badge label-${e.label}`}>{e.label}</span>
                      ) : (
                        <span class="muted">none</span>
                      )}
                    </td>
                    <td data-label="Read">
                      <Reads reads={e.reads} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}
