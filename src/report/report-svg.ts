/**
 * One report chart as an inline SVG string: time on x, the chart's unit on y, one coloured line
 * (with a dot per point) per series, alert periods shaded behind. Callers show an empty chart's
 * reason instead of calling this. Scales, ticks, tick labels and
 * paths come from d3-scale and d3-shape; this module only lays them out. Pure.
 */
import { scaleLinear, scaleUtc } from 'd3-scale';
import { line } from 'd3-shape';
import type { ChartUnit, ReportChart } from './report-charts.js';

export interface AlertPeriod {
  alertId: number;
  fromMs: number;
  toMs: number;
}

const WIDTH = 760;
const HEIGHT = 220;
// Right: room for half of the last time label, which is centred on its tick at the edge.
const MARGIN = { top: 12, right: 32, bottom: 28, left: 64 };
/** An alert label's room: "#123" at the chart's font size, and a line of them. */
const LABEL_WIDTH = 32;
const LABEL_LINE = 13;

/** Tableau 10: distinguishable, and readable when printed in grey. */
export const LINE_COLOURS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

export function renderChartSvg(chart: ReportChart, window: { fromMs: number; toMs: number }, alerts: readonly AlertPeriod[]): string {
  const x = scaleUtc().domain([window.fromMs, window.toMs]).range([MARGIN.left, WIDTH - MARGIN.right]);
  const values = chart.lines.flatMap((l) => l.points.map(([, v]) => v)).filter((v): v is number => v !== null);
  const y = scaleLinear().domain([0, Math.max(1, ...values)]).nice().range([HEIGHT - MARGIN.bottom, MARGIN.top]);
  const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeXml(chart.title)}">`];

  // Labels of periods that start close together go one under the other, not over each other.
  const labelled: number[] = [];
  for (const a of alerts) {
    const from = Math.max(a.fromMs, window.fromMs);
    const to = Math.min(a.toMs, window.toMs);
    if (to < from) continue;
    const x0 = x(from);
    const row = labelled.filter((other) => Math.abs(other - x0) < LABEL_WIDTH).length;
    labelled.push(x0);
    out.push(`<a href="#alert-${a.alertId}"><rect class="alert-period" x="${fmt(x0)}" y="${MARGIN.top}" width="${fmt(Math.max(2, x(to) - x0))}" height="${HEIGHT - MARGIN.top - MARGIN.bottom}"><title>alert #${a.alertId}</title></rect>`,
      `<text class="alert-label" x="${fmt(x0 + 3)}" y="${MARGIN.top + 11 + row * LABEL_LINE}">#${a.alertId}</text></a>`);
  }

  const formatY = y.tickFormat(5, unitFormat(chart.unit));
  for (const tick of y.ticks(5)) {
    // d3's SI format writes the zero tick as "0k" when its neighbours are thousands.
    const label = tick === 0 ? '0' : formatY(tick);
    out.push(`<line class="grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${fmt(y(tick))}" y2="${fmt(y(tick))}"/>`,
      `<text class="tick" x="${MARGIN.left - 6}" y="${fmt(y(tick) + 4)}" text-anchor="end">${escapeXml(label)}${unitSuffix(chart.unit)}</text>`);
  }
  const formatX = x.tickFormat(7, timeTickFormat(window.toMs - window.fromMs));
  for (const tick of x.ticks(7)) {
    out.push(`<line class="axis" x1="${fmt(x(tick))}" x2="${fmt(x(tick))}" y1="${HEIGHT - MARGIN.bottom}" y2="${HEIGHT - MARGIN.bottom + 4}"/>`,
      `<text class="tick" x="${fmt(x(tick))}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="middle">${escapeXml(formatX(tick))}</text>`);
  }
  out.push(`<line class="axis" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${HEIGHT - MARGIN.bottom}" y2="${HEIGHT - MARGIN.bottom}"/>`);

  const path = line<[number, number | null]>().defined(([, v]) => v !== null).x(([t]) => x(t)).y(([, v]) => y(v ?? 0));
  chart.lines.forEach((l, i) => {
    const colour = LINE_COLOURS[i % LINE_COLOURS.length]!;
    out.push(`<g class="line"><title>${escapeXml(l.label)}</title><path d="${path(l.points) ?? ''}" fill="none" stroke="${colour}" stroke-width="1.5"/>`);
    for (const [t, v] of l.points) {
      if (v !== null) out.push(`<circle cx="${fmt(x(t))}" cy="${fmt(y(v))}" r="2.5" fill="${colour}"/>`);
    }
    out.push('</g>');
  });
  out.push('</svg>');
  return out.join('');
}

/**
 * Operators read a 24-hour UTC clock, which d3's default does not write (13:05 as "01:05"): the
 * time of day, with seconds over a few minutes and with the date over more than a day.
 */
function timeTickFormat(spanMs: number): string {
  if (spanMs <= 5 * 60_000) return '%H:%M:%S';
  return spanMs < 86_400_000 ? '%H:%M' : '%b %d %H:%M';
}

/** d3-format specifiers: SI prefixes for counts and bytes, plain seconds and milliseconds. */
function unitFormat(unit: ChartUnit): string {
  // ',' alone lets d3 pick a precision from the step, which writes 40 as "4e+1".
  return unit === 'seconds' || unit === 'milliseconds' ? ',~f' : '~s';
}

function unitSuffix(unit: ChartUnit): string {
  return unit === 'bytes' ? 'B' : unit === 'seconds' ? ' s' : unit === 'milliseconds' ? ' ms' : '';
}

function fmt(n: number): string {
  return n.toFixed(1);
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
