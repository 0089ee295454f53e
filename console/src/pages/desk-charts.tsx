// The desk's day per day (GET /api/v1/desk/day): outcomes as stacked bars; the reviews resolved by
// their due time or late, with the backlog at each day's end and the median time to resolve; the
// fraud caught and the honest trades declined, with the fraud money passed in one currency. Each
// chart has its table (desk-chart.tsx); the rules that matched most: desk-rules.tsx.
import { useState } from 'preact/hooks';
import type { ChartConfiguration } from 'chart.js';
import { shortDay } from '../charts.ts';
import { fmtMoney, fmtNumber, fmtPercent } from '../ui.tsx';
import type { DeskDay } from './reviews-api.ts';
import { COLOURS, DeskChart, baseOptions, dayAxis, total } from './desk-chart.tsx';

type Day = DeskDay['days'][number];
const OUTCOMES = ['approve', 'review', 'hold', 'decline'] as const;

/** A table of per-day figures, one row a day, newest first. */
function DayTable({
  caption,
  days,
  columns,
}: {
  caption: string;
  days: Day[];
  columns: [string, (d: Day) => string][];
}) {
  return (
    <div class="table-wrap">
      <table class="stack desk-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {columns.map(([name]) => (
              <th key={name} scope="col" class="num">
                {name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {[...days].reverse().map((d) => (
            <tr key={d.day}>
              <th scope="row">{shortDay(d.day)}</th>
              {columns.map(([name, value]) => (
                <td key={name} data-label={name} class="num">
                  {value(d)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function OutcomesChart({ days }: { days: Day[] }) {
  const labels = days.map((d) => d.day);
  const config: ChartConfiguration = {
    type: 'bar',
    data: {
      labels,
      datasets: OUTCOMES.map((o) => ({ label: o, data: days.map((d) => d[o]), backgroundColor: COLOURS[o] })),
    },
    options: baseOptions({
      scales: {
        x: { stacked: true, ...dayAxis(labels) },
        y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'decisions' } },
      },
    }),
  };
  const sums = OUTCOMES.map((o) => `${fmtNumber(total(days.map((d) => d[o])))} ${o}`);
  return (
    <DeskChart
      name="outcomes"
      caption="Outcomes per day"
      summary={`Score decisions per day over ${days.length} days, stacked by outcome: ${sums.join(', ')}.`}
      config={config}
      table={
        <DayTable
          caption="Score decisions per day by outcome"
          days={days}
          columns={OUTCOMES.map((o) => [o, (d: Day) => fmtNumber(d[o])])}
        />
      }
    />
  );
}

export function ReviewsChart({ days }: { days: Day[] }) {
  const labels = days.map((d) => d.day);
  const config = {
    type: 'bar',
    data: {
      labels,
      datasets: [
        {
          label: 'resolved by due time',
          data: days.map((d) => d.reviews_resolved - d.resolved_late),
          backgroundColor: COLOURS.review,
          stack: 'resolved',
        },
        {
          label: 'resolved late',
          data: days.map((d) => d.resolved_late),
          backgroundColor: COLOURS.late,
          stack: 'resolved',
        },
        {
          type: 'line',
          label: 'open at day’s end',
          data: days.map((d) => d.open_at_end),
          borderColor: COLOURS.line,
          backgroundColor: COLOURS.line,
          pointRadius: 2,
        },
        {
          type: 'line',
          label: 'median minutes to resolve',
          data: days.map((d) => d.median_minutes_to_resolve),
          borderColor: COLOURS.minutes,
          backgroundColor: COLOURS.minutes,
          pointStyle: 'triangle',
          pointRadius: 3,
          spanGaps: true,
          yAxisID: 'minutes',
        },
      ],
    },
    options: baseOptions({
      scales: {
        x: { stacked: true, ...dayAxis(labels) },
        y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'reviews' } },
        minutes: {
          // no axis for minutes while no day has a resolution to time
          display: days.some((d) => d.median_minutes_to_resolve !== null),
          position: 'right',
          beginAtZero: true,
          grid: { drawOnChartArea: false },
          title: { display: true, text: 'minutes' },
        },
      },
    }),
  } as ChartConfiguration;
  const resolved = total(days.map((d) => d.reviews_resolved));
  const late = total(days.map((d) => d.resolved_late));
  const last = days[days.length - 1];
  return (
    <DeskChart
      name="reviews"
      caption="Reviews: resolved against their due time, the backlog, time to resolve"
      summary={
        `${fmtNumber(resolved)} reviews resolved over ${days.length} days, ${fmtNumber(late)} of them after their due time` +
        (resolved ? ` (${fmtPercent(late / resolved)})` : '') +
        `; ${fmtNumber(last?.open_at_end ?? 0)} open now.`
      }
      config={config}
      table={
        <DayTable
          caption="Reviews per day"
          days={days}
          columns={[
            ['opened', (d) => fmtNumber(d.reviews_opened)],
            ['resolved', (d) => fmtNumber(d.reviews_resolved)],
            ['late', (d) => fmtNumber(d.resolved_late)],
            ['median min', (d) => fmtNumber(d.median_minutes_to_resolve)],
            ['open at end', (d) => fmtNumber(d.open_at_end)],
          ]}
        />
      }
    />
  );
}

/** The currencies fraud money passed in over the window, the largest sum first. */
function currencies(days: Day[]): string[] {
  const sums = new Map<string, number>();
  for (const d of days) for (const [c, v] of Object.entries(d.fraud_money_passed)) sums.set(c, (sums.get(c) ?? 0) + v);
  return [...sums].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([c]) => c);
}

export function FraudChart({ days }: { days: Day[] }) {
  const all = currencies(days);
  const [chosen, setChosen] = useState<string>();
  const currency = chosen && all.includes(chosen) ? chosen : all[0];
  const labels = days.map((d) => d.day);
  // a point on each day some passed, none on the others
  const passed = days.map((d) => (currency ? (d.fraud_money_passed[currency] ?? null) : null));
  const config = {
    type: 'bar',
    data: {
      labels,
      datasets: [
        { label: 'fraud caught', data: days.map((d) => d.fraud_caught), backgroundColor: COLOURS.approve },
        { label: 'legit declined', data: days.map((d) => d.legit_declined), backgroundColor: COLOURS.hold },
        ...(currency
          ? [
              {
                type: 'line',
                label: `fraud money passed (${currency})`,
                data: passed,
                borderColor: COLOURS.decline,
                backgroundColor: COLOURS.decline,
                showLine: false,
                pointRadius: 4,
                pointStyle: 'rectRot',
                yAxisID: 'money',
              },
            ]
          : []),
      ],
    },
    options: baseOptions({
      scales: {
        x: dayAxis(labels),
        y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'decisions' } },
        ...(currency
          ? {
              money: {
                position: 'right',
                beginAtZero: true,
                grid: { drawOnChartArea: false },
                title: { display: true, text: currency },
              },
            }
          : {}),
      },
    }),
  } as ChartConfiguration;
  const caught = total(days.map((d) => d.fraud_caught));
  const money = all.map((c) => fmtMoney(total(days.map((d) => d.fraud_money_passed[c] ?? 0)), c));
  return (
    <DeskChart
      name="fraud"
      caption="Fraud caught and fraud money passed (from labels)"
      summary={
        `${fmtNumber(caught)} decisions labelled fraud were declined over ${days.length} days, ` +
        `${fmtNumber(total(days.map((d) => d.legit_declined)))} labelled legit were declined; fraud money passed: ` +
        `${money.length ? money.join(', ') : 'none'}.`
      }
      config={config}
      table={
        <DayTable
          caption="Fraud and honest trades per day, by their labels"
          days={days}
          columns={[
            ['fraud caught', (d) => fmtNumber(d.fraud_caught)],
            ['legit declined', (d) => fmtNumber(d.legit_declined)],
            [
              'fraud money passed',
              (d) =>
                Object.entries(d.fraud_money_passed)
                  .map(([c, v]) => fmtMoney(v, c))
                  .join(', ') || '—',
            ],
          ]}
        />
      }
    >
      {all.length > 1 && (
        <label class="inline small">
          Money drawn in
          <select value={currency} onChange={(e) => setChosen(e.currentTarget.value)}>
            {all.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
      )}
    </DeskChart>
  );
}
