/**
 * Charts of the sections' per-minute histograms (`per_minute` rows of section.ts's perMinuteRows),
 * in the shape report-svg.ts draws. Pure.
 */
import type { ChartLine, ChartUnit, ReportChart } from '../report-charts.js';

/** A per-minute row: the minute (ISO 8601) and its counters; null where the minute has no value (a gap in the line). */
export type MinuteCounters = { minute: string } & { [counter: string]: number | string | null };

/** One line of a chart: the row's counter and the legend's label; `scale` turns it into the chart's unit. */
export interface MinuteLine {
  counter: string;
  label: string;
  scale?: number;
}

/** A chart of `rows`, one line per counter; a chart whose lines are all zero says `whenEmpty`. */
export function minuteChart(id: string, title: string, unit: ChartUnit, rows: readonly MinuteCounters[], lines: readonly MinuteLine[], whenEmpty: string): ReportChart {
  const drawn: ChartLine[] = lines.map(({ counter, label, scale = 1 }) => ({
    label,
    source: 'log',
    points: rows.map((row): [number, number | null] => [Date.parse(row.minute), typeof row[counter] === 'number' ? row[counter] * scale : null]),
  }));
  const anything = drawn.some((l) => l.points.some(([, v]) => v !== null && v !== 0));
  return { id, title, unit, lines: anything ? drawn : [], empty_reason: anything ? null : whenEmpty, lines_omitted: 0 };
}
