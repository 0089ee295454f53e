// What the horizontal bar charts (a decision's waterfall, a fit's weights) share: a height that
// gives every signal a row, and a record of how many signal names the axis actually drew.
import type { Plugin, Scale } from 'chart.js';

/**
 * The chart's height for `rows` categories, as a CSS variable: styles.css gives each row more room
 * on a narrow screen, where long names take two lines.
 */
export const rowsStyle = (rows: number) => ({ '--rows': String(rows) });

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

/** Room for a signal's name on a narrow chart before it wraps at its underscores. */
const NARROW_CHART_PX = 560;
const LINE_CHARS = 16;

/** A long snake_case name on two lines, split at the underscore nearest its middle. */
function wrapName(name: string): string[] {
  let cut = -1;
  for (let i = name.indexOf('_'); i >= 0; i = name.indexOf('_', i + 1))
    if (cut < 0 || Math.abs(i - name.length / 2) < Math.abs(cut - name.length / 2)) cut = i;
  return cut < 0 ? [name] : [name.slice(0, cut + 1), name.slice(cut + 1)];
}

/**
 * A y axis that names every category, wrapping long names on a narrow chart: Chart.js caps the
 * axis at a share of the chart's width and would cut a long name off at the left edge.
 */
export const EVERY_LABEL = {
  ticks: {
    autoSkip: false,
    callback(this: Scale, value: string | number): string | string[] {
      const name = this.getLabelForValue(Number(value));
      return this.chart.width < NARROW_CHART_PX && name.length > LINE_CHARS ? wrapName(name) : name;
    },
  },
};

/**
 * Records on the canvas what a chart drew once it has drawn it: the number of categories and each
 * dataset's label and values. The browser tests compare it with the data the page was given.
 */
export const recordDrawn: Plugin = {
  id: 'recordDrawn',
  afterDraw(chart) {
    chart.canvas.dataset.drawn = JSON.stringify({
      labels: chart.data.labels?.length ?? 0,
      datasets: chart.data.datasets.map((d) => ({ label: d.label, data: d.data })),
    });
  },
};

const dayFmt = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });
/** "2026-11-04" → "4 Nov" in the user's locale (a UTC day, as the API names it). */
export const shortDay = (day: string | undefined): string => (day ? dayFmt.format(new Date(`${day}T00:00:00Z`)) : '');
