// The desk's day on the dashboard (GET /api/v1/desk/day, reviews:read): the window's figures, then
// outcomes per day, the reviews against their due time, fraud caught and fraud money passed, the
// rules that matched most and the analysts. Days are UTC days, as the service counts them.
import { useState } from 'preact/hooks';
import { Empty, ErrorBox, Link, Loading, fmtMoney, fmtNumber, fmtPercent, useLoad } from '../ui.tsx';
import { reviewsApi, type DeskDay } from './reviews-api.ts';
import { FraudChart, OutcomesChart, ReviewsChart } from './desk-charts.tsx';
import { TopRulesChart } from './desk-rules.tsx';
import { AnalystsChart } from './desk-analysts.tsx';
import { total } from './desk-chart.tsx';

const WINDOWS = [7, 30, 90] as const;
/** Two charts a row on a desktop, one on a phone (set through the CSSOM, which the CSP allows). */
const CHART_GRID = { gridTemplateColumns: 'repeat(auto-fill, minmax(min(100%, 32rem), 1fr))' };

function Figures({ d }: { d: DeskDay }) {
  const sum = (pick: (day: DeskDay['days'][number]) => number) => total(d.days.map(pick));
  const money = new Map<string, number>();
  for (const day of d.days)
    for (const [c, v] of Object.entries(day.fraud_money_passed)) money.set(c, (money.get(c) ?? 0) + v);
  const b = d.backlog;
  return (
    <dl class="facts desk-figures">
      <div>
        <dt>Reviews open</dt>
        <dd class="big" data-figure="desk-open">
          {fmtNumber(b.open)}
        </dd>
      </div>
      <div class={b.overdue > 0 ? 'overdue-box' : undefined}>
        <dt>Overdue</dt>
        <dd class={b.overdue > 0 ? 'big risk' : 'big'} data-figure="desk-overdue">
          {fmtNumber(b.overdue)}
        </dd>
      </div>
      <div>
        <dt>Resolved by their due time</dt>
        <dd class="big" data-figure="desk-on-time">
          {fmtPercent(b.resolved_on_time_share)}
        </dd>
        <dd class="muted small">of {fmtNumber(b.resolved)} resolved</dd>
      </div>
      <div>
        <dt>Median time to resolve</dt>
        <dd class="big">
          {b.median_minutes_to_resolve === null ? '—' : `${fmtNumber(b.median_minutes_to_resolve)} min`}
        </dd>
      </div>
      <div>
        <dt>Fraud caught</dt>
        <dd class="big" data-figure="desk-fraud-caught">
          {fmtNumber(sum((x) => x.fraud_caught))}
        </dd>
        <dd class="muted small">{fmtNumber(sum((x) => x.legit_declined))} legit declined</dd>
      </div>
      <div>
        <dt>Fraud money passed</dt>
        <dd data-figure="desk-money-passed">
          {money.size === 0
            ? 'none'
            : [...money]
                .sort((x, y) => y[1] - x[1])
                .map(([c, v]) => (
                  <div key={c} class="nowrap">
                    {fmtMoney(v, c)}
                  </div>
                ))}
        </dd>
      </div>
    </dl>
  );
}

function Charts({ d, days }: { d: DeskDay; days: number }) {
  const decided = total(d.days.map((x) => x.approve + x.review + x.hold + x.decline));
  const labelled = d.days.some(
    (x) => x.fraud_caught + x.legit_declined > 0 || Object.keys(x.fraud_money_passed).length > 0,
  );
  return (
    <div class="cards desk-charts" style={CHART_GRID}>
      {decided === 0 ? (
        <div>
          <Empty>No score decision in the window: outcomes and fraud have nothing to show.</Empty>
        </div>
      ) : (
        <>
          <OutcomesChart days={d.days} />
          {labelled ? (
            <FraudChart days={d.days} />
          ) : (
            <div>
              <Empty>
                No decision of the window was declined and labelled, nor approved and labelled fraud: fraud caught and
                money passed come from labels (API, events and reviews).
              </Empty>
            </div>
          )}
        </>
      )}
      <ReviewsChart days={d.days} />
      {d.top_rules.length === 0 ? (
        <div>
          <Empty>No active rule matched a decision in the window.</Empty>
        </div>
      ) : (
        <TopRulesChart rules={d.top_rules} truncated={d.rules_truncated} />
      )}
      {d.analysts.length === 0 ? (
        <div>
          <Empty>No review was resolved in the window.</Empty>
        </div>
      ) : (
        <AnalystsChart analysts={d.analysts} days={days} />
      )}
    </div>
  );
}

export function DeskDaySection() {
  const [days, setDays] = useState<number>(30);
  const state = useLoad(() => reviewsApi.day(days), [days]);
  return (
    <section aria-labelledby="h-desk-day" class="desk-day">
      <div class="title-row">
        <h2 id="h-desk-day">The desk</h2>
        <label class="inline">
          Window
          <select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {WINDOWS.map((w) => (
              <option key={w} value={w}>
                last {w} days
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="muted small">
        UTC days, today included. Fraud and legit are the decisions' labels (API, events and reviews); a trade passed
        when it was approved, outright or by its review. <Link to="/reviews">Reviews</Link>
      </p>
      <ErrorBox error={state.error} what="Could not read the desk's day" />
      {state.data ? (
        <div aria-busy={state.loading ? 'true' : undefined} data-desk-days={state.data.days.length}>
          <Figures d={state.data} />
          <Charts d={state.data} days={state.data.days.length} />
        </div>
      ) : (
        !state.error && <Loading what="Reading the desk's day" />
      )}
    </section>
  );
}
