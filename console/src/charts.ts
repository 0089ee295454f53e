// What the horizontal bar charts (a decision's waterfall, a fit's weights) share: a height that
// gives every signal a row, and a record of how many signal names the axis actually drew.
import type { Plugin } from 'chart.js';

/** Room for one signal's name and its bar(s). */
const ROW_PX = 26;

/** The chart's height in CSS pixels for `rows` categories, with room for the axis and legend. */
export const heightFor = (rows: number): string => `${Math.max(200, 80 + rows * ROW_PX)}px`;

/**
 * Records on the canvas how many category names the y axis drew (Chart.js drops crowded ticks
 * unless told not to): the browser tests compare it with the number of signals.
 */
export const countDrawnLabels: Plugin<'bar'> = {
  id: 'countDrawnLabels',
  afterLayout(chart) {
    chart.canvas.dataset.drawnLabels = String(chart.scales.y?.ticks.length ?? 0);
  },
};

/** Every category named: never skip a tick. */
export const EVERY_LABEL = { ticks: { autoSkip: false } } as const;
