// A cost fit's report in the desk's terms (docs/api.md, "Decisions by money"): what it assumed (the
// candidate's economics, the capacity, the reviewers' accuracy) and the base beside the candidate on
// the holdout: fraud stopped, honest trades put off, fraud money let through, reviews, cost.
import './money.css';
import { fmtMoney, fmtNumber, fmtPercent } from '../ui.tsx';
import { capacityWords, fmtProbability, type CostReport, type DeskOutcomes } from '../money.ts';
import { EconomicsWords } from './policy-economics.tsx';
import { FrontierView } from './policy-frontier.tsx';

/**
 * The rows of the side-by-side table; `better` says which way is good, for the change column's
 * colour (reviews are neither: fewer save work, more catch fraud).
 */
const ROWS: ReadonlyArray<{
  key: keyof DeskOutcomes;
  name: string;
  money?: boolean;
  count?: boolean;
  better: 'up' | 'down' | 'either';
}> = [
  { key: 'stopped_fraud', name: 'Fraud stopped', better: 'up' },
  { key: 'legit_friction', name: 'Honest friction', better: 'down' },
  { key: 'legit_declined', name: 'Honest declined', better: 'down' },
  { key: 'fraud_money_passed', name: 'Fraud money passed', better: 'down' },
  { key: 'reviews_per_1k', name: 'Reviews per 1,000', count: true, better: 'either' },
  { key: 'decline_precision', name: 'Decline precision', better: 'up' },
  { key: 'expected_cost', name: 'Expected cost / decision', money: true, better: 'down' },
];

function figure(o: DeskOutcomes, row: (typeof ROWS)[number]): string {
  const x = o[row.key] as number | null;
  if (row.money) return fmtMoney(x, o.currency);
  return row.count ? fmtNumber(x) : fmtPercent(x);
}

/** The candidate's move from the base, in points for a share: "+4.1 pts", "−0.80 USD". */
function change(base: DeskOutcomes, candidate: DeskOutcomes, row: (typeof ROWS)[number]): string {
  const b = base[row.key] as number | null;
  const c = candidate[row.key] as number | null;
  if (b === null || c === null) return '—';
  const d = c - b;
  const sign = d > 0 ? '+' : d < 0 ? '−' : '±';
  const size = row.money ? fmtMoney(Math.abs(d), candidate.currency) : fmtNumber(Math.abs(row.count ? d : d * 100));
  return `${sign}${size}${row.money || row.count ? '' : ' pts'}`;
}

function OutcomesTable({ outcomes }: { outcomes: NonNullable<CostReport['outcomes']> }) {
  const { base, candidate } = outcomes;
  return (
    <div class="table-wrap">
      <table class="stack outcomes">
        <caption>
          The desk's figures on the holdout ({fmtNumber(candidate.decisions)} decisions), after review at the reviewers'
          accuracy
        </caption>
        <thead>
          <tr>
            <th scope="col">Figure</th>
            <th scope="col" class="num">
              Base
            </th>
            <th scope="col" class="num">
              Candidate
            </th>
            <th scope="col" class="num">
              Change
            </th>
          </tr>
        </thead>
        <tbody>
          {ROWS.map((row) => {
            const moved = (candidate[row.key] as number | null) ?? 0;
            const was = (base[row.key] as number | null) ?? 0;
            const good = row.better === 'up' ? moved > was : moved < was;
            const tone = moved === was || row.better === 'either' ? '' : good ? 'safe' : 'risk';
            return (
              <tr key={row.key} data-figure={row.key}>
                <th scope="row">{row.name}</th>
                <td data-label="Base" class="num">
                  {figure(base, row)}
                </td>
                <td data-label="Candidate" class="num">
                  {figure(candidate, row)}
                </td>
                <td data-label="Change" class={`num ${tone}`}>
                  {change(base, candidate, row)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** What the cost fit assumed: the candidate's economics, the capacity it was held to, the reviewers' accuracy. */
function Assumptions({ r }: { r: CostReport }) {
  const cap = r.capacity;
  const acc = r.reviewer_accuracy;
  return (
    <>
      {r.economics && <EconomicsWords e={r.economics} />}
      <p class="muted">
        {cap && (
          <>
            Capacity held to: {capacityWords(cap.reviews_per_day)}
            {cap.decisions_per_day !== null && <> of about {fmtNumber(cap.decisions_per_day)} decisions a day</>}
            {cap.review_share !== null && <> ({fmtProbability(cap.review_share)} of them)</>}.{' '}
          </>
        )}
        {acc && (
          <>
            Reviewer accuracy used: {fmtProbability(acc.used)}
            {acc.measured !== null
              ? ` (measured ${fmtProbability(acc.measured)} on ${fmtNumber(acc.reviews)} reviews later labelled)`
              : ' (stated: no review was later labelled)'}
            .
          </>
        )}
      </p>
    </>
  );
}

/** The report's money section: nothing unless the fit had the cost objective. */
export function MoneyReport({
  r,
  version,
  onDerived,
}: {
  r: CostReport;
  version: string;
  onDerived: (v: string) => void;
}) {
  if (!r.outcomes) return null;
  return (
    <section aria-labelledby="h-money" class="money-report">
      <h3 id="h-money">Decisions by money</h3>
      <p>
        Fitted for the least expected cost: each trade gets the cheapest of approve, review and decline for its amount.
      </p>
      <Assumptions r={r} />
      <OutcomesTable outcomes={r.outcomes} />
      {r.frontier && r.frontier.length > 0 && r.economics && (
        <FrontierView
          key={version}
          frontier={r.frontier}
          economics={r.economics}
          base={r.outcomes.base}
          version={version}
          onDerived={onDerived}
        />
      )}
    </section>
  );
}
