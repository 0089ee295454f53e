// The frontier chart's pieces (docs/api.md, "Decisions by money"): the points as Chart.js plots
// them, grouped into one line per capacity, their names, and the labels drawn beside them.
import type { Plugin } from 'chart.js';
import { capacityWords, declineShort, declineWords, type DeskOutcomes, type FrontierPoint } from '../money.ts';

export type XY = { x: number; y: number };
export const xy = (o: DeskOutcomes): XY | null =>
  o.legit_friction === null || o.stopped_fraud === null
    ? null
    : { x: o.legit_friction * 100, y: o.stopped_fraud * 100 };

/** The frontier's points by capacity (fewest reviews first), each line in order of decline cost. */
export function series(frontier: readonly FrontierPoint[]): Array<{ perDay: number | null; points: number[] }> {
  const groups = new Map<number | null, number[]>();
  frontier.forEach((p, i) => groups.set(p.reviews_per_day, [...(groups.get(p.reviews_per_day) ?? []), i]));
  const order = (a: number | null) => (a === null ? Infinity : a);
  return [...groups.entries()]
    .sort(([a], [b]) => order(a) - order(b))
    .map(([perDay, points]) => ({
      perDay,
      points: points.sort(
        (a, b) =>
          frontier[a]!.decline_cost.fixed - frontier[b]!.decline_cost.fixed ||
          frontier[a]!.decline_cost.rate - frontier[b]!.decline_cost.rate,
      ),
    }));
}

export const pointName = (p: FrontierPoint, currency: string) =>
  `decline cost ${declineWords(p.decline_cost, currency)}, ${capacityWords(p.reviews_per_day)}`;

/** Below this width the labels of every line would overlap: only the candidate's line is labelled. */
const NARROW_CHART_PX = 560;

/**
 * Each line's points named by their decline cost beside them (on a narrow chart, only the line of
 * `named`); and on the canvas where each point was drawn (CSS pixels, frontier index first), which
 * the browser tests click.
 */
export function labelPoints(indexes: number[][], frontier: readonly FrontierPoint[], named: number): Plugin<'scatter'> {
  return {
    id: 'labelPoints',
    afterDatasetsDraw(chart) {
      const { ctx, chartArea } = chart;
      const drawn: Array<[number, number, number]> = [];
      const every = chart.width >= NARROW_CHART_PX;
      ctx.save();
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = '#3d4754';
      ctx.textBaseline = 'bottom';
      indexes.forEach((line, d) => {
        const meta = chart.getDatasetMeta(d);
        if (meta.hidden) return;
        meta.data.forEach((el, k) => {
          const i = line[k]!;
          drawn.push([i, Math.round(el.x), Math.round(el.y)]);
          if (!every && d !== named) return;
          const text = declineShort(frontier[i]!.decline_cost);
          // a label that would run past the plot's right edge goes to the left of its point
          const left = el.x + 5 + ctx.measureText(text).width > chartArea.right;
          ctx.textAlign = left ? 'right' : 'left';
          ctx.fillText(text, left ? el.x - 5 : el.x + 5, el.y - 4);
        });
      });
      ctx.restore();
      chart.canvas.dataset.points = JSON.stringify(drawn);
    },
  };
}

export const pointTitle = (p: FrontierPoint, currency: string, own: boolean) =>
  `${own ? 'This candidate: ' : ''}decline cost ${declineWords(p.decline_cost, currency)}; ${capacityWords(p.reviews_per_day)}`;
