// Each analyst's reviews (GET /api/v1/desk/day, `analysts`): resolved in the window, the median time
// from opening to their verdict, and how often a later label from an event or the API agreed with
// the verdict (decline ↔ fraud, approve ↔ legit; the share the fit measures reviewers by). As a table
// on the review queue, and as bars with the same table on the dashboard.
import type { ChartConfiguration } from 'chart.js';
import { EVERY_LABEL } from '../charts.ts';
import { Empty, ErrorBox, Loading, fmtNumber, fmtPercent, useLoad } from '../ui.tsx';
import { reviewsApi, type DeskDay } from './reviews-api.ts';
import { COLOURS, DeskChart, baseOptions } from './desk-chart.tsx';

type Analyst = DeskDay['analysts'][number];

/** How many of an analyst's verdicts later labels agreed with. */
const agreed = (a: Analyst) => (a.agreement === null ? 0 : Math.round(a.agreement * a.checked));

function AnalystTable({ analysts, caption }: { analysts: Analyst[]; caption: string }) {
  return (
    <div class="table-wrap">
      <table class="stack desk-table analysts">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Analyst</th>
            <th scope="col" class="num">
              Resolved
            </th>
            <th scope="col" class="num">
              Median time
            </th>
            <th scope="col" class="num">
              Checked
            </th>
            <th scope="col" class="num">
              Agreement
            </th>
          </tr>
        </thead>
        <tbody>
          {analysts.map((a) => (
            <tr key={a.id} data-analyst={a.id}>
              <th scope="row">
                {a.name} <span class="badge">{a.type === 'user' ? 'person' : 'client'}</span>
                {a.name !== a.id && <div class="mono small muted trunc">{a.id}</div>}
              </th>
              <td data-label="Resolved" class="num">
                {fmtNumber(a.resolved)}
              </td>
              <td data-label="Median time" class="num">
                {a.median_minutes === null ? '—' : `${fmtNumber(a.median_minutes)} min`}
              </td>
              <td data-label="Checked" class="num">
                {fmtNumber(a.checked)}
              </td>
              <td data-label="Agreement" class="num" data-agreement={a.agreement ?? ''}>
                {a.agreement === null ? <span class="muted">no label yet</span> : fmtPercent(a.agreement)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AnalystsChart({ analysts, days }: { analysts: Analyst[]; days: number }) {
  const config: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: analysts.map((a) => a.name),
      datasets: [
        { label: 'resolved', data: analysts.map((a) => a.resolved), backgroundColor: COLOURS.review },
        { label: 'checked by later labels', data: analysts.map((a) => a.checked), backgroundColor: COLOURS.late },
        { label: 'agreed', data: analysts.map(agreed), backgroundColor: COLOURS.approve },
      ],
    },
    options: baseOptions({
      indexAxis: 'y',
      scales: { x: { beginAtZero: true, ticks: { precision: 0 } }, y: EVERY_LABEL },
    }),
  };
  const summary = analysts
    .map(
      (a) =>
        `${a.name} resolved ${fmtNumber(a.resolved)}` +
        (a.agreement === null ? '' : `, ${fmtPercent(a.agreement)} agreed with ${fmtNumber(a.checked)} later labels`),
    )
    .join('; ');
  return (
    <DeskChart
      name="analysts"
      caption="Reviews per analyst, and agreement with later labels"
      summary={`Over ${days} days: ${summary}.`}
      config={config}
      rows={Math.max(2, analysts.length * 2)}
      table={
        <AnalystTable
          analysts={analysts}
          caption={`Analysts over the last ${days} days; checked: verdicts a later event or API label covers`}
        />
      }
    />
  );
}

/** The review queue's analyst figures: the last 30 days' resolutions per analyst. */
export function AnalystFigures() {
  const state = useLoad(() => reviewsApi.day(30), []);
  return (
    <section aria-labelledby="h-analysts" class="desk-analysts">
      <h2 id="h-analysts">Analysts, last 30 days</h2>
      {state.error ? (
        <ErrorBox error={state.error} what="Could not read the analysts' figures" />
      ) : !state.data ? (
        <Loading what="Reading the analysts' figures" />
      ) : state.data.analysts.length === 0 ? (
        <Empty>No review was resolved in the last 30 days.</Empty>
      ) : (
        <AnalystTable
          analysts={state.data.analysts}
          caption="Reviews resolved per analyst; checked: their verdicts a later event or API label covers, and agreement: the share of those it agreed with"
        />
      )}
    </section>
  );
}
