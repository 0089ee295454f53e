// The rules that matched most in the desk's window (GET /api/v1/desk/day, `top_rules`, counted by
// the rule statistics): horizontal bars, every rule's name on the axis, and the same as a table.
import type { ChartConfiguration } from 'chart.js';
import { EVERY_LABEL } from '../charts.ts';
import { fmtNumber } from '../ui.tsx';
import type { DeskDay } from './reviews-api.ts';
import { COLOURS, DeskChart, baseOptions } from './desk-chart.tsx';
import { Breakable } from './rules-parts.tsx';

export function TopRulesChart({ rules, truncated }: { rules: DeskDay['top_rules']; truncated: boolean }) {
  const config: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: rules.map((r) => r.name),
      datasets: [{ label: 'decisions matched', data: rules.map((r) => r.hits), backgroundColor: COLOURS.review }],
    },
    options: baseOptions({
      indexAxis: 'y',
      scales: { x: { beginAtZero: true, ticks: { precision: 0 } }, y: EVERY_LABEL },
      plugins: { legend: { display: false } },
    }),
  };
  const list = rules.map((r) => `${r.name} ${fmtNumber(r.hits)}`).join(', ');
  return (
    <DeskChart
      name="rules"
      caption={`The rules that matched most${truncated ? ' (the newest decisions only: the window held too many)' : ''}`}
      summary={`Decisions matched per rule, most first: ${list}.`}
      config={config}
      rows={rules.length}
      table={
        <div class="table-wrap">
          <table class="stack desk-table">
            <caption>Decisions matched per rule</caption>
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col" class="num">
                  Matched
                </th>
              </tr>
            </thead>
            <tbody>
              {rules.map((r) => (
                <tr key={r.rule_id}>
                  <th scope="row" class="mono">
                    <Breakable name={r.name} />
                  </th>
                  <td data-label="Matched" class="num">
                    {fmtNumber(r.hits)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      }
    />
  );
}
